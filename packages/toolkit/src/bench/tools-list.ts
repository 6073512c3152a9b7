/**
 * Item 4: the `tools/list` of every server in this repository, as a client receives it over stdio,
 * as each bin lists it by default (no output schemas) and with `--output-schemas`: its size (the
 * UTF-8 bytes of the result, compact JSON, as on the wire) and how long it takes with the v2 client,
 * the first one and the median of the next ones, and the median with the v1 SDK client, which
 * compiles a validator for every listed output schema at each listTools. Each server starts from
 * its committed bin, which runs its build; one that is not built is reported as such.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { connectStdio } from "../testing/clients.js";
import type { Bins } from "./proc.js";
import { ms, pct } from "./stats.js";

interface ServerUnderTest {
  name: string;
  /** The bin, relative to the repository root. */
  bin: string;
  args: (scratch: string) => string[];
}

const CHAINMAIL = "chainmail mcp";

/** Each server started as its reference pages start it: every tool listed, nothing to connect to. */
const SERVERS: readonly ServerUnderTest[] = [
  { name: "mcpforge-example (kit)", bin: "packages/toolkit/bin/mcpforge-example.js", args: () => [] },
  {
    name: CHAINMAIL,
    bin: "packages/chainmail-mcp/bin/chainmail-mcp.js",
    args: (scratch) => ["--home", join(scratch, "chainmail-home"), "--list-gated-tools"],
  },
  { name: "dexi", bin: "packages/dexi-server/bin/dexi-mcp.js", args: () => ["--db", ":memory:"] },
  {
    name: "notes-status",
    bin: "packages/notes-status-server/bin/notes-status-mcp.js",
    args: () => ["--db", ":memory:"],
  },
];

/** The listing each server is measured in: the default, and with its output schemas. */
const LISTINGS = [
  { listing: "default", flags: [] },
  { listing: "--output-schemas", flags: ["--output-schemas"] },
] as const;

/** The goal of issue 32 for chainmail's default listing: at most 60 KB of compact JSON. */
export const CHAINMAIL_GOAL_BYTES = 61_440;

export interface ToolsListRow {
  server: string;
  /** "default" or "--output-schemas". */
  listing: string;
  tools?: number;
  bytes?: number;
  firstMs?: number;
  p50Ms?: number;
  /** The p50 of the same number of listTools through the v1 SDK client. */
  v1P50Ms?: number;
  /** Why there is no figure (a server not built, or one that failed to start). */
  problem?: string;
}

export async function measureToolsLists(bins: Bins, lists: number): Promise<ToolsListRow[]> {
  // bins.dir is packages/toolkit/dist/bench.
  const root = resolve(bins.dir, "../../../..");
  const scratch = mkdtempSync(join(tmpdir(), "bench-tools-list-"));
  const rows: ToolsListRow[] = [];
  try {
    for (const server of SERVERS) {
      const bin = join(root, server.bin);
      for (const { listing, flags } of LISTINGS) {
        if (!existsSync(bin)) {
          rows.push({ server: server.name, listing, problem: `${server.bin} not found` });
          continue;
        }
        const args = [...server.args(scratch), ...flags];
        try {
          rows.push({ server: server.name, listing, ...(await measureOne(bin, args, lists)) });
        } catch (err) {
          rows.push({ server: server.name, listing, problem: (err as Error).message.split("\n")[0] });
        }
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return rows;
}

// The environment a listing is measured in: MCP_OUTPUT_SCHEMAS unset, so only the flag decides.
const env = { MCP_OUTPUT_SCHEMAS: "" };

async function measureOne(
  bin: string,
  args: string[],
  lists: number,
): Promise<Omit<ToolsListRow, "server" | "listing">> {
  const conn = await connectStdio({ command: process.execPath, args: [bin, ...args], env });
  let measured: Omit<ToolsListRow, "server" | "listing" | "v1P50Ms">;
  try {
    const t0 = performance.now();
    const first = await conn.client.listTools();
    const firstMs = performance.now() - t0;
    const times: number[] = [];
    for (let i = 0; i < lists; i++) {
      const t = performance.now();
      await conn.client.listTools();
      times.push(performance.now() - t);
    }
    measured = {
      tools: first.tools.length,
      // What the server sent: the result object, without what the client adds (no nextCursor was sent).
      bytes: Buffer.byteLength(JSON.stringify({ tools: first.tools })),
      firstMs,
      p50Ms: pct(times, 50),
    };
  } finally {
    await conn.close();
  }
  return { ...measured, v1P50Ms: await v1ListTimes(bin, args, lists) };
}

/** The p50 of `lists` listTools through the v1 SDK client, after one to warm up. */
async function v1ListTimes(bin: string, args: string[], lists: number): Promise<number> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const client = new Client({ name: "bench-tools-list-v1", version: "0.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bin, ...args],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "ignore",
    }),
  );
  try {
    await client.listTools();
    const times: number[] = [];
    for (let i = 0; i < lists; i++) {
      const t = performance.now();
      await client.listTools();
      times.push(performance.now() - t);
    }
    return pct(times, 50);
  } finally {
    await client.close();
  }
}

export function printToolsLists(title: string, rows: readonly ToolsListRow[]): void {
  if (rows.length === 0) return;
  const head = ["server", "listing", "tools", "bytes", "first", "p50", "p50 v1 client"];
  const cells = rows.map((r) =>
    r.problem !== undefined
      ? [r.server, r.listing, "", "", "", "", r.problem]
      : [
          r.server,
          r.listing,
          String(r.tools),
          r.bytes!.toLocaleString("en-US"),
          ms(r.firstMs!),
          ms(r.p50Ms!),
          ms(r.v1P50Ms!),
        ],
  );
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) =>
    c
      .map((v, i) => (i < 2 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  console.log(`\n${title}`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const c of cells) console.log(line(c));
  const chainmail = rows.find((r) => r.server === CHAINMAIL && r.listing === "default");
  const goal = CHAINMAIL_GOAL_BYTES.toLocaleString("en-US");
  console.log(
    chainmail?.bytes === undefined
      ? `Goal: ${CHAINMAIL}'s default tools/list at most ${goal} bytes: not measured (${chainmail?.problem ?? "no row"})`
      : `Goal: ${CHAINMAIL}'s default tools/list at most ${goal} bytes: ${chainmail.bytes.toLocaleString("en-US")} bytes, ${chainmail.bytes <= CHAINMAIL_GOAL_BYTES ? "met" : "NOT met"}`,
  );
}
