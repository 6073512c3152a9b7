/**
 * Two MCP servers (each its own daemon connection and its own SDK client) reading one consumer group
 * at the same time, as two agents sharing a queue would: while work items are made, each event
 * reaches exactly one of them, and none is lost.
 */
import { DaemonClient } from "@mcpforge/chainmail";
import { connectInMemory, type Session, session } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChainmailMcpServer } from "../src/index.js";
import { type McpEnv, startMcpEnv } from "./helpers.js";

let m: McpEnv;
const others: Array<{ close(): Promise<void> }> = [];

type Events = { events: Array<{ id: number; kind: string; item_id?: string }>; next_cursor: number };

/** A second MCP server on the same daemon: a process of its own would have exactly this. */
async function secondServer(): Promise<Session> {
  const daemonClient = new DaemonClient({ socketPath: m.env.home.socketPath, client: "mcp" });
  const kit = createChainmailMcpServer({ client: daemonClient, home: m.env.home, log: () => undefined });
  const conn = await connectInMemory(kit, { scopes: [] });
  others.push({
    close: async () => {
      await conn.close();
      daemonClient.close();
    },
  });
  return session(conn.client);
}

beforeAll(async () => {
  m = await startMcpEnv({ cache: "enabled = false" });
});
afterAll(async () => {
  for (const o of others) await o.close();
  await m?.close();
});

describe("two MCP servers sharing one group", () => {
  it("each event reaches exactly one of them, none lost", async () => {
    const b = await secondServer();
    const readers = [m.tools, b];
    const read = { group: "shared", kinds: ["item"], limit: 3 };
    // The group starts at the log's end.
    await m.tools.ok<Events>("read_events", read);

    const made: string[] = [];
    let done = false;
    const producer = (async () => {
      for (let i = 0; i < 30; i++) {
        const r = await m.daemonClient.call("item.create", { type: "task", title: `job ${i}`, area: "work" });
        made.push(r.item.id);
        if (i % 3 === 0) await new Promise((r) => setTimeout(r, 5));
      }
      done = true;
    })();
    const got: Array<Array<string>> = [[], []];
    await Promise.all(
      readers.map(async (tools, n) => {
        for (;;) {
          const finished = done;
          const r = await tools.ok<Events>("read_events", { ...read, wait_seconds: finished ? 0 : 1 });
          got[n]!.push(...r.events.filter((e) => e.kind === "item").map((e) => e.item_id!));
          if (finished && r.events.length === 0) return;
        }
      }),
    );
    await producer;
    const all = [...got[0]!, ...got[1]!];
    // None twice, none lost.
    expect(all.length, `delivered twice: ${all.filter((id, i) => all.indexOf(id) !== i).length}`).toBe(
      new Set(all).size,
    );
    expect(new Set(all)).toEqual(new Set(made));
  });
});
