/**
 * The kit's toolsets and read-only mode on the built dexi-mcp bin: its groups (Read, Write, Review),
 * `--tools list` before any database is opened, and a read-only run over stdio in both eras.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectStdio } from "@mcpforge/toolkit/testing";
import { afterAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/bin/dexi-mcp.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "dexi-toolsets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { DEXI_EMBEDDINGS: "hash", XDG_DATA_HOME: join(dir, "xdg"), MCP_HTTP_TOKEN: "" };

const READ_ONLY = [
  "find_similar",
  "get_due_reviews",
  "get_note",
  "list_folders",
  "list_notes",
  "list_tags",
  "search_notes",
  "semantic_search",
];

async function listed(args: string[], era: "legacy" | "modern", extra: Record<string, string> = {}) {
  const conn = await connectStdio(
    {
      command: process.execPath,
      args: [BIN, "--db", join(dir, `${era}.db`), ...args],
      env: { ...env, ...extra },
    },
    { era },
  );
  try {
    const { tools } = await conn.client.listTools();
    let refused: string | undefined;
    await conn.client.callTool({ name: "create_note", arguments: { text: "x" } }).catch((err: Error) => {
      refused = err.message;
    });
    return { names: tools.map((t) => t.name).sort(), tools, refused };
  } finally {
    await conn.close();
  }
}

describe("dexi-mcp toolsets", () => {
  it("--tools list prints read, review and write without opening a database", () => {
    const db = join(dir, "never.db");
    const r = spawnSync(process.execPath, [BIN, "--db", db, "--tools", "list"], {
      encoding: "utf8",
      env: { ...process.env, ...env },
      timeout: 20_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("\nread  (Read)\n  find_similar     read-only\n");
    expect(r.stdout).toContain("\nreview  (Review)\n  get_due_reviews  read-only\n  grade_review\n");
    expect(r.stdout).toContain("\nwrite  (Write)\n  create_note\n  delete_note\n  update_note\n");
    expect(existsSync(db)).toBe(false);
  });

  it.each(["legacy", "modern"] as const)(
    "--read-only serves only the read-only tools (%s era)",
    async (era) => {
      const { names, tools, refused } = await listed(["--read-only"], era);
      expect(names).toEqual(READ_ONLY);
      for (const t of tools) expect(t.annotations?.readOnlyHint).toBe(true);
      expect(refused).toContain("Tool create_note not found");
    },
  );

  it("MCP_TOOLS=write,Review serves those two groups", async () => {
    expect((await listed([], "legacy", { MCP_TOOLS: "write,Review" })).names).toEqual([
      "create_note",
      "delete_note",
      "get_due_reviews",
      "grade_review",
      "update_note",
    ]);
  });

  it("refuses an unknown group and --token at start", () => {
    for (const [args, message] of [
      [["--tools", "tags"], 'no tool group "tags"; the groups are read, review, write'],
      [["--http", "127.0.0.1:0", "--token", "t"], "--token is refused"],
    ] as const) {
      const r = spawnSync(process.execPath, [BIN, "--db", join(dir, "refused.db"), ...args], {
        encoding: "utf8",
        env: { ...process.env, ...env },
        input: "",
        timeout: 20_000,
      });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(message);
    }
  });
});
