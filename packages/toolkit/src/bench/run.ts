/**
 * The kit's benchmark: what serving a tool through the kit costs against the same tool on a
 * minimal server written directly on the v2 SDK, as ratios, in one run (`npm run bench`).
 *
 *   BENCH_ROUNDS, BENCH_CALLS, BENCH_STDIO_CALLS  round trips (item 1)
 *   BENCH_SPAWNS                                   spawns per side and era (item 2)
 *   BENCH_HTTP_CLIENTS, BENCH_HTTP_CALLS, BENCH_HTTP_WARMUP   HTTP load (item 3)
 *   BENCH_LISTS                                    tools/list calls per server after the first (item 4)
 *   BENCH_ONLY=roundtrip,startup,http,toolslist    run only these parts
 */
import { dirname } from "node:path";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { measureHttp } from "./http-load.js";
import type { Bins } from "./proc.js";
import { measureRoundTrips } from "./roundtrip.js";
import { measureStartup } from "./startup.js";
import { printTable } from "./table.js";
import { measureToolsLists, printToolsLists } from "./tools-list.js";

const num = (name: string, fallback: number) => {
  const raw = process.env[name];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer; got "${raw}"`);
  return n;
};

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const log = (line: string) => process.stderr.write(`${line}\n`);

async function main() {
  // This file is an entry of its own in the build, so it sits in dist/bench/ next to the bins.
  const bins: Bins = { dir: dirname(fileURLToPath(import.meta.url)) };
  const started = performance.now();
  const loadAtStart = load();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  log(`load average at start: ${loadAtStart}`);

  const only = (process.env["BENCH_ONLY"] ?? "roundtrip,startup,http,toolslist").split(",");
  const roundTrips = only.includes("roundtrip")
    ? await measureRoundTrips(bins, {
        rounds: num("BENCH_ROUNDS", 5),
        inMemoryCalls: num("BENCH_CALLS", 2000),
        stdioCalls: num("BENCH_STDIO_CALLS", 1000),
      })
    : [];
  log(`round trips done (${elapsed()})`);
  const spawns = num("BENCH_SPAWNS", 15);
  const startup = only.includes("startup") ? await measureStartup(bins, spawns) : [];
  log(`spawns done (${elapsed()})`);
  const httpOptions = {
    clients: num("BENCH_HTTP_CLIENTS", 20),
    calls: num("BENCH_HTTP_CALLS", 1000),
    // 1,000 per client and instance (20,000 calls): V8 keeps sizing the heap for ~16,000 calls (see README).
    warmup: num("BENCH_HTTP_WARMUP", 1000),
  };
  const http = only.includes("http") ? await measureHttp(bins, httpOptions, log) : [];
  log(`HTTP done (${elapsed()})`);
  const lists = num("BENCH_LISTS", 20);
  const toolsLists = only.includes("toolslist") ? await measureToolsLists(bins, lists) : [];

  console.log(`mcpforge toolkit bench, node ${process.version}, ${elapsed()}`);
  console.log(`load average at start: ${loadAtStart}; at end: ${load()}`);
  printTable(
    "1. tools/call round trip (median of per-round p50s; kit and baseline calls interleaved one by one)",
    roundTrips,
  );
  printTable("2. spawn to first answer over stdio (v2 client)", startup);
  printTable(
    `3. Streamable HTTP, ${httpOptions.clients} clients x ${httpOptions.calls} calls each ` +
      `(after ${httpOptions.warmup} warm-up calls each per instance; RSS "before" is read after them)`,
    http,
  );
  printToolsLists(
    `4. tools/list of each server in this repository over stdio, by default (no output schemas) and ` +
      `with --output-schemas: bytes of the result as sent; the v2 client (2025 handshake): the first ` +
      `call and the p50 of ${lists} more; the p50 of ${lists} through the v1 SDK client, which ` +
      `compiles every listed output schema at each listTools`,
    toolsLists,
  );
  console.log(
    [
      "",
      "Baseline: McpServer.registerTool with the same schemas and result shape, served by the SDK's",
      "serveStdio / createMcpHandler + toNodeHandler (default legacy posture 'stateless': a 2025 client",
      "gets no session and each request a fresh instance). The kit also checks a bearer token on HTTP",
      "and holds one session per 2025 client.",
      "Spawn, 2026-07-28: the SDK's stdio client probes with server/discover on a sibling process of the",
      "same command before it spawns the one it keeps, so each figure spans two spawns, on both sides.",
      "HTTP: each client is opened by a real v2 SDK client; its tools/call request is then replayed",
      "over keep-alive node:http (fresh ids and arguments), so the load generator does not compete",
      "with the servers for the two cores. Two instances, in each era: the proxy sends each request",
      "to the next instance in turn, except one carrying an Mcp-Session-Id, which goes to the instance",
      "that issued it (a 2025 session lives in one process; 2026-07-28 requests carry none).",
      "RSS is VmRSS of the server processes (summed over two); CPU is their utime + stime.",
    ].join("\n"),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
