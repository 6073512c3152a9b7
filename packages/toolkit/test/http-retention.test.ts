import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { createKitHttpHandler, type KitHttpHandler } from "../src/http/handler.js";

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const envelope = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

let handler: KitHttpHandler | undefined;
afterEach(async () => {
  await handler?.close();
  handler = undefined;
});

/** Sends one POST and reads the whole answer; returns the request the handler was given. */
async function answered(body: unknown, headers: Record<string, string> = {}) {
  handler ??= createKitHttpHandler(createExampleServer(), {
    caller: { scopes: ["example:read"] },
    allowedHosts: ["kit.test"],
    log: () => undefined,
  });
  const request = new Request("http://kit.test/mcp", {
    method: "POST",
    headers: { ...HEADERS, ...headers },
    body: JSON.stringify(body),
  });
  const res = await handler.fetch(request);
  await res.text();
  return { request, status: res.status };
}

// A request object the handler derives from the caller's hooks itself onto the caller's abort
// signal and stays reachable from it until a finalizer runs after GC: under load that kept about
// 10 MB more alive and let V8 grow a larger heap. The handler answers from the caller's request.
describe("HTTP requests leave nothing attached to the caller's request", () => {
  it("a 2026-07-28 tools/list", async () => {
    const { request, status } = await answered(
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope } },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
    );
    expect(status).toBe(200);
    expect(getEventListeners(request.signal, "abort")).toHaveLength(0);
  });

  it("a 2025 initialize", async () => {
    const { request, status } = await answered({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    expect(status).toBe(200);
    expect(getEventListeners(request.signal, "abort")).toHaveLength(0);
  });
});
