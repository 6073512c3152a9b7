/**
 * Item 1: one tools/call round trip, kit against baseline, on the same client: in process over the
 * SDK's InMemoryTransport (2025 era), and over stdio to the spawned bench bins in each era.
 */
import { performance } from "node:perf_hooks";
import { type Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { connectInMemory, type Era, newClient } from "../testing/clients.js";
import { createBenchKit } from "./kit-fixture.js";
import { binOf, type Bins, type Side } from "./proc.js";
import { createBaselineServer } from "./sdk-fixture.js";
import { ratioRow, type Row } from "./table.js";
import { argsOf, TOOL_NAME } from "./tool-data.js";
import { cpuMs, pct, us } from "./stats.js";

export const ROUND_TRIP_TARGET = 1.1;

interface Pair {
  kit: Client;
  sdk: Client;
  /** The server processes, when the servers run in their own (stdio). */
  pids?: Record<Side, number>;
  close(): Promise<void>;
}

interface Compared {
  kit: number;
  sdk: number;
  /** Server CPU per call (ms), when the servers are processes of their own. */
  cpu?: { kit: number; sdk: number };
}

async function timedCall(client: Client, i: number): Promise<number> {
  const t0 = performance.now();
  await client.callTool({ name: TOOL_NAME, arguments: argsOf(i) });
  return performance.now() - t0;
}

/**
 * Kit and baseline calls interleave one by one (taking turns to go first), so a change in the
 * machine's load lands on both sides alike; the figure is the median of the per-round p50s.
 */
async function compare(pair: Pair, rounds: number, calls: number): Promise<Compared> {
  const p50s: Record<Side, number[]> = { kit: [], sdk: [] };
  let cpu0: Record<Side, number> | undefined;
  for (let r = -1; r < rounds; r++) {
    if (r === 0 && pair.pids) cpu0 = { kit: cpuMs(pair.pids.kit), sdk: cpuMs(pair.pids.sdk) };
    const times: Record<Side, number[]> = { kit: [], sdk: [] };
    for (let i = 0; i < calls; i++) {
      for (const side of (i % 2 === 0 ? ["kit", "sdk"] : ["sdk", "kit"]) as Side[]) {
        times[side].push(await timedCall(pair[side], i));
      }
    }
    // Round -1 warms both paths up (JIT) and is not counted.
    if (r < 0) continue;
    p50s.kit.push(pct(times.kit, 50));
    p50s.sdk.push(pct(times.sdk, 50));
  }
  const counted = rounds * calls;
  const cpuOf = (side: Side) => (cpuMs(pair.pids![side]) - cpu0![side]) / counted;
  return {
    kit: pct(p50s.kit, 50),
    sdk: pct(p50s.sdk, 50),
    ...(cpu0 ? { cpu: { kit: cpuOf("kit"), sdk: cpuOf("sdk") } } : {}),
  };
}

async function inMemoryPair(): Promise<Pair> {
  const kit = await connectInMemory(createBenchKit(), { scopes: [] }, "bench");
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createBaselineServer();
  await server.connect(serverSide);
  const sdk = newClient({ clientName: "bench" });
  await sdk.connect(clientSide);
  await kit.client.listTools();
  await sdk.listTools();
  return {
    kit: kit.client,
    sdk,
    close: async () => {
      await kit.close();
      await sdk.close();
      await server.close();
    },
  };
}

async function stdioClient(bins: Bins, side: Side, era: Era): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [binOf(bins, side)] });
  const client = newClient({ era, clientName: "bench" });
  await client.connect(transport);
  await client.listTools();
  if (transport.pid === null) throw new Error(`the ${side} bench server has no process`);
  return { client, pid: transport.pid };
}

async function stdioPair(bins: Bins, era: Era): Promise<Pair> {
  const kit = await stdioClient(bins, "kit", era);
  const sdk = await stdioClient(bins, "sdk", era);
  return {
    kit: kit.client,
    sdk: sdk.client,
    pids: { kit: kit.pid, sdk: sdk.pid },
    close: async () => {
      await kit.client.close();
      await sdk.client.close();
    },
  };
}

export interface RoundTripOptions {
  rounds: number;
  inMemoryCalls: number;
  stdioCalls: number;
}

export async function measureRoundTrips(bins: Bins, o: RoundTripOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const mem = await inMemoryPair();
  const m = await compare(mem, o.rounds, o.inMemoryCalls);
  await mem.close();
  rows.push(ratioRow("tools/call p50, InMemoryTransport, 2025", m.kit, m.sdk, us, ROUND_TRIP_TARGET));
  for (const [era, label] of [
    ["legacy", "2025"],
    ["modern", "2026-07-28"],
  ] as const) {
    const pair = await stdioPair(bins, era);
    const s = await compare(pair, o.rounds, o.stdioCalls);
    await pair.close();
    rows.push(ratioRow(`tools/call p50, stdio, ${label}`, s.kit, s.sdk, us, ROUND_TRIP_TARGET));
    if (s.cpu) rows.push(ratioRow(`  server CPU per call, stdio, ${label}`, s.cpu.kit, s.cpu.sdk, us));
  }
  return rows;
}
