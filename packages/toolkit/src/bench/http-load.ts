/**
 * Item 3: Streamable HTTP under load. Concurrent clients, each making a run of tools/call in one
 * era, against server processes spawned from the bench bins (one, or two behind the bench's
 * round-robin proxy). Latency is what each client sees; RSS and CPU are the server processes' own.
 */
import { Agent } from "node:http";
import { performance } from "node:perf_hooks";
import type { Era } from "../testing/clients.js";
import { type Opened, openClient, replayCall } from "./loadgen.js";
import { type Bins, type Side, type Spawned, spawnHttpServer, spawnListening } from "./proc.js";
import { cpuMs, mb, ms, pct, rssBytes, us } from "./stats.js";
import { ratioRow, type Row } from "./table.js";
import { BENCH_TOKEN } from "./tool-data.js";

/** RSS after the load may exceed RSS before it by at most this factor. */
export const RSS_FLAT = 1.1;

export interface LoadOptions {
  clients: number;
  calls: number;
  /**
   * Calls each client makes (per instance) before "before" is read. V8 enlarges its heap over the first several
   * thousand calls (to about 190 MB here, for either server); read before that, RSS measures V8's
   * heap sizing rather than what the server keeps (see the README's benchmark section).
   */
  warmup: number;
}

interface LoadResult {
  latencies: number[];
  rssBefore: number;
  rssAfter: number;
  cpuMs: number;
  wallMs: number;
}

/** One client's run of calls, one after another; ids continue past the ones its SDK client used. */
async function clientLoop(
  agent: Agent,
  c: Opened,
  from: number,
  calls: number,
  out?: number[],
): Promise<void> {
  for (let i = from; i < from + calls; i++) {
    const t0 = performance.now();
    await replayCall(agent, c.wire, 1000 + i, i);
    out?.push(performance.now() - t0);
  }
}

async function startTopology(
  bins: Bins,
  side: Side,
  instances: number,
): Promise<{ url: string; servers: Spawned[]; all: Spawned[] }> {
  const servers = await Promise.all(
    Array.from({ length: instances }, () => spawnHttpServer(bins, side, BENCH_TOKEN)),
  );
  if (instances === 1) return { url: servers[0]!.url, servers, all: servers };
  // A 2025 session lives in the process that issued it, so the proxy pins a request carrying an
  // Mcp-Session-Id to that instance; each initialize still goes round-robin, which spreads the
  // sessions over both. 2026-07-28 requests carry no session id and rotate one by one.
  const ports = servers.map((s) => new URL(s.url).port);
  const proxy = await spawnListening(`${bins.dir}/proxy.js`, ["--affinity", ...ports]);
  return { url: `${proxy.url}/mcp`, servers, all: [...servers, proxy] };
}

async function runLoad(
  bins: Bins,
  side: Side,
  era: Era,
  instances: number,
  o: LoadOptions,
): Promise<LoadResult> {
  const { url, servers, all } = await startTopology(bins, side, instances);
  const sum = (f: (pid: number) => number) => servers.reduce((acc, s) => acc + f(s.pid), 0);
  const clients: Opened[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: o.clients });
  try {
    clients.push(...(await Promise.all(Array.from({ length: o.clients }, () => openClient(url, era)))));
    // Each instance gets the whole warm-up: two behind the proxy get twice the calls in all.
    const warmup = o.warmup * instances;
    await Promise.all(clients.map((c) => clientLoop(agent, c, 0, warmup)));
    const rssBefore = sum(rssBytes);
    const cpu0 = sum(cpuMs);
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(clients.map((c) => clientLoop(agent, c, warmup, o.calls, latencies)));
    const wallMs = performance.now() - t0;
    return { latencies, rssBefore, rssAfter: sum(rssBytes), cpuMs: sum(cpuMs) - cpu0, wallMs };
  } finally {
    agent.destroy();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(all.map((s) => s.stop()));
  }
}

const growth = (r: LoadResult) =>
  `${mb(r.rssBefore)} -> ${mb(r.rssAfter)} (${r.rssAfter >= r.rssBefore ? "+" : ""}${((r.rssAfter / r.rssBefore - 1) * 100).toFixed(1)}%)`;

function rowsOf(label: string, kit: LoadResult, sdk: LoadResult): Row[] {
  const perCall = (r: LoadResult) => r.cpuMs / r.latencies.length;
  const rate = (r: LoadResult) => (r.latencies.length / r.wallMs) * 1000;
  const kitFlat = kit.rssAfter <= kit.rssBefore * RSS_FLAT;
  return [
    ratioRow(`${label}: latency p50`, pct(kit.latencies, 50), pct(sdk.latencies, 50), ms),
    ratioRow(`${label}: latency p99`, pct(kit.latencies, 99), pct(sdk.latencies, 99), ms),
    ratioRow(`${label}: throughput (calls/s)`, rate(kit), rate(sdk), (v) => v.toFixed(0)),
    ratioRow(`${label}: server CPU per call`, perCall(kit), perCall(sdk), us),
    {
      figure: `${label}: server RSS before -> after`,
      kit: growth(kit),
      sdk: growth(sdk),
      // The ratio of the two "after" figures: how the kit's footprint under load compares.
      ratio: kit.rssAfter / sdk.rssAfter,
      target: `kit +${Math.round((RSS_FLAT - 1) * 100)}% at most`,
      met: kitFlat,
    },
  ];
}

export async function measureHttp(bins: Bins, o: LoadOptions, log: (line: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  let turn = 0;
  for (const [era, eraLabel] of [
    ["legacy", "2025"],
    ["modern", "2026-07-28 stateless"],
  ] as const) {
    for (const instances of [1, 2]) {
      const label = `HTTP ${eraLabel}, ${instances === 1 ? "1 instance" : "2 instances + proxy"}`;
      const results: Partial<Record<Side, LoadResult>> = {};
      // Kit and baseline take turns to go first, so a load change on the machine hits both alike.
      for (const side of (turn++ % 2 === 0 ? ["kit", "sdk"] : ["sdk", "kit"]) as Side[]) {
        const t = performance.now();
        results[side] = await runLoad(bins, side, era, instances, o);
        log(`  ${label}, ${side}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
      }
      rows.push(...rowsOf(label, results.kit!, results.sdk!));
    }
  }
  return rows;
}
