/** The testing entry's record-and-replay load generator, against the example server over HTTP. */
import { Agent } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { recordToolCall, replayToolCall } from "../src/testing/replay.js";
import { type HttpHandle, serveHttp, staticTokenVerifier } from "../src/transports.js";

const TOKEN = "replay-token";
let http: HttpHandle;
const agent = new Agent({ keepAlive: true });

beforeAll(async () => {
  http = await serveHttp(createExampleServer(), {
    port: 0,
    verifier: staticTokenVerifier(TOKEN, ["example:read", "example:write"]),
  });
});
afterAll(async () => {
  agent.destroy();
  await http.close();
});

describe.each(["legacy", "modern"] as const)("record and replay, %s era", (era) => {
  it("replays a recorded call with other arguments and another tool, and returns error results", async () => {
    const { call, close } = await recordToolCall(http.url, {
      era,
      token: TOKEN,
      calls: async (client) => {
        await client.callTool({ name: "add_note", arguments: { text: "recorded" } });
      },
    });
    try {
      expect(call.body["method"]).toBe("tools/call");
      const added = await replayToolCall(agent, call, { id: 9001, arguments: { text: "replayed ünïcode" } });
      expect(added.isError).toBeFalsy();
      const note = added.structuredContent?.["note"] as { id: unknown; text: string };
      expect(note.text).toBe("replayed ünïcode");
      // Another tool through the same recorded request (the 2026-07-28 header names it too)
      const got = await replayToolCall(agent, call, {
        id: 9002,
        name: "get_note",
        arguments: { id: note.id },
      });
      expect(got.structuredContent?.["note"]).toMatchObject({ text: "replayed ünïcode" });
      // An error result comes back for the caller to judge, in the kit's error shape
      const missing = await replayToolCall(agent, call, {
        id: 9003,
        name: "get_note",
        arguments: { id: 424242 },
      });
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent?.["error"]).toMatchObject({ reason: expect.any(String) });
    } finally {
      await close();
    }
  });
});

it("throws when the server does not answer with a result", async () => {
  const { call, close } = await recordToolCall(http.url, {
    era: "modern",
    token: TOKEN,
    calls: async (client) => {
      await client.callTool({ name: "list_notes", arguments: {} });
    },
  });
  await close();
  const unauthorized = { ...call, headers: { ...call.headers, authorization: "Bearer wrong" } };
  await expect(replayToolCall(agent, unauthorized, { id: 7, arguments: {} })).rejects.toThrow(/HTTP 401/);
});
