/**
 * `afterResult`: work a handler defers until its result has been handed to the transport, and that
 * never runs for a cancelled call, an error, a result the output schema refuses, or a failed send.
 */
import { InMemoryTransport } from "@modelcontextprotocol/client";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { type Connected, connectInMemory, newClient } from "../src/testing/clients.js";
import { serverOf, tool, z } from "./helpers.js";

const annotations = { readOnly: false, destructive: false, idempotent: false, openWorld: false };
let ran: string[] = [];
let release: () => void = () => undefined;
let open: Connected | undefined;
afterEach(async () => {
  release();
  await open?.close();
  open = undefined;
  ran = [];
});

const settle = () => new Promise((r) => setTimeout(r, 30));

const deferring = tool({
  name: "deferring",
  title: "Deferring",
  group: "Test",
  description: "Returns what it was given and records it once the result is out.",
  scope: null,
  input: {
    text: z.string().describe("Text"),
    wait: z.boolean().default(false).describe("Wait for the test to release it"),
    fail: z.enum(["no", "throw", "invalid"]).default("no").describe("How to fail"),
  },
  output: { text: z.string() },
  annotations,
  summary: (r) => r.text,
  handler: async ({ text, wait, fail }, { afterResult }) => {
    afterResult(() => void ran.push(text));
    if (wait) await new Promise<void>((r) => (release = r));
    if (fail === "throw") throw new Error("no");
    return fail === "invalid" ? ({ text: 7 } as unknown as { text: string }) : { text };
  },
});

describe.each(["legacy", "modern"] as const)("afterResult (%s era)", (era) => {
  it("runs once the result is out, and not for an error or a result the schema refuses", async () => {
    const { kit } = serverOf([deferring]);
    open = await connectInMemory(kit, { scopes: [] }, { era });
    const r = await open.client.callTool({ name: "deferring", arguments: { text: "a" } });
    expect(r.isError).toBeFalsy();
    await settle();
    expect(ran).toEqual(["a"]);
    expect(
      (await open.client.callTool({ name: "deferring", arguments: { text: "b", fail: "throw" } })).isError,
    ).toBe(true);
    expect(
      (await open.client.callTool({ name: "deferring", arguments: { text: "c", fail: "invalid" } })).isError,
    ).toBe(true);
    await settle();
    expect(ran).toEqual(["a"]);
  });

  it("never runs for a call cancelled before its result", async () => {
    const { kit } = serverOf([deferring]);
    open = await connectInMemory(kit, { scopes: [] }, { era });
    const ac = new AbortController();
    const call = open.client
      .callTool({ name: "deferring", arguments: { text: "cancelled", wait: true } }, { signal: ac.signal })
      .catch((e: Error) => e);
    await settle();
    ac.abort();
    expect(await call).toBeInstanceOf(Error);
    await settle();
    release();
    await settle();
    expect(ran).toEqual([]);
    // The connection still works, and the next call's work runs.
    await open.client.callTool({ name: "deferring", arguments: { text: "next" } });
    await settle();
    expect(ran).toEqual(["next"]);
  });
});

describe("afterResult and the transport", () => {
  it("waits for the transport's send to finish, and skips a send that fails", async () => {
    const { kit } = serverOf([deferring]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const order: string[] = [];
    let failNext = false;
    const send = serverSide.send.bind(serverSide);
    serverSide.send = async (message: JSONRPCMessage, options) => {
      if (!("result" in message) || !("structuredContent" in (message.result as object)))
        return send(message, options);
      order.push("sending");
      await settle();
      if (failNext) throw new Error("the pipe broke");
      await send(message, options);
      order.push("sent");
    };
    await kit.ready();
    const server = kit.protocolInstance({ scopes: [] }, { listening: true });
    await server.connect(serverSide);
    const client = newClient();
    await client.connect(clientSide);
    try {
      ran = [];
      const call = client.callTool({ name: "deferring", arguments: { text: "x" } });
      await settle();
      await call;
      await settle();
      expect(order).toEqual(["sending", "sent"]);
      expect(ran).toEqual(["x"]);
      // A result that never goes out (the response is lost, so the client times out).
      failNext = true;
      const lost = client
        .callTool({ name: "deferring", arguments: { text: "lost" } }, { timeout: 300 })
        .catch((e: Error) => e);
      expect(await lost).toBeInstanceOf(Error);
      await settle();
      expect(ran).toEqual(["x"]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("runs as callTool returns when there is no transport", async () => {
    const { kit } = serverOf([deferring]);
    const r = await kit.callTool("deferring", { text: "direct" }, { scopes: [] });
    expect(r.isError).toBeFalsy();
    await settle();
    expect(ran).toEqual(["direct"]);
  });
});
