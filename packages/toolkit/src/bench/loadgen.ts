/**
 * The benchmark's HTTP load generator: each connection is opened by a real v2 SDK client, whose
 * tools/call is recorded and then replayed over keep-alive node:http (`@mcpforge/toolkit/testing`'s
 * recordToolCall and replayToolCall), so the clients do not compete with the server for two cores.
 */
import type { Agent } from "node:http";
import type { Era } from "../testing/clients.js";
import { type RecordedCall, recordToolCall, replayToolCall } from "../testing/replay.js";
import { argsOf, BENCH_TOKEN, TOOL_NAME } from "./tool-data.js";

export interface Opened {
  wire: RecordedCall;
  close(): Promise<void>;
}

/** Opens one client the SDK's way and returns the tools/call request it sent, to replay. */
export async function openClient(url: string, era: Era): Promise<Opened> {
  const { call, close } = await recordToolCall(url, {
    era,
    token: BENCH_TOKEN,
    clientName: "bench",
    calls: async (client) => {
      await client.listTools();
      await client.callTool({ name: TOOL_NAME, arguments: argsOf(0) });
    },
  });
  return { wire: call, close };
}

/** One replayed tools/call; throws unless the server answered it with a successful result. */
export async function replayCall(agent: Agent, wire: RecordedCall, id: number, i: number): Promise<void> {
  const result = await replayToolCall(agent, wire, { id, arguments: argsOf(i) });
  if (result.isError || result.structuredContent?.["total"] !== 3) {
    throw new Error(`tools/call under load failed: ${JSON.stringify(result).slice(0, 300)}`);
  }
}
