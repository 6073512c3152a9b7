/**
 * The built bin over stdio with a real daemon: chainmail-mcp itself, and `chainmail mcp`, which loads
 * this package with a dynamic import. Build first (npm run build here, and in packages/chainmail).
 * CHAINMAIL_CLI may point at another build of chainmail's bin (default: its committed bin/chainmail.js).
 */
import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { connectStdio } from "@mcpforge/toolkit/testing";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCorpus, type MailEnv, startMailEnv } from "@mcpforge/chainmail/testing";

const BIN = fileURLToPath(new URL("../bin/chainmail-mcp.js", import.meta.url));
const CHAINMAIL_CLI =
  process.env["CHAINMAIL_CLI"] ?? fileURLToPath(new URL("../../chainmail/bin/chainmail.js", import.meta.url));
let env: MailEnv;

beforeAll(async () => {
  env = await startMailEnv({ work: { allow_expunge: true } });
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    generateCorpus({ hugeBytes: 0, threads: 1, fillers: 1 }).map((c) => ({ raw: c.raw })),
  );
});
afterAll(async () => {
  await env?.stop();
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function session(command: string[]) {
  const conn = await connectStdio({ command: process.execPath, args: command });
  try {
    const { tools } = await conn.client.listTools();
    const names = tools.map((t) => t.name);
    const res = (await conn.client.callTool({
      name: "search",
      arguments: { query: "subject:project", accounts: ["work"] },
    })) as CallToolResult;
    return { names, res, server: conn.client.getServerVersion() };
  } finally {
    await conn.close();
  }
}

// Spawning node with the SDK takes seconds on a busy two-core machine.
const SLOW = 90_000;

describe("the bin over stdio", () => {
  it(
    "chainmail-mcp --home serves the tools the policy allows and answers from the daemon",
    async () => {
      const { names, res, server } = await session([BIN, "--home", env.dir]);
      expect(server?.name).toBe("chainmail");
      expect(names).toHaveLength(37);
      expect(names).toContain("expunge");
      expect(names).not.toContain("delete_folder");
      expect(res.isError).toBeFalsy();
      const sc = res.structuredContent as { count: number; rows: Array<{ subject: unknown; ref: unknown }> };
      expect(sc.count).toBe(3);
      expect(sc.rows[0]!.subject).toMatchObject({ untrusted: expect.stringContaining("Project thread 1") });
      expect(typeof sc.rows[0]!.ref).toBe("string");
      const { rows } = await env.client.readAudit({ action: "search" });
      expect(rows.some((r) => r.client === "mcp")).toBe(true);
    },
    SLOW,
  );

  it(
    "takes CHAINMAIL_HOME like --home",
    async () => {
      const conn = await connectStdio({
        command: process.execPath,
        args: [BIN],
        env: { CHAINMAIL_HOME: env.dir },
      });
      try {
        const res = (await conn.client.callTool({ name: "list_accounts", arguments: {} })) as CallToolResult;
        expect((res.structuredContent as { accounts: unknown[] }).accounts).toHaveLength(2);
      } finally {
        await conn.close();
      }
    },
    SLOW,
  );

  it(
    "chainmail --home DIR mcp runs the same server",
    async () => {
      const { names, res } = await session([CHAINMAIL_CLI, "--home", env.dir, "mcp"]);
      expect(names).toHaveLength(37);
      expect((res.structuredContent as { count: number }).count).toBe(3);
    },
    SLOW,
  );

  it(
    "exits with 0 when its stdio client hangs up, although it holds a daemon connection",
    async () => {
      const child = spawn(process.execPath, [BIN, "--home", env.dir], { stdio: ["pipe", "pipe", "pipe"] });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      const answered = new Promise<string>((resolve) =>
        child.stdout.once("data", (d: Buffer) => resolve(d.toString())),
      );
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } })}\n`,
      );
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_accounts", arguments: {} } })}\n`,
      );
      expect(await answered).toContain('"id":1');
      // Wait until the list_accounts call has gone through the daemon socket, then hang up.
      await new Promise<void>((resolve) => {
        let seen = "";
        child.stdout.on("data", (d: Buffer) => {
          seen += d.toString();
          if (seen.includes('"id":2')) resolve();
        });
      });
      child.stdin.end();
      expect(await exited).toBe(0);
    },
    SLOW,
  );

  it(
    "prints help and refuses unknown flags with exit code 2",
    async () => {
      const help = await run([BIN, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("--home DIR");
      const bad = await run([BIN, "--nope"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("INVALID_ARGUMENT");
      const viaChainmail = await run([CHAINMAIL_CLI, "mcp", "--nope"]);
      expect(viaChainmail.code).toBe(2);
    },
    SLOW,
  );
});

/** tools/list as the server writes it: the JSON-RPC result of a raw exchange over stdio, undecoded by any client. */
async function rawToolsList(
  args: string[],
): Promise<{ bytes: number; tools: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let seen = "";
      child.stdout.on("data", (d: Buffer) => {
        seen += d.toString();
        const found = seen.split("\n").find((l) => l.startsWith('{"') && l.includes('"id":2'));
        if (found) resolve(found);
      });
      child.once("exit", (code) =>
        reject(new Error(`the server exited (${code}) before answering tools/list`)),
      );
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } })}\n`,
      );
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })}\n`);
    });
    const { result } = JSON.parse(line) as { result: { tools: Array<Record<string, unknown>> } };
    // Compact JSON of the result, as the stdio transport writes it.
    return { bytes: Buffer.byteLength(JSON.stringify(result)), tools: result.tools };
  } finally {
    child.stdin.end();
    child.kill();
  }
}

describe("output schemas: left out of tools/list unless --output-schemas", () => {
  it(
    "chainmail mcp's default tools/list, the daemon running and all 38 tools listed, is at most 60 KB",
    async () => {
      const listed = await rawToolsList([CHAINMAIL_CLI, "--home", env.dir, "mcp", "--list-gated-tools"]);
      expect(listed.tools).toHaveLength(38);
      for (const tool of listed.tools) expect(tool, String(tool["name"])).not.toHaveProperty("outputSchema");
      expect(listed.bytes).toBeLessThanOrEqual(61_440);
      // The same run with --output-schemas lists every tool's schema again (and is far larger).
      const full = await rawToolsList([
        CHAINMAIL_CLI,
        "--home",
        env.dir,
        "mcp",
        "--list-gated-tools",
        "--output-schemas",
      ]);
      expect(full.tools).toHaveLength(38);
      for (const tool of full.tools) expect(tool, String(tool["name"])).toHaveProperty("outputSchema");
      expect(full.tools.map(({ outputSchema: _drop, ...rest }) => rest)).toEqual(listed.tools);
    },
    SLOW,
  );

  it.each([
    ["with --output-schemas: the v1 SDK client checks a success and an error result against them", true],
    ["by default: the v1 SDK client gets each result's structured content, unchecked", false],
  ])(
    "%s",
    async (_what, outputSchemas) => {
      // The v1 SDK client compiles each listed output schema at listTools and checks every result's
      // structured content against it, error results included: a mismatch would throw here.
      const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const client = new Client({ name: "output-schemas-v1", version: "0.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, "--home", env.dir, ...(outputSchemas ? ["--output-schemas"] : [])],
          env: { ...(process.env as Record<string, string>), MCP_OUTPUT_SCHEMAS: "" },
          stderr: "ignore",
        }),
      );
      try {
        const { tools } = await client.listTools();
        for (const name of ["search", "test_account"])
          expect(tools.find((t) => t.name === name)?.outputSchema !== undefined, name).toBe(outputSchemas);
        const found = await client.callTool({
          name: "search",
          arguments: { query: "subject:project", accounts: ["work"] },
        });
        expect(found.isError).toBeFalsy();
        const sc = found.structuredContent as { count: number; rows: Array<{ subject: unknown }> };
        expect(sc.count).toBe(3);
        expect(sc.rows[0]!.subject).toMatchObject({ untrusted: expect.stringContaining("Project thread 1") });
        const missing = await client.callTool({ name: "test_account", arguments: { account: "nobody" } });
        expect(missing.isError).toBe(true);
        expect(missing.structuredContent).toMatchObject({
          error: { reason: "NOT_FOUND", message: expect.any(String), hint: expect.any(String) },
        });
      } finally {
        await client.close();
      }
    },
    SLOW,
  );
});
