/**
 * Toolsets, the read-only mode and the token rules of the kit on chainmail's two entries, the
 * chainmail-mcp bin and `chainmail mcp`. Without a daemon the server still lists its ungated tools,
 * which is all the listing tests need; the gate within a chosen set runs against a real daemon.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type MailEnv, startMailEnv } from "@mcpforge/chainmail/testing";
import { packageVersion } from "@mcpforge/toolkit";
import { checkCombination, connectHttp, connectStdio, startHttpBin } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/chainmail-mcp.js", import.meta.url));
/** chainmail's own bin, whose `mcp` command runs this package's main. */
const CHAINMAIL = fileURLToPath(new URL("../../chainmail/bin/chainmail.js", import.meta.url));
const home = mkdtempSync(join(tmpdir(), "cm-mcp-toolsets-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const READ_ONLY = [
  "cache_status",
  "download_attachment",
  "get_item",
  "get_message",
  "get_thread",
  "list_accounts",
  "list_folders",
  "list_items",
  "save_raw_message",
  "search",
  "test_account",
];
const SENDING = [
  "create_draft",
  "delete_draft",
  "forward",
  "reply",
  "send_draft",
  "send_email",
  "update_draft",
];

/** chainmail-mcp's args (home without a daemon) as run by its own bin or by `chainmail mcp`. */
const entries = {
  "chainmail-mcp": (args: string[]) => [BIN, "--home", home, ...args],
  "chainmail mcp": (args: string[]) => [CHAINMAIL, "--home", home, "mcp", ...args],
};

const run = (argv: string[]) =>
  spawnSync(process.execPath, argv, {
    encoding: "utf8",
    env: { ...process.env, MCP_HTTP_TOKEN: "" },
    input: "",
    timeout: 20_000,
  });

async function listed(argv: string[], era: "legacy" | "modern" = "legacy", env: Record<string, string> = {}) {
  const conn = await connectStdio({ command: process.execPath, args: argv, env }, { era });
  try {
    const { tools } = await conn.client.listTools();
    let refused: string | undefined;
    await conn.client.callTool({ name: "send_email", arguments: {} }).catch((err: Error) => {
      refused = err.message;
    });
    return { tools, refused };
  } finally {
    await conn.close();
  }
}

describe.each(Object.entries(entries))("%s", (_entry, argv) => {
  it("--tools list prints the seven groups with their tools and exits 0", () => {
    const r = run(argv(["--tools", "list"]));
    expect(r.status).toBe(0);
    for (const group of [
      "accounts-and-folders  (Accounts and folders)",
      "reading  (Reading)",
      "files  (Files)",
      "organizing  (Organizing)",
      "events-and-the-cache  (Events and the cache)",
      "work-items  (Work items)",
      "sending-and-drafts  (Sending and drafts)",
    ])
      expect(r.stdout).toContain(`\n${group}\n`);
    expect(r.stdout).toMatch(/\n {2}expunge +gated/);
  });

  it("--read-only lists only the read-only tools; a call to another is an unknown tool", async () => {
    for (const era of ["legacy", "modern"] as const) {
      const { tools, refused } = await listed(argv(["--read-only"]), era);
      expect(tools.map((t) => t.name).sort()).toEqual(READ_ONLY);
      for (const t of tools) expect(t.annotations?.readOnlyHint).toBe(true);
      expect(refused).toContain("Tool send_email not found");
    }
  });

  it("--tools with a declared group name serves that group only", async () => {
    const { tools } = await listed(argv(["--tools", "Sending and drafts"]));
    expect(tools.map((t) => t.name).sort()).toEqual(SENDING);
  });

  it("refuses an unknown group, and --token, at start", () => {
    const bad = run(argv(["--tools", "reading,mail"]));
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain(
      'no tool group "mail"; the groups are accounts-and-folders, events-and-the-cache, files, organizing, reading, sending-and-drafts, work-items',
    );
    const token = run(argv(["--http", "127.0.0.1:0", "--token", "s3cret"]));
    expect(token.status).not.toBe(0);
    expect(token.stderr).toMatch(/--token is refused.*MCP_HTTP_TOKEN.*--token-file/);
    expect(token.stderr).not.toContain("listening on");
  });
});

describe("the gates within a chosen set", () => {
  it("--list-gated-tools lists the gated tools of the chosen groups only, and none read-only", async () => {
    const organizing = await listed(
      entries["chainmail-mcp"](["--list-gated-tools", "--tools", "organizing"]),
    );
    expect(organizing.tools.map((t) => t.name).sort()).toEqual([
      "archive",
      "copy",
      "expunge",
      "move",
      "set_flags",
      "set_labels",
      "trash",
    ]);
    const readOnly = await listed(entries["chainmail-mcp"](["--list-gated-tools"]), "legacy", {
      MCP_TOOLS: "organizing,accounts-and-folders",
      MCP_READ_ONLY: "1",
    });
    expect(readOnly.tools.map((t) => t.name).sort()).toEqual([
      "list_accounts",
      "list_folders",
      "test_account",
    ]);
  });

  describe("against a real daemon", () => {
    let env: MailEnv;
    beforeAll(async () => {
      env = await startMailEnv({});
    });
    afterAll(async () => {
      await env?.stop();
    });

    it("expunge in --tools organizing is listed only while the policy allows it", async () => {
      await checkCombination(
        { client: "sdk-v1", transport: "stdio" },
        {
          spawn: {
            command: process.execPath,
            args: [BIN, "--home", env.dir, "--tools", "organizing,accounts-and-folders"],
            env: { CHAINMAIL_MCP_GATE_MAX_AGE_MS: "0" },
          },
          serverInfo: { name: "chainmail", version: packageVersion(import.meta.url) },
          listed: ["list_accounts", "move"],
          unlisted: ["search", "get_message", "send_email", "read_events"],
          ok: {
            tool: "list_accounts",
            args: {},
            check: (s) => expect((s["accounts"] as unknown[]).length).toBeGreaterThan(0),
          },
          error: { tool: "test_account", args: { account: "nobody" }, reason: "NOT_FOUND" },
          gate: {
            tool: "expunge",
            open: async () => {
              env.writeConfig({ work: { allow_expunge: true } });
              await env.confirmPolicy();
            },
            close: () => env.writeConfig({}),
          },
        },
      );
    }, 90_000);
  });
});

describe("chainmail mcp --http with --token-file", () => {
  it("answers only the file's token", async () => {
    const tokenFile = join(home, "token");
    writeFileSync(tokenFile, "cm-file-token\n");
    chmodSync(tokenFile, 0o600);
    const { url, child } = await startHttpBin(
      {
        command: process.execPath,
        args: entries["chainmail mcp"](["--read-only", "--token-file", tokenFile]),
      },
      "not-this-one",
    );
    try {
      const denied = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer not-this-one" },
        body: "{}",
      });
      expect(denied.status).toBe(401);
      const { client, close } = await connectHttp(url, "cm-file-token", { era: "modern" });
      try {
        expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_ONLY);
      } finally {
        await close();
      }
    } finally {
      child.kill();
    }
  });
});
