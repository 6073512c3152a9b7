import { request as nodeRequest } from "node:http";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createKitHttpHandler, type KitHttpHandler } from "../src/http/handler.js";
import { newClient } from "../src/testing/clients.js";
import { type HttpHandle, serveHttp, type TokenVerifier } from "../src/transports.js";
import { serverOf, tool, z } from "./helpers.js";

/**
 * An attacker over HTTP against the kit's endpoint: a second user of the same client application, a
 * client with another client's or an expired token, a web page. A's tool results carry a secret.
 */

type Json = Record<string, unknown>;
const URL_ = "http://kit.test/mcp";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** tA and tB: two users of one client application (one client id); tC another client; tX expired. */
const TOKENS: Record<string, { clientId: string; user: string; expiresIn: number; extra?: Json }> = {
  tA: { clientId: "https://app.example/client.json", user: "alice", expiresIn: 600 },
  tB: { clientId: "https://app.example/client.json", user: "bob", expiresIn: 600 },
  tC: { clientId: "other-client", user: "carol", expiresIn: 600 },
  tX: { clientId: "https://app.example/client.json", user: "alice", expiresIn: -600 },
  // A verifier that names its user in extra.subject, beside a grant that changes (narrowed, stepped up)
  tS1: { clientId: "app", user: "sam", expiresIn: 600, extra: { subject: "user:sam", grant: "folder Work" } },
  tS2: { clientId: "app", user: "sam", expiresIn: 600, extra: { subject: "user:sam", grant: "everything" } },
  tS3: { clientId: "app", user: "sue", expiresIn: 600, extra: { subject: "user:sue", grant: "folder Work" } },
};
const verifier: TokenVerifier = {
  verifyAccessToken: async (token) => {
    const t = TOKENS[token];
    if (!t) throw new Error("unknown token");
    return {
      token,
      clientId: t.clientId,
      scopes: ["notes:read"],
      expiresAt: Math.floor(Date.now() / 1000) + t.expiresIn,
      extra: t.extra ?? { user: t.user },
    };
  },
};

function kitOf() {
  const runs: string[] = [];
  const secret = tool({
    name: "secret",
    title: "Secret",
    group: "Test",
    description: "Returns a secret of the caller's.",
    scope: null,
    input: { who: z.string().max(40).describe("Whose secret") },
    output: { secret: z.string() },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    summary: () => "a secret",
    handler: ({ who }) => {
      runs.push(who);
      return { secret: `SECRET-${who}` };
    },
  });
  const confirm = tool({
    name: "confirm",
    title: "Confirm",
    group: "Test",
    description: "Takes a step once the person says yes.",
    scope: null,
    input: { who: z.string().max(40).describe("Whose step") },
    output: { done: z.boolean() },
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    summary: (r) => (r.done ? "done" : "held"),
    handler: async ({ who }, { ask }) => {
      const a = await ask({
        message: `Step for ${who}?`,
        fields: { yes: { type: "boolean", title: "Yes" } },
      });
      if (a.action !== "accept" || !a.content.yes) return { done: false };
      runs.push(`step-${who}`);
      return { done: true };
    },
  });
  return { ...serverOf([secret, confirm]), runs };
}

function handlerOf(kit = kitOf()) {
  const handler = createKitHttpHandler(kit.kit, {
    verifier,
    allowedHosts: ["kit.test", "localhost"],
    log: () => undefined,
  });
  cleanups.push(() => handler.close());
  return { handler, runs: kit.runs };
}

interface Answer {
  status: number;
  text: string;
  session: string | null;
}

async function send(
  h: KitHttpHandler,
  method: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await h.fetch(
    new Request(URL_, {
      method,
      headers: { ...HEADERS, ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    }),
  );
  // A GET stream never ends by itself: its status and headers are the answer.
  if (method === "GET" && res.ok) {
    await res.body?.cancel();
    return { status: res.status, text: "", session: res.headers.get("mcp-session-id") };
  }
  return { status: res.status, text: await res.text(), session: res.headers.get("mcp-session-id") };
}

/** The JSON-RPC messages of an answer, whether it came as JSON or as an SSE stream. */
function messagesOf(a: Answer): Json[] {
  if (a.text.startsWith("{") || a.text.startsWith("[")) return [JSON.parse(a.text)].flat();
  return [...a.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] as string));
}

const bearer = (token: string, session?: string) => ({
  authorization: `Bearer ${token}`,
  ...(session ? { "mcp-session-id": session } : {}),
});
const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: { form: {} } },
    clientInfo: { name: "raw", version: "0" },
  },
};
const call = (id: number | string, who: string, name = "secret") => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: { who } },
});

async function openSession(
  h: KitHttpHandler,
  token: string,
  protocolVersion = "2025-11-25",
): Promise<string> {
  const opened = await send(
    h,
    "POST",
    { ...initialize, params: { ...initialize.params, protocolVersion } },
    bearer(token),
  );
  expect(opened.status).toBe(200);
  const sid = opened.session as string;
  await send(h, "POST", { jsonrpc: "2.0", method: "notifications/initialized" }, bearer(token, sid));
  return sid;
}

describe("2025-era sessions belong to the user who opened them", () => {
  it("another user of the same client application gets 404 on A's session for every method, and A's session lives on", async () => {
    const { handler, runs } = handlerOf();
    const a = await openSession(handler, "tA");
    for (const token of ["tB", "tC"]) {
      const attempts = [
        await send(handler, "POST", call(7, `B-${token}`), bearer(token, a)),
        await send(handler, "POST", { jsonrpc: "2.0", id: 8, method: "tools/list" }, bearer(token, a)),
        await send(handler, "GET", undefined, bearer(token, a)),
        await send(
          handler,
          "POST",
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
          bearer(token, a),
        ),
        await send(handler, "DELETE", undefined, bearer(token, a)),
      ];
      expect(attempts.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
      for (const r of attempts) expect(messagesOf(r)[0]).toMatchObject({ error: { code: -32001 } });
    }
    expect(runs).toEqual([]);
    expect(handler.liveSessions()).toBe(1);
    const mine = messagesOf(await send(handler, "POST", call(9, "A"), bearer("tA", a)));
    expect(mine[0]).toMatchObject({ id: 9, result: { structuredContent: { secret: "SECRET-A" } } });
  });

  it("a user named in extra.subject keeps the session when the rest of extra changes; another subject gets 404", async () => {
    const { handler } = handlerOf();
    const s = await openSession(handler, "tS1");
    expect((await send(handler, "POST", call(3, "S"), bearer("tS3", s))).status).toBe(404);
    const again = messagesOf(await send(handler, "POST", call(4, "S"), bearer("tS2", s)));
    expect(again[0]).toMatchObject({ id: 4, result: { structuredContent: { secret: "SECRET-S" } } });
  });

  it("an expired token of A's own user gets 401 and runs nothing", async () => {
    const { handler, runs } = handlerOf();
    const a = await openSession(handler, "tA");
    const r = await send(handler, "POST", call(3, "expired"), bearer("tX", a));
    expect(r.status).toBe(401);
    expect(runs).toEqual([]);
  });

  it("A's question is answered by A alone: an answer posted by B on A's session, on B's own, or replayed, is no consent", async () => {
    const { handler, runs } = handlerOf();
    let sessionA: string | undefined;
    let sessionB: string | undefined;
    const attacks: number[] = [];
    const client = newClient({
      elicitation: {
        modes: ["form"],
        answer: async () => {
          // While the server waits for A's person, B answers yes under every id it can guess.
          sessionB ??= await openSession(handler, "tB");
          for (const id of [0, 1, 2, 3]) {
            const forged = { jsonrpc: "2.0", id, result: { action: "accept", content: { yes: true } } };
            attacks.push((await send(handler, "POST", forged, bearer("tB", sessionA))).status);
            await send(handler, "POST", forged, bearer("tB", sessionB));
          }
          return { action: "decline" };
        },
      },
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(URL_), {
        requestInit: { headers: { authorization: "Bearer tA" } },
        fetch: async (url, init) => {
          const res = await handler.fetch(new Request(url, init));
          sessionA ??= res.headers.get("mcp-session-id") ?? undefined;
          return res;
        },
      }),
    );
    cleanups.push(() => client.close());
    const result = await client.callTool({ name: "confirm", arguments: { who: "A" } });
    expect(attacks).toEqual([404, 404, 404, 404]);
    expect(result.structuredContent).toEqual({ done: false });
    expect(runs).toEqual([]);
    // A replay of an answer after its question was answered changes nothing either.
    const replay = { jsonrpc: "2.0", id: 0, result: { action: "accept", content: { yes: true } } };
    expect((await send(handler, "POST", replay, bearer("tA", sessionA))).status).toBe(202);
    expect(runs).toEqual([]);
    expect((await client.callTool({ name: "secret", arguments: { who: "A" } })).structuredContent).toEqual({
      secret: "SECRET-A",
    });
  });

  it("session ids are random v4 UUIDs, and one ended by DELETE is not served again", async () => {
    const { handler } = handlerOf();
    const ids = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => openSession(handler, "tA")));
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    const [first] = ids as [string];
    expect((await send(handler, "DELETE", undefined, bearer("tA", first))).status).toBe(200);
    expect((await send(handler, "POST", call(2, "again"), bearer("tA", first))).status).toBe(404);
    expect(handler.liveSessions()).toBe(ids.length - 1);
  });
});

describe("bodies and batches", () => {
  it("a batch whose requests share an id is refused whole with -32600, and no tool runs", async () => {
    const { handler, runs } = handlerOf();
    // 2025-03-26, the one revision with batches (test/http-batches.test.ts has the others).
    const a = await openSession(handler, "tA", "2025-03-26");
    const r = await send(handler, "POST", [call(5, "one"), call(5, "two")], bearer("tA", a));
    expect(r.status).toBe(400);
    expect(messagesOf(r)).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/share an id/) } },
    ]);
    expect(runs).toEqual([]);
    // Distinct ids are served, each answered.
    const ok = messagesOf(await send(handler, "POST", [call(6, "one"), call(7, "two")], bearer("tA", a)));
    expect(ok.map((m) => m["id"]).sort()).toEqual([6, 7]);
    expect(runs.sort()).toEqual(["one", "two"]);
  });

  it("a notification named like a request, and a response posted as one, run nothing", async () => {
    const { handler, runs } = handlerOf();
    const a = await openSession(handler, "tA");
    const { id: _id, ...notification } = call(1, "notified");
    expect((await send(handler, "POST", notification, bearer("tA", a))).status).toBe(202);
    const response = { jsonrpc: "2.0", id: 4, result: { content: [] } };
    expect((await send(handler, "POST", response, bearer("tA", a))).status).toBe(202);
    expect(runs).toEqual([]);
  });

  it("deeply nested JSON is answered, and the server stays up", async () => {
    const { handler, runs } = handlerOf();
    const a = await openSession(handler, "tA");
    const deep = `${"[".repeat(300_000)}${"]".repeat(300_000)}`;
    const body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"secret","arguments":{"who":"x","deep":${deep}}}}`;
    const [answer] = messagesOf(await send(handler, "POST", body, bearer("tA", a)));
    expect(answer).toMatchObject({
      id: 3,
      result: { isError: true, structuredContent: { error: { reason: "INVALID_ARGUMENT" } } },
    });
    expect(runs).toEqual([]);
    const [next] = messagesOf(await send(handler, "POST", call(4, "after"), bearer("tA", a)));
    expect(next).toMatchObject({ id: 4, result: { structuredContent: { secret: "SECRET-after" } } });
  });
});

describe("a web page", () => {
  let http: HttpHandle;

  async function raw(headers: Record<string, string>, method = "POST", body = JSON.stringify(initialize)) {
    const url = new URL(http.url);
    return new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = nodeRequest(
        { host: url.hostname, port: url.port, path: url.pathname, method, headers },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, headers: res.headers });
        },
      );
      req.on("error", reject);
      req.end(method === "POST" ? body : undefined);
    });
  }

  it("is refused by Host, Origin, preflight and content type, and never reaches a tool", async () => {
    const kit = kitOf();
    http = await serveHttp(kit.kit, { port: 0, verifier, log: () => undefined });
    cleanups.push(() => http.close());
    const host = new URL(http.url).host;
    const page = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    // DNS rebinding: the page's own name in Host, with a token it may have guessed.
    expect(
      (await raw({ ...page, host: `rebind.example:${new URL(http.url).port}`, ...bearer("tA") })).status,
    ).toBe(403);
    for (const origin of ["http://evil.example", "null", "https://localhost.evil.example"]) {
      expect((await raw({ ...page, host, origin, ...bearer("tA") })).status).toBe(403);
      const preflight = await raw(
        {
          host,
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization",
        },
        "OPTIONS",
      );
      expect(preflight.status).toBe(403);
      expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    }
    // A simple cross-origin POST (text/plain, no preflight) from a loopback page: no token, 401;
    // with one (and a session), the content type is refused before anything runs, in either era.
    const simple = { host, origin: "http://localhost:9", "content-type": "text/plain", accept: page.accept };
    expect((await raw(simple, "POST", JSON.stringify(call(1, "page")))).status).toBe(401);
    expect((await raw({ ...simple, ...bearer("tA") })).status).toBe(415);
    expect(http.liveSessions()).toBe(0);
    const opened = await fetch(http.url, {
      method: "POST",
      headers: { ...page, ...bearer("tA") },
      body: JSON.stringify(initialize),
    });
    const sid = opened.headers.get("mcp-session-id") as string;
    await opened.body?.cancel();
    expect(
      (await raw({ ...simple, ...bearer("tA", sid) }, "POST", JSON.stringify(call(1, "page")))).status,
    ).toBe(415);
    const modern = { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "secret" };
    expect(
      (await raw({ ...simple, ...modern, ...bearer("tA") }, "POST", JSON.stringify(call(1, "page")))).status,
    ).toBe(415);
    expect(kit.runs).toEqual([]);
  });
});

describe("two clients on one endpoint (property)", () => {
  it("nothing of A's reaches B, B's requests on A's sessions are refused, and A is served afterwards", async () => {
    const MODERN = "2026-07-28";
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "b", version: "0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const modernHeaders = (name: string) => ({
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": name,
    });
    const step = fc.record({
      actor: fc.constantFrom("A", "B"),
      token: fc.constantFrom("tB", "tC", "tX", "nope"),
      session: fc.constantFrom("A", "B", "none", "random"),
      id: fc.constantFrom(0, 1, 2, "1"),
      kind: fc.constantFrom(
        "call",
        "list",
        "answer",
        "cancel",
        "get",
        "delete",
        "initialize",
        "modern-call",
        "batch",
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const { handler } = handlerOf();
        const a = [await openSession(handler, "tA")];
        const b = [await openSession(handler, "tB")];
        let n = 0;
        for (const s of steps) {
          n++;
          if (s.actor === "A") {
            const mine = messagesOf(await send(handler, "POST", call(s.id, `A${n}`), bearer("tA", a[0])));
            expect(mine[0]).toMatchObject({
              id: s.id,
              result: { structuredContent: { secret: `SECRET-A${n}` } },
            });
            continue;
          }
          const sid =
            s.session === "A"
              ? a[0]
              : s.session === "B"
                ? b[0]
                : s.session === "random"
                  ? crypto.randomUUID()
                  : undefined;
          const h = bearer(s.token, sid);
          const bodies: Record<string, () => Promise<Answer>> = {
            call: () => send(handler, "POST", call(s.id, `B${n}`), h),
            list: () => send(handler, "POST", { jsonrpc: "2.0", id: s.id, method: "tools/list" }, h),
            answer: () =>
              send(
                handler,
                "POST",
                { jsonrpc: "2.0", id: s.id, result: { action: "accept", content: { yes: true } } },
                h,
              ),
            cancel: () =>
              send(
                handler,
                "POST",
                { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: s.id } },
                h,
              ),
            get: () => send(handler, "GET", undefined, h),
            delete: () => send(handler, "DELETE", undefined, h),
            initialize: () => send(handler, "POST", { ...initialize, id: s.id }, h),
            "modern-call": () =>
              send(
                handler,
                "POST",
                {
                  ...call(s.id, `B${n}`),
                  params: { name: "secret", arguments: { who: `B${n}` }, _meta: envelope },
                },
                { ...h, ...modernHeaders("secret") },
              ),
            batch: () =>
              send(
                handler,
                "POST",
                [call(s.id, `B${n}`), { jsonrpc: "2.0", id: 99, method: "tools/list" }],
                h,
              ),
          };
          const r = await (bodies[s.kind] as () => Promise<Answer>)();
          expect(r.text).not.toContain("SECRET-A");
          // A 2026-07-28 request has no session: the header is ignored and B is served as B.
          if (s.session === "A" && s.kind !== "modern-call") expect(r.status).toBeGreaterThanOrEqual(400);
          if (r.session && s.kind === "initialize" && r.status === 200) b.push(r.session);
        }
        const after = messagesOf(await send(handler, "POST", call("last", "A-last"), bearer("tA", a[0])));
        expect(after[0]).toMatchObject({
          id: "last",
          result: { structuredContent: { secret: "SECRET-A-last" } },
        });
        await handler.close();
      }),
      { numRuns: 60 },
    );
  }, 60_000);
});
