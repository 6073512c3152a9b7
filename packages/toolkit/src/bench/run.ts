/**
 * The kit's benchmark: what declaring a tool through the kit costs over registering it directly on
 * the SDK's McpServer, and how long tools/list of 40 tools takes on the server side.
 */
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { toolFactory } from "../define.js";
import { defineReasons } from "../errors.js";
import { createServer } from "../server.js";

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5);
const CALLS = Number(process.env["BENCH_CALLS"] ?? 4000);

const input = {
  query: z.string().min(1).max(200).describe("What to look for"),
  limit: z.number().int().min(1).max(50).default(10).describe("Most results"),
};
const output = { items: z.array(z.object({ id: z.string(), title: z.string() })), total: z.number().int() };
const answer = (query: string, limit: number) => ({
  items: Array.from({ length: Math.min(limit, 3) }, (_, i) => ({ id: `n${i}`, title: `${query} ${i}` })),
  total: 3,
});

async function kitClient(): Promise<Client> {
  const tool = toolFactory<undefined>();
  const kit = createServer({
    name: "bench",
    version: "0",
    reasons: defineReasons({}),
    context: () => undefined,
    tools: [
      tool({
        name: "search",
        title: "Search",
        group: "Bench",
        description: "Searches.",
        scope: null,
        input,
        output,
        annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
        summary: (r) => `${r.items.length} results`,
        handler: ({ query, limit }) => answer(query, limit),
      }),
    ],
  });
  const [c, s] = InMemoryTransport.createLinkedPair();
  await kit.protocolInstance({ scopes: [] }, { listening: true }).connect(s);
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(c);
  await client.listTools();
  return client;
}

async function sdkClient(): Promise<Client> {
  const server = new McpServer({ name: "bench", version: "0" });
  server.registerTool(
    "search",
    {
      title: "Search",
      description: "Searches.",
      inputSchema: input,
      outputSchema: output,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ query, limit }) => {
      const result = answer(query, limit);
      return {
        content: [{ type: "text", text: `${result.items.length} results\n\n${JSON.stringify(result)}` }],
        structuredContent: result,
      };
    },
  );
  const [c, s] = InMemoryTransport.createLinkedPair();
  await server.connect(s);
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(c);
  await client.listTools();
  return client;
}

async function timeCalls(client: Client): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await client.callTool({ name: "search", arguments: { query: `q${i % 50}`, limit: 5 } });
    times.push(performance.now() - t0);
  }
  return times;
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function fortyTools() {
  const tool = toolFactory<undefined, { on: boolean }>();
  return Array.from({ length: 40 }, (_, i) =>
    tool({
      name: `tool_${String(i).padStart(2, "0")}`,
      title: `Tool ${i}`,
      group: `Group ${i % 5}`,
      description: "A tool with a typical schema.",
      scope: i % 2 ? "x:read" : null,
      input: {
        ...input,
        cursor: z.string().optional().describe("A cursor"),
        flags: z
          .array(z.enum(["a", "b"]))
          .optional()
          .describe("Flags"),
      },
      output,
      annotations: { readOnly: i % 3 === 0, destructive: false, idempotent: true, openWorld: i % 2 === 0 },
      liveAnnotations: (s: { on: boolean }) => ({ destructive: s.on && i === 7 }),
      visibleWhen: (s: { on: boolean }) => s.on || i !== 3,
      summary: () => "",
      handler: () => ({ items: [], total: 0 }),
    }),
  );
}

async function main() {
  const kit = await kitClient();
  const sdk = await sdkClient();
  // Warm both paths before measuring.
  await timeCalls(kit);
  await timeCalls(sdk);
  const kitP50: number[] = [];
  const sdkP50: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate the order so drift on a shared machine hits both sides alike.
    if (r % 2 === 0) {
      kitP50.push(pct(await timeCalls(kit), 50));
      sdkP50.push(pct(await timeCalls(sdk), 50));
    } else {
      sdkP50.push(pct(await timeCalls(sdk), 50));
      kitP50.push(pct(await timeCalls(kit), 50));
    }
  }
  const kitMs = pct(kitP50, 50);
  const sdkMs = pct(sdkP50, 50);
  const ratio = kitMs / sdkMs;
  console.log(
    `tools/call round trip over InMemoryTransport (${ROUNDS} rounds x ${CALLS} calls, median of round p50s)`,
  );
  console.log(`  kit:            ${(kitMs * 1000).toFixed(1)} µs`);
  console.log(`  SDK McpServer:  ${(sdkMs * 1000).toFixed(1)} µs`);
  console.log(`  ratio kit/SDK:  ${ratio.toFixed(3)} (target <= 1.10) ${ratio <= 1.1 ? "OK" : "OVER"}`);

  const server = createServer<undefined, { on: boolean }>({
    name: "bench",
    version: "0",
    reasons: defineReasons({}),
    context: () => undefined,
    tools: fortyTools(),
    gate: { load: async () => ({ on: true }), maxAgeMs: 60_000, initial: { on: false } },
  });
  const listTimes: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t0 = performance.now();
    server.listTools();
    listTimes.push(performance.now() - t0);
  }
  const p50 = pct(listTimes, 50);
  console.log(`tools/list of 40 tools, server side (2000 runs)`);
  console.log(
    `  p50 ${(p50 * 1000).toFixed(1)} µs, p95 ${(pct(listTimes, 95) * 1000).toFixed(1)} µs (target < 1 ms) ${p50 < 1 ? "OK" : "OVER"}`,
  );
  await kit.close();
  await sdk.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
