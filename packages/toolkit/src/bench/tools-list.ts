/**
 * Item 4: the `tools/list` of every server in this repository, as a client receives it over stdio:
 * its size (the UTF-8 bytes of the result, compact JSON, as on the wire) and how long it takes, the
 * first one (which builds the compact output schemas) and the median of the next ones. Each server
 * starts from its committed bin, which runs its build; one that is not built is reported as such.
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

/** Each server started as its reference pages start it: every tool listed, nothing to connect to. */
const SERVERS: readonly ServerUnderTest[] = [
  { name: "mcpforge-example (kit)", bin: "packages/toolkit/bin/mcpforge-example.js", args: () => [] },
  {
    name: "chainmail mcp",
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

export interface ToolsListRow {
  server: string;
  tools?: number;
  bytes?: number;
  firstMs?: number;
  p50Ms?: number;
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
      if (!existsSync(bin)) {
        rows.push({ server: server.name, problem: `${server.bin} not found` });
        continue;
      }
      try {
        rows.push({ server: server.name, ...(await measureOne(bin, server.args(scratch), lists)) });
      } catch (err) {
        rows.push({ server: server.name, problem: (err as Error).message.split("\n")[0] });
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return rows;
}

async function measureOne(bin: string, args: string[], lists: number): Promise<Omit<ToolsListRow, "server">> {
  const conn = await connectStdio({ command: process.execPath, args: [bin, ...args] });
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
    return {
      tools: first.tools.length,
      // What the server sent: the result object, without what the client adds (no nextCursor was sent).
      bytes: Buffer.byteLength(JSON.stringify({ tools: first.tools })),
      firstMs,
      p50Ms: pct(times, 50),
    };
  } finally {
    await conn.close();
  }
}

export function printToolsLists(title: string, rows: readonly ToolsListRow[]): void {
  if (rows.length === 0) return;
  const head = ["server", "tools", "bytes", "first", "p50"];
  const cells = rows.map((r) =>
    r.problem !== undefined
      ? [r.server, "", "", "", r.problem]
      : [r.server, String(r.tools), r.bytes!.toLocaleString("en-US"), ms(r.firstMs!), ms(r.p50Ms!)],
  );
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) =>
    c
      .map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  console.log(`\n${title}`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const c of cells) console.log(line(c));
}
