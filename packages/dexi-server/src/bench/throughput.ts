/**
 * Throughput on one PostgreSQL: `clients` SDK clients (2026-07-28 era, stateless HTTP, each with its
 * own bearer token) in closed loops through the kit's round-robin proxy, first in front of one
 * `dexi-mcp --http` instance, then in front of two. All clients, and the proxy, run in this one process
 * so the load generator takes as few of the machine's cores as it can; its CPU share is reported.
 *
 * Both instances are started once, with the two-instance proxy's origin as their public URL, so the
 * tokens fit both phases; the one-instance proxy forwards to the first instance only, and the second
 * sits idle meanwhile.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { connectHttp, type Connected, roundRobinProxy } from "@mcpforge/toolkit/testing";
import { freePort } from "./oauth.js";
import { pct } from "./measure.js";
import { QUERIES } from "./stores.js";

export interface ThroughputOptions {
  bin: string;
  url: string;
  clients: number;
  seconds: number;
  warmSeconds: number;
  /** A bearer token of the bench user for the server whose issuer is `issuer`. */
  mintToken(issuer: string): Promise<string>;
  /** UUIDs of existing notes, for get_note and update_note. */
  noteIds: readonly string[];
  log(s: string): void;
}

export interface LoadResult {
  instances: number;
  calls: number;
  errors: number;
  firstError: string | undefined;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** 1-minute load average right after the window. */
  load: number;
  /** CPU of this process (clients and proxy) over the window, in cores. */
  generatorCores: number;
}

/**
 * The mix, out of 100: reads dominate as in an agent's use (search, then open a hit, or list a
 * folder), with a tenth writes. Writes embed with the hash embedder the instances run with.
 */
const MIX: [number, string, (i: number, ids: readonly string[]) => Record<string, unknown>][] = [
  [40, "search_notes", (i) => ({ query: QUERIES[i % QUERIES.length]! })],
  [15, "list_notes", (i) => ({ page: 1 + (i % 3) })],
  [15, "list_notes", (i) => ({ folder: `folder ${i % 20}`, tag: `t${i % 50}` })],
  [20, "get_note", (i, ids) => ({ note_id: ids[i % ids.length]! })],
  [6, "create_note", (i) => ({ title: `load ${i}`, text: `written under load #load ${QUERIES[i % 8]}` })],
  [
    4,
    "update_note",
    (i, ids) => ({ note_id: ids[(i * 7) % ids.length]!, text: ` load ${i}`, mode: "append" }),
  ],
];

function pick(i: number): (typeof MIX)[number] {
  // A fixed walk through the mix (i * 37 mod 100 visits every slot once per 100 calls).
  let slot = (i * 37) % 100;
  for (const entry of MIX) {
    if (slot < entry[0]) return entry;
    slot -= entry[0];
  }
  return MIX[0]!;
}

function startInstance(bin: string, url: string, port: number, origin: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [bin, "--db", url, "--http", `127.0.0.1:${port}`, "--public-url", origin],
    {
      // The hash embedder: a USE embedding is ~80 ms of CPU per written note, which on two cores
      // would measure the model instead of the store and the server.
      env: { ...process.env, DEXI_EMBEDDINGS: "hash", MCP_HTTP_TOKEN: "" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("OAuth issuer")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`dexi-mcp --http exited ${code}: ${err}`)));
  });
}

async function drive(
  conns: Connected[],
  ids: readonly string[],
  ms: number,
): Promise<{ latencies: number[]; errors: number; firstError: string | undefined }> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const end = performance.now() + ms;
  let counter = 0;
  await Promise.all(
    conns.map(async (c) => {
      while (performance.now() < end) {
        const i = counter++;
        const [, name, args] = pick(i);
        const t = performance.now();
        try {
          const r = await c.client.callTool({ name, arguments: args(i, ids) });
          if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
          latencies.push(performance.now() - t);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  return { latencies, errors, firstError };
}

async function phase(
  proxyUrl: string,
  instances: number,
  tokens: readonly string[],
  opts: ThroughputOptions,
): Promise<LoadResult> {
  const conns = await Promise.all(tokens.map((t) => connectHttp(proxyUrl, t, { era: "modern" })));
  try {
    await drive(conns, opts.noteIds, opts.warmSeconds * 1000);
    const cpu = process.cpuUsage();
    const t = performance.now();
    const run = await drive(conns, opts.noteIds, opts.seconds * 1000);
    const seconds = (performance.now() - t) / 1000;
    const used = process.cpuUsage(cpu);
    const calls = run.latencies.length;
    return {
      instances,
      calls,
      errors: run.errors,
      firstError: run.firstError,
      seconds,
      perSecond: calls / seconds,
      p50: pct(run.latencies, 50),
      p99: pct(run.latencies, 99),
      load: loadavg()[0]!,
      generatorCores: (used.user + used.system) / 1e6 / seconds,
    };
  } finally {
    await Promise.all(conns.map((c) => c.close()));
  }
}

/** One instance, then two, on the same database; see the module comment. */
export async function measureThroughput(opts: ThroughputOptions): Promise<LoadResult[]> {
  const ports = [await freePort(), await freePort()];
  const upstreams = ports.map((p) => `http://127.0.0.1:${p}`);
  const both = await roundRobinProxy(upstreams);
  const one = await roundRobinProxy(upstreams.slice(0, 1));
  const origin = new URL(both.url).origin;
  const children: ChildProcess[] = [];
  try {
    for (const p of ports) children.push(await startInstance(opts.bin, opts.url, p, origin));
    const tokens: string[] = [];
    for (let i = 0; i < opts.clients; i++) tokens.push(await opts.mintToken(origin));
    opts.log(`throughput: ${opts.clients} clients, 1 instance, ${opts.seconds} s...`);
    const single = await phase(one.url, 1, tokens, opts);
    opts.log(`throughput: ${opts.clients} clients, 2 instances, ${opts.seconds} s...`);
    const double = await phase(both.url, 2, tokens, opts);
    return [single, double];
  } finally {
    for (const c of children) c.kill();
    await one.close();
    await both.close();
  }
}
