/**
 * The kit's toolsets and read-only mode on the built notes-status bin: its groups (Notes, Queue,
 * Tags), `--tools list` before any store is opened, and a read-only run over stdio in both eras.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectStdio } from "@mcpforge/toolkit/testing";
import { afterAll, describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "notes-toolsets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { NOTES_STATUS_OUTBOX: join(dir, "outbox.jsonl"), XDG_DATA_HOME: join(dir, "xdg") };

const READ_ONLY = [
  "get_next_available_slots",
  "get_note",
  "get_queue",
  "get_queue_slots",
  "list_notes",
  "list_tags",
];

async function names(args: string[], era: "legacy" | "modern") {
  const conn = await connectStdio(
    {
      command: process.execPath,
      args: [CLI, "--db", join(dir, `${era}.db`), "--no-scheduler", ...args],
      env,
    },
    { era },
  );
  try {
    const { tools } = await conn.client.listTools();
    let refused: string | undefined;
    await conn.client.callTool({ name: "create_note", arguments: { content: "x" } }).catch((err: Error) => {
      refused = err.message;
    });
    return { names: tools.map((t) => t.name).sort(), tools, refused };
  } finally {
    await conn.close();
  }
}

describe("notes-status toolsets", () => {
  it("--tools list prints notes, queue and tags without opening a store", () => {
    const db = join(dir, "never.db");
    const r = spawnSync(process.execPath, [CLI, "--db", db, "--tools", "list"], {
      encoding: "utf8",
      env: { ...process.env, ...env },
      timeout: 20_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("\nnotes  (Notes)\n  create_note\n");
    expect(r.stdout).toContain("\nqueue  (Queue)\n");
    expect(r.stdout).toContain("\ntags  (Tags)\n  list_tags                 read-only\n");
    expect(existsSync(db)).toBe(false);
  });

  it.each(["legacy", "modern"] as const)(
    "--read-only serves only the read-only tools (%s era)",
    async (era) => {
      const { names: listed, tools, refused } = await names(["--read-only"], era);
      expect(listed).toEqual(READ_ONLY);
      for (const t of tools) expect(t.annotations?.readOnlyHint).toBe(true);
      expect(refused).toContain("Tool create_note not found");
    },
  );

  it("--tools tags,QUEUE serves those two groups", async () => {
    expect((await names(["--tools", "tags,QUEUE"], "legacy")).names).toEqual([
      "get_next_available_slots",
      "get_queue",
      "get_queue_slots",
      "list_tags",
      "schedule_notes",
      "set_queue_slots",
      "unschedule_note",
    ]);
  });

  it("refuses an unknown group and --token at start", () => {
    for (const [args, message] of [
      [["--tools", "drafts"], 'no tool group "drafts"; the groups are notes, queue, tags'],
      [["--http", "127.0.0.1:0", "--token", "t"], "--token is refused"],
    ] as const) {
      const r = spawnSync(
        process.execPath,
        [CLI, "--db", join(dir, "refused.db"), "--no-scheduler", ...args],
        {
          encoding: "utf8",
          env: { ...process.env, ...env },
          input: "",
          timeout: 20_000,
        },
      );
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(message);
    }
  });
});
