/**
 * Throughput on one PostgreSQL: `clients` concurrent clients in closed loops, first all on one
 * `dexi-mcp --http` instance, then spread evenly over two (client k on instance k mod 2), each
 * instance reached directly, as behind any load balancer (the round-robin proxy is the functional
 * test's concern: test/postgres-scale-out.test.ts).
 *
 * The load generator is light, since it shares the machine with what it loads: each client is opened
 * by a real v2 SDK client (2026-07-28 era, stateless HTTP, its own OAuth bearer token), whose one
 * tools/call request is recorded and then replayed with fresh ids, tool names and arguments over a
 * keep-alive node:http agent (as the kit's own HTTP benchmark does). An SDK client's work per call
 * (fetch, schema checks) costs about as much CPU as the server's. Every answer is checked: a JSON-RPC
 * result without isError, for the id sent.
 *
 * Both instances are started once, with the same public URL (the first one's origin), so one token
 * fits both; the second sits idle during the one-instance phase.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent } from "node:http";
import { loadavg } from "node:os";
import { type RecordedCall, recordToolCall, replayToolCall } from "@mcpforge/toolkit/testing";
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
  /** CPU of this process (the load generator) over the window, in cores. */
  generatorCores: number;
  /** CPU of the instances that served the phase, over the window, in cores (Linux /proc). */
  instanceCores: number;
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

/** Opens one client the SDK's way (discovery, then one call) and records the tools/call it sent. */
async function record(url: string, token: string, noteIds: readonly string[]): Promise<RecordedCall> {
  const { call, close } = await recordToolCall(url, {
    era: "modern",
    token,
    clientName: "dexi-bench",
    calls: async (client) => {
      const r = await client.callTool({ name: "get_note", arguments: { note_id: noteIds[0]! } });
      if (r.isError) throw new Error(`get_note: ${JSON.stringify(r.structuredContent)}`);
    },
  });
  // 2026-07-28 requests carry no session: the recorded request stays valid after the client closes
  await close();
  return call;
}

/** One replayed tools/call; throws unless the server answered this id with a result that is no error. */
async function replay(
  agent: Agent,
  url: URL,
  call: RecordedCall,
  id: number,
  name: string,
  args: Record<string, unknown>,
): Promise<void> {
  const result = await replayToolCall(agent, call, { id, name, arguments: args, url });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.structuredContent).slice(0, 200)}`);
}

/** CPU seconds a process has used so far (utime + stime from /proc; 0 where there is none). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, USER_HZ 100 on Linux
  } catch {
    return 0;
  }
}

interface Client {
  url: URL;
  wire: RecordedCall;
}

async function drive(
  clients: Client[],
  ids: readonly string[],
  ms: number,
): Promise<{ latencies: number[]; errors: number; firstError: string | undefined }> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients.length });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const end = performance.now() + ms;
  let counter = 0;
  try {
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < end) {
          const i = counter++;
          const [, name, args] = pick(i);
          const t = performance.now();
          try {
            await replay(agent, c.url, c.wire, 1_000_000 + i, name, args(i, ids));
            latencies.push(performance.now() - t);
          } catch (err) {
            errors++;
            firstError ??= (err as Error).message;
          }
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return { latencies, errors, firstError };
}

async function phase(
  clients: Client[],
  servers: ChildProcess[],
  opts: ThroughputOptions,
): Promise<LoadResult> {
  await drive(clients, opts.noteIds, opts.warmSeconds * 1000);
  const cpu = process.cpuUsage();
  const served = () => servers.reduce((sum, s) => sum + cpuSeconds(s.pid), 0);
  const served0 = served();
  const t = performance.now();
  const run = await drive(clients, opts.noteIds, opts.seconds * 1000);
  const seconds = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  const calls = run.latencies.length;
  return {
    instances: servers.length,
    calls,
    errors: run.errors,
    firstError: run.firstError,
    seconds,
    perSecond: calls / seconds,
    p50: pct(run.latencies, 50),
    p99: pct(run.latencies, 99),
    load: loadavg()[0]!,
    generatorCores: (used.user + used.system) / 1e6 / seconds,
    instanceCores: (served() - served0) / seconds,
  };
}

/** One instance, then two, on the same database; see the module comment. */
export async function measureThroughput(opts: ThroughputOptions): Promise<LoadResult[]> {
  const ports = [await freePort(), await freePort()];
  const urls = ports.map((p) => new URL(`http://127.0.0.1:${p}/mcp`));
  const origin = urls[0]!.origin;
  const children: ChildProcess[] = [];
  try {
    for (const p of ports) children.push(await startInstance(opts.bin, opts.url, p, origin));
    const wires: RecordedCall[] = [];
    for (let i = 0; i < opts.clients; i++)
      wires.push(await record(urls[0]!.href, await opts.mintToken(origin), opts.noteIds));
    opts.log(`throughput: ${opts.clients} clients, 1 instance, ${opts.seconds} s...`);
    const single = await phase(
      wires.map((wire) => ({ url: urls[0]!, wire })),
      children.slice(0, 1),
      opts,
    );
    opts.log(`throughput: ${opts.clients} clients, 2 instances, ${opts.seconds} s...`);
    const double = await phase(
      wires.map((wire, k) => ({ url: urls[k % 2]!, wire })),
      children,
      opts,
    );
    return [single, double];
  } finally {
    for (const c of children) c.kill();
  }
}
