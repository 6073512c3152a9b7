/**
 * What a kit server's bin lists by default against its golden file: the golden holds the full
 * listing (with output schemas, as `--output-schemas` serves it and the reference pages read it);
 * a run without the flag must send exactly that listing with `outputSchema` taken out of every tool,
 * nothing else changed, to every client of the era matrix.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { connectHttp, connectStdio, type StdioSpawn } from "./clients.js";
import { lineDiff, renderToolsList } from "./golden.js";
import { startHttpBin } from "./matrix.js";

type Json = Record<string, unknown>;

/** A JSON value with every object's keys sorted, so two listings compare by content alone. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)]));
}

const render = (tools: unknown): string => `${JSON.stringify(sortedKeys(tools), null, 2)}\n`;

/** The golden file's tools, each without its `outputSchema`: what a kit server lists by default. */
export function goldenWithoutOutputSchemas(golden: string | URL): Json[] {
  const path = golden instanceof URL ? fileURLToPath(golden) : golden;
  const tools = JSON.parse(readFileSync(path, "utf8")) as Json[];
  return tools.map(({ outputSchema: _drop, ...rest }) => rest);
}

/**
 * Checks a listing some client received (the v1 SDK's, the v2 one in either era) against the golden
 * file with every `outputSchema` taken out, as JSON values (keys in any order). Also fails if the
 * golden has no output schema to take out, so the check cannot pass vacuously.
 */
export function expectDefaultToolsList(
  tools: readonly unknown[],
  golden: string | URL,
  who = "client",
): void {
  const expectedTools = goldenWithoutOutputSchemas(golden);
  const path = golden instanceof URL ? fileURLToPath(golden) : golden;
  const full = JSON.parse(readFileSync(path, "utf8")) as Json[];
  if (!full.some((t) => t["outputSchema"] !== undefined))
    throw new Error(`${path} lists no output schema: it must hold the full listing (--output-schemas)`);
  // JSON round trip: what the client parsed, as plain data (no undefined-valued keys).
  const actual = render(JSON.parse(JSON.stringify(tools)));
  const expected = render(expectedTools);
  if (actual !== expected) {
    throw new Error(
      `the default tools/list (${who}) is not ${path} without its output schemas (keys sorted on both sides):\n${lineDiff(expected, actual)}`,
    );
  }
}

/**
 * The default listing of a server's built bin, to every client: the v1 SDK client (2025 era) and
 * the v2 client pinned to 2026-07-28 over stdio, and the v2 client pinned to 2026-07-28 over
 * Streamable HTTP (the matrix's `--http 127.0.0.1:0`), each must get the golden without output
 * schemas; with `--output-schemas` the v2 client's rendering is the golden file byte for byte, and
 * with `MCP_OUTPUT_SCHEMAS=1` the same. `spawn` starts the bin as its golden describes it (the
 * same gate state, the same flags otherwise).
 */
export async function checkDefaultToolsList(spawn: StdioSpawn, golden: string | URL): Promise<void> {
  const path = golden instanceof URL ? fileURLToPath(golden) : golden;
  // The default: the variable unset (empty reads as unset) whatever this process's environment says.
  const bare: StdioSpawn = { ...spawn, env: { ...(spawn.env ?? {}), MCP_OUTPUT_SCHEMAS: "" } };
  // The v1 SDK is an optional peer of the kit: only the test helpers need it.
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const v1 = new Client({ name: "default-list-v1", version: "0.0.0" });
  await v1.connect(
    new StdioClientTransport({
      command: bare.command,
      args: bare.args ?? [],
      env: { ...(process.env as Record<string, string>), ...bare.env },
      ...(bare.cwd ? { cwd: bare.cwd } : {}),
      stderr: "ignore",
    }),
  );
  try {
    expectDefaultToolsList((await v1.listTools()).tools, golden, "v1 SDK client over stdio");
  } finally {
    await v1.close();
  }

  const modern = await connectStdio(bare, { era: "modern" });
  try {
    if (modern.client.getProtocolEra() !== "modern")
      throw new Error("the v2 client did not land on 2026-07-28");
    expectDefaultToolsList(
      (await modern.client.listTools()).tools,
      golden,
      "v2 client, 2026-07-28, over stdio",
    );
  } finally {
    await modern.close();
  }

  const token = `default-list-${Math.random().toString(36).slice(2)}`;
  const http = await startHttpBin(bare, token);
  try {
    const conn = await connectHttp(http.url, token, { era: "modern" });
    try {
      expectDefaultToolsList(
        (await conn.client.listTools()).tools,
        golden,
        "v2 client, 2026-07-28, over HTTP",
      );
    } finally {
      await conn.close();
    }
  } finally {
    http.child.kill();
  }

  const expected = readFileSync(path, "utf8");
  const withFlag: [string, StdioSpawn][] = [
    ["--output-schemas", { ...bare, args: [...(bare.args ?? []), "--output-schemas"] }],
    ["MCP_OUTPUT_SCHEMAS=1", { ...spawn, env: { ...(spawn.env ?? {}), MCP_OUTPUT_SCHEMAS: "1" } }],
  ];
  for (const [how, started] of withFlag) {
    const full = await connectStdio(started);
    try {
      const actual = await renderToolsList(full.client);
      if (actual !== expected)
        throw new Error(`tools/list with ${how} differs from ${path}:\n${lineDiff(expected, actual)}`);
    } finally {
      await full.close();
    }
  }
}
