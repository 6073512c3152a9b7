import { afterEach, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { createKitHttpHandler, type KitHttpHandler } from "../src/http/handler.js";
import { type Era, MODERN_REVISION } from "../src/testing/clients.js";

const caller = { scopes: ["example:read", "example:write"] };
const URL_ = "http://kit.test/mcp";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const initialize = (id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

let handlers: KitHttpHandler[] = [];
afterEach(async () => {
  await Promise.all(handlers.map((h) => h.close()));
  handlers = [];
});

function handlerOf(options: { idleMs?: number; maxSessions?: number; now?: () => number } = {}) {
  const h = createKitHttpHandler(createExampleServer(), {
    caller,
    allowedHosts: ["kit.test"],
    log: () => undefined,
    legacySessions: options,
  });
  handlers.push(h);
  return h;
}

async function post(h: KitHttpHandler, body: unknown, headers: Record<string, string> = {}) {
  const res = await h.fetch(
    new Request(URL_, {
      method: "POST",
      headers: { ...HEADERS, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  // A 2025 session may answer over SSE: take the JSON of its data line.
  const json = text.startsWith("{")
    ? JSON.parse(text)
    : JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? "null");
  return { status: res.status, json, session: res.headers.get("mcp-session-id") };
}

async function openSession(h: KitHttpHandler): Promise<string> {
  const { status, session } = await post(h, initialize());
  expect(status).toBe(200);
  expect(session).toMatch(/^[0-9a-f-]{36}$/);
  await post(h, { jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": session! });
  return session!;
}

describe("2025-era sessions over HTTP", () => {
  it("answers 400 to a request without a session id and 404 to an unknown one", async () => {
    const h = handlerOf();
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const missing = await post(h, list);
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toMatch(/Mcp-Session-Id header required/);
    const unknown = await post(h, list, { "mcp-session-id": "00000000-0000-0000-0000-000000000000" });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toMatch(/Session not found/);
    const sid = await openSession(h);
    const ok = await post(h, list, { "mcp-session-id": sid });
    expect(ok.status).toBe(200);
    expect(ok.json.result.tools.length).toBeGreaterThan(3);
  });

  it("caps live sessions with a clear 503", async () => {
    const h = handlerOf({ maxSessions: 2 });
    await openSession(h);
    await openSession(h);
    const third = await post(h, initialize());
    expect(third.status).toBe(503);
    expect(third.json.error.message).toMatch(/Too many sessions \(2\)/);
    expect(h.liveSessions()).toBe(2);
  });

  it("closes sessions left idle, so vanished clients leave nothing behind", async () => {
    let now = 0;
    const h = handlerOf({ idleMs: 60_000, now: () => now });
    const first = await openSession(h);
    await openSession(h);
    await openSession(h);
    expect(h.liveSessions()).toBe(3);
    now = 59_000;
    const list = { jsonrpc: "2.0", id: 3, method: "tools/list" };
    expect((await post(h, list, { "mcp-session-id": first })).status).toBe(200);
    now = 110_000;
    await openSession(h);
    // The two untouched sessions went; the one used at 59 s and the new one stay.
    expect(h.liveSessions()).toBe(2);
    now = 200_000;
    await openSession(h);
    expect(h.liveSessions()).toBe(1);
    expect((await post(h, list, { "mcp-session-id": first })).status).toBe(404);
  });

  it("answers a tools/call the SDK's schema refuses with -32602 in one line, not its issue dump", async () => {
    const h = handlerOf();
    const sid = await openSession(h);
    const call = { name: "list_notes", arguments: {}, task: 5 };
    const { json } = await post(
      h,
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: call },
      {
        "mcp-session-id": sid,
      },
    );
    expect(json.error.code).toBe(-32602);
    expect(json.error.message).toMatch(/^Invalid params: params\.task: .*expected object/);
    expect(json.error.message).not.toContain("\n");
  });

  it("DELETE ends a session", async () => {
    const h = handlerOf();
    const sid = await openSession(h);
    const res = await h.fetch(new Request(URL_, { method: "DELETE", headers: { "mcp-session-id": sid } }));
    expect(res.status).toBe(200);
    expect(h.liveSessions()).toBe(0);
  });
});

describe("2026-07-28 over HTTP is stateless", () => {
  it("one client's calls are served by whichever instance gets them", async () => {
    const kit = createExampleServer();
    const a = createKitHttpHandler(kit, { caller, allowedHosts: ["kit.test"], log: () => undefined });
    const b = createKitHttpHandler(createExampleServer(), {
      caller,
      allowedHosts: ["kit.test"],
      log: () => undefined,
    });
    handlers.push(a, b);
    let turn = 0;
    const seen: string[] = [];
    // A client whose every request goes to the next instance in turn, as a round-robin proxy sends it.
    const { StreamableHTTPClientTransport, Client } = await import("@modelcontextprotocol/client");
    const rr = new Client(
      { name: "rr", version: "0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await rr.connect(
      new StreamableHTTPClientTransport(new URL(URL_), {
        fetch: (url, init) => {
          const target = turn++ % 2 === 0 ? a : b;
          seen.push(target === a ? "a" : "b");
          return target.fetch(new Request(url, init));
        },
      }),
    );
    for (let i = 0; i < 4; i++) {
      const r = await rr.callTool({ name: "list_notes", arguments: {} });
      expect(r.isError).toBeFalsy();
    }
    expect(seen).toContain("a");
    expect(seen).toContain("b");
    expect(a.liveSessions() + b.liveSessions()).toBe(0);
    expect(rr.getProtocolEra()).toBe("modern");
    await rr.close();
  });
});

/** The per-request envelope a 2026-07-28 client puts in every request's params, as the v2 client sends it. */
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

type Body = { id?: number; method?: string; params?: unknown } & Record<string, unknown>;

/**
 * Sends requests as a client of `era` would: 2025 inside a session it opened, 2026-07-28 with no
 * session, the envelope in params (where params is an object to carry it) and the headers the
 * revision asks for.
 */
async function senderOf(h: KitHttpHandler, era: Era) {
  if (era === "legacy") {
    const sid = await openSession(h);
    return (body: Body | string) => post(h, body, { "mcp-session-id": sid });
  }
  return (body: Body | string) => {
    const headers: Record<string, string> = { "mcp-protocol-version": MODERN_REVISION };
    if (typeof body === "string") return post(h, body, headers);
    if (body.method) headers["mcp-method"] = body.method;
    const params = body.params;
    const isObject = typeof params === "object" && params !== null && !Array.isArray(params);
    return post(h, isObject ? { ...body, params: { ...params, _meta: ENVELOPE } } : body, headers);
  };
}

/** The server still answers a good request, in the same era (only a 2026-07-28 answer has a resultType). */
async function expectStillAnswers(send: Awaited<ReturnType<typeof senderOf>>, era: Era) {
  const { status, json } = await send({ jsonrpc: "2.0", id: 99, method: "tools/list", params: {} });
  expect(status).toBe(200);
  expect(json.result.tools.map((t: { name: string }) => t.name)).toContain("list_notes");
  expect(json.result.resultType).toBe(era === "modern" ? "complete" : undefined);
}

describe.each(["legacy", "modern"] as const)("malformed JSON-RPC over HTTP, %s era", (era) => {
  it.each([
    [
      "arguments not an object",
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "list_notes", arguments: [1] } },
      /^Invalid params: params.arguments must be an object/,
    ],
    [
      "params missing",
      { jsonrpc: "2.0", id: 6, method: "tools/call" },
      /^Invalid params: tools\/call needs params/,
    ],
    [
      "params not an object",
      { jsonrpc: "2.0", id: 7, method: "tools/list", params: "x" },
      /^Invalid params: params must be an object/,
    ],
    // Past the kit's own checks, refused by the SDK's wire schema (which answers -32603 with a dump).
    [
      "a cursor that is not a string",
      { jsonrpc: "2.0", id: 9, method: "tools/list", params: { cursor: 5 } },
      /^Invalid params: params\.cursor: .*expected string/,
    ],
  ])("%s: -32602 with one line, and the server stays up", async (_name, body, message) => {
    const send = await senderOf(handlerOf(), era);
    const { json } = await send(body);
    expect(json.error.code).toBe(-32602);
    expect(json.error.message).toMatch(message);
    expect(json.error.message).not.toContain("\n");
    expect(json.id).toBe(body.id);
    await expectStillAnswers(send, era);
  });

  it("an unknown method: -32601 naming it in one line, and the server stays up", async () => {
    const send = await senderOf(handlerOf(), era);
    const { json } = await send({ jsonrpc: "2.0", id: 8, method: "no/such", params: {} });
    expect(json.id).toBe(8);
    expect(json.error.code).toBe(-32601);
    expect(json.error.message).toMatch(/^Method not found/);
    expect(json.error.message).not.toContain("\n");
    await expectStillAnswers(send, era);
  });

  it("a body that is not JSON: 400 with -32700 and id null, and the server stays up", async () => {
    const send = await senderOf(handlerOf(), era);
    const { status, json } = await send("{not json");
    expect(status).toBe(400);
    expect(json).toMatchObject({ id: null, error: { code: -32700 } });
    expect(json.error.message).toMatch(/^Parse error/);
    expect(json.error.message).not.toContain("\n");
    await expectStillAnswers(send, era);
  });
});
