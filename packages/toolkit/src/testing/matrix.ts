import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHttp, connectStdio, runInspector, runInspectorHttp, type StdioSpawn } from "./clients.js";

/**
 * The client-and-transport matrix every server's built bin is checked against: a 2025-era client
 * (the v1 SDK `Client` 1.32, and the MCP Inspector CLI) and a 2026-07-28 client (the v2 `Client`
 * pinned to that revision), each over stdio and Streamable HTTP. Each combination lists the tools,
 * calls one, gets an error result and, where the server has a gated tool, sees the gate flip the
 * way its revision provides (`notifications/tools/list_changed` for 2025, a `subscriptions/listen`
 * stream for 2026-07-28; the Inspector CLI, one process per call, sees it in its next tools/list).
 */
export type MatrixClient = "sdk-v1" | "inspector" | "sdk-v2-modern";
export type MatrixTransport = "stdio" | "http";

export const MATRIX: readonly { client: MatrixClient; transport: MatrixTransport }[] = (
  ["sdk-v1", "inspector", "sdk-v2-modern"] as const
).flatMap((client) => (["stdio", "http"] as const).map((transport) => ({ client, transport })));

type Json = Record<string, unknown>;

export interface MatrixTarget {
  /** The built bin; for HTTP the matrix appends `--http 127.0.0.1:0` and sets MCP_HTTP_TOKEN. */
  spawn: StdioSpawn;
  /** serverInfo the server must report (checked where the client exposes it). */
  serverInfo: { name: string; version: string };
  /** Names every combination must find in tools/list. */
  listed: readonly string[];
  /**
   * Names tools/list must not have (tools a `--tools` / `--read-only` run leaves out); a call to the
   * first must be refused as an unknown tool's is, with a protocol error.
   */
  unlisted?: readonly string[];
  /** A call that succeeds; `check` looks at its structured content. */
  ok: { tool: string; args: Json; check?: (structured: Json) => void };
  /** A call that fails with this reason. */
  error: { tool: string; args: Json; reason: string };
  /** A tool listed only while its gate is open, and how to open and close it. */
  gate?: { tool: string; open: () => void | Promise<void>; close: () => void | Promise<void> };
}

interface CallOutcome {
  isError: boolean;
  structured: Json;
}

/** What the matrix needs of a client: the same four things whichever client and transport. */
interface Driver {
  serverInfo(): { name: string; version: string } | undefined;
  listTools(): Promise<string[]>;
  call(tool: string, args: Json): Promise<CallOutcome>;
  /** How many tools-changed notices arrived so far; undefined for a client that cannot hear them. */
  changes(): number | undefined;
  close(): Promise<void>;
}

function fail(message: string): never {
  throw new Error(message);
}

async function waitFor(what: string, test: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > until) fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts a server bin with `--http 127.0.0.1:0` and the token in MCP_HTTP_TOKEN (never in argv);
 * resolves with its URL once it says where it listens.
 */
export async function startHttpBin(
  server: StdioSpawn,
  token: string,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(server.command, [...(server.args ?? []), "--http", "127.0.0.1:0"], {
    env: { ...process.env, ...(server.env ?? {}), MCP_HTTP_TOKEN: token },
    ...(server.cwd ? { cwd: server.cwd } : {}),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "listening on" line within 20 s:\n${stderr}`)),
      20_000,
    );
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) =>
      reject(new Error(`the server exited (${code}) before listening:\n${stderr}`)),
    );
  });
  return { url, child };
}

async function v1Driver(
  target: MatrixTarget,
  transport: MatrixTransport,
  url: string,
  token: string,
): Promise<Driver> {
  // The v1 SDK is an optional peer: only this matrix needs it.
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { ToolListChangedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
  const client = new Client({ name: "matrix-v1", version: "0.0.0" });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    changes++;
  });
  if (transport === "stdio") {
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    await client.connect(
      new StdioClientTransport({
        command: target.spawn.command,
        args: target.spawn.args ?? [],
        env: { ...(process.env as Record<string, string>), ...(target.spawn.env ?? {}) },
        ...(target.spawn.cwd ? { cwd: target.spawn.cwd } : {}),
        stderr: "ignore",
      }),
    );
  } else {
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
  }
  return {
    serverInfo: () => client.getServerVersion(),
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (tool, args) => {
      const r = await client.callTool({ name: tool, arguments: args });
      return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json };
    },
    changes: () => changes,
    close: () => client.close(),
  };
}

async function modernDriver(
  target: MatrixTarget,
  transport: MatrixTransport,
  url: string,
  token: string,
): Promise<Driver> {
  let changes = 0;
  const options = { era: "modern" as const, onToolsChanged: () => changes++ };
  const conn =
    transport === "stdio"
      ? await connectStdio(target.spawn, options)
      : await connectHttp(url, token, options);
  if (conn.client.getProtocolEra() !== "modern")
    fail(`the v2 client landed on ${conn.client.getProtocolEra()}`);
  return {
    serverInfo: () => conn.client.getServerVersion(),
    listTools: async () => (await conn.client.listTools()).tools.map((t) => t.name),
    call: async (tool, args) => {
      const r = await conn.client.callTool({ name: tool, arguments: args });
      return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json };
    },
    changes: () => changes,
    close: () => conn.close(),
  };
}

function inspectorDriver(
  target: MatrixTarget,
  transport: MatrixTransport,
  url: string,
  token: string,
): Driver {
  const run = (args: string[]) =>
    transport === "stdio" ? runInspector(target.spawn, args) : runInspectorHttp(url, token, args);
  const toolArgs = (args: Json) =>
    Object.entries(args).flatMap(([k, v]) => [
      "--tool-arg",
      `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`,
    ]);
  return {
    serverInfo: () => undefined,
    listTools: async () =>
      ((await run(["--method", "tools/list"])).json as { tools: { name: string }[] }).tools.map(
        (t) => t.name,
      ),
    call: async (tool, args) => {
      const { json } = await run(["--method", "tools/call", "--tool-name", tool, ...toolArgs(args)]);
      const r = json as { isError?: boolean; structuredContent?: Json };
      return { isError: r.isError === true, structured: r.structuredContent ?? {} };
    },
    changes: () => undefined,
    close: async () => undefined,
  };
}

/**
 * Runs one combination of the matrix against a server; throws with what went wrong. `target` may be
 * a function of a temp folder made for this combination (and removed after it).
 */
export async function checkCombination(
  combination: { client: MatrixClient; transport: MatrixTransport },
  targetIn: MatrixTarget | ((dir: string) => MatrixTarget),
): Promise<void> {
  const { client, transport } = combination;
  // A fresh folder per combination for the server's data (a database, a gate file), removed after.
  const dir = mkdtempSync(join(tmpdir(), `mcp-matrix-${client}-${transport}-`));
  try {
    await runCombination(typeof targetIn === "function" ? targetIn(dir) : targetIn, client, transport);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runCombination(
  target: MatrixTarget,
  client: MatrixClient,
  transport: MatrixTransport,
): Promise<void> {
  const token = `matrix-${Math.random().toString(36).slice(2)}`;
  const http = transport === "http" ? await startHttpBin(target.spawn, token) : undefined;
  const url = http?.url ?? "";
  let driver: Driver | undefined;
  try {
    driver =
      client === "sdk-v1"
        ? await v1Driver(target, transport, url, token)
        : client === "sdk-v2-modern"
          ? await modernDriver(target, transport, url, token)
          : inspectorDriver(target, transport, url, token);
    const info = driver.serverInfo();
    if (info && (info.name !== target.serverInfo.name || info.version !== target.serverInfo.version)) {
      fail(`serverInfo ${JSON.stringify(info)}, expected ${JSON.stringify(target.serverInfo)}`);
    }
    const names = await driver.listTools();
    for (const name of target.listed)
      if (!names.includes(name)) fail(`tools/list lacks ${name}: ${names.join(", ")}`);
    for (const name of target.unlisted ?? [])
      if (names.includes(name)) fail(`tools/list has ${name}, which this run leaves out`);
    const left = target.unlisted?.[0];
    if (left !== undefined) {
      const answered = await driver.call(left, {}).then(
        (r) => JSON.stringify(r),
        () => undefined,
      );
      if (answered !== undefined) fail(`${left} is left out, yet a call to it was answered: ${answered}`);
    }
    const ok = await driver.call(target.ok.tool, target.ok.args);
    if (ok.isError) fail(`${target.ok.tool} failed: ${JSON.stringify(ok.structured)}`);
    target.ok.check?.(ok.structured);
    const bad = await driver.call(target.error.tool, target.error.args);
    const reason = (bad.structured["error"] as { reason?: string } | undefined)?.reason;
    if (!bad.isError || reason !== target.error.reason) {
      fail(`${target.error.tool} should fail with ${target.error.reason}, got ${JSON.stringify(bad)}`);
    }
    if (target.gate) await checkGate(driver, target.gate);
  } finally {
    await driver?.close().catch(() => undefined);
    http?.child.kill();
  }
}

async function checkGate(driver: Driver, gate: NonNullable<MatrixTarget["gate"]>): Promise<void> {
  if ((await driver.listTools()).includes(gate.tool)) fail(`${gate.tool} is listed before its gate opened`);
  const before = driver.changes() ?? 0;
  try {
    await gate.open();
    if (!(await driver.listTools()).includes(gate.tool))
      fail(`${gate.tool} is not listed once its gate opened`);
    if (driver.changes() !== undefined)
      await waitFor("a tools-changed notice", () => (driver.changes() ?? 0) > before);
  } finally {
    await gate.close();
  }
  if ((await driver.listTools()).includes(gate.tool))
    fail(`${gate.tool} is still listed once its gate closed`);
  if (driver.changes() !== undefined)
    await waitFor("a second tools-changed notice", () => (driver.changes() ?? 0) > before + 1);
}
