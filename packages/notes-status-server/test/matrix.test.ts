import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { packageVersion } from "@mcpforge/toolkit";
import { checkCombination, MATRIX } from "@mcpforge/toolkit/testing";
import { afterAll, describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));
const version = packageVersion(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), "notes-matrix-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// notes-status has no gated tool, so its combinations list, call and fail but flip no gate.
describe("the notes-status bin in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async ({ client, transport }) => {
      await checkCombination(
        {
          spawn: {
            command: process.execPath,
            args: [CLI, "--db", join(dir, `${client}-${transport}.db`), "--no-scheduler"],
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
        },
        client,
        transport,
      );
    },
    60_000,
  );
});
