import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { packageVersion } from "@mcpforge/toolkit";
import { checkCombination, MATRIX } from "@mcpforge/toolkit/testing";
import { describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));
const version = packageVersion(import.meta.url);

// notes-status has no gated tool, so its combinations list, call and fail but flip no gate.
describe("the notes-status bin in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, (dir) => ({
        spawn: {
          command: process.execPath,
          args: [CLI, "--db", join(dir, `data.db`), "--no-scheduler"],
          env: { NOTES_STATUS_OUTBOX: join(dir, "outbox.jsonl"), XDG_DATA_HOME: join(dir, "xdg") },
        },
        serverInfo: { name: "notes-status-mcp", version },
        listed: ["create_note", "list_notes", "get_note", "schedule_notes"],
        ok: {
          tool: "create_note",
          args: { content: "from the matrix", status: "draft" },
          check: (s) => expect((s["note"] as { content: string }).content).toBe("from the matrix"),
        },
        error: { tool: "get_note", args: { id: "nope" }, reason: "NOT_FOUND" },
      }));
    },
    60_000,
  );
});

// A restricted run in every client and transport: the bin's own --read-only parsing in both eras.
describe("the notes-status bin with --read-only in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, (dir) => ({
        spawn: {
          command: process.execPath,
          args: [CLI, "--db", join(dir, `data.db`), "--no-scheduler", "--read-only"],
          env: { NOTES_STATUS_OUTBOX: join(dir, "outbox.jsonl"), XDG_DATA_HOME: join(dir, "xdg") },
        },
        serverInfo: { name: "notes-status-mcp", version },
        listed: ["list_notes", "get_note"],
        unlisted: ["create_note", "schedule_notes", "delete_note"],
        ok: {
          tool: "list_notes",
          args: {},
          check: (s) => expect(s["notes"]).toEqual([]),
        },
        error: { tool: "get_note", args: { id: "nope" }, reason: "NOT_FOUND" },
      }));
    },
    60_000,
  );
});
