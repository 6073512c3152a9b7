import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { Notebook } from "../src/example/domain/notebook.js";
import { createKitHttpHandler } from "../src/http/handler.js";
import { newClient } from "../src/testing/clients.js";
import { anyScopes } from "./helpers.js";
import {
  bearer,
  call,
  endSession,
  initialize,
  openSession,
  post,
  secretOn,
  serve,
  type Tokens,
} from "./http-raw.js";

/**
 * The 2025-era sessions one user may hold, over real HTTP: one user (or one leaked token) cannot
 * take the sessions every other user needs, and a user's sessions survive a refreshed token.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const TOKENS: Tokens = {
  a: { extra: { subject: "user:alice" } },
  b: { extra: { subject: "user:bob" } },
  c: { extra: { subject: "user:carol" } },
};

describe("sessions per user", () => {
  it("a user past the cap loses its own least recently used sessions; another user is not touched", async () => {
    const { http } = await serve(TOKENS, {}, cleanups);
    const bob = await openSession(http.url, "b");
    const cap = 32; // the default
    const alice: string[] = [];
    for (let i = 0; i < cap; i++) alice.push(await openSession(http.url, "a"));
    // Alice's first session is used again: the least recently used are now her 2nd, 3rd, ...
    expect((await secretOn(http.url, "a", alice[0] as string, "first")).secret).toBe("SECRET-first");
    const past = 8;
    for (let i = 0; i < past; i++) alice.push(await openSession(http.url, "a"));
    expect(http.liveSessions()).toBe(cap + 1);
    const evicted = alice.slice(1, 1 + past);
    const kept = [alice[0] as string, ...alice.slice(1 + past)];
    for (const sid of evicted) {
      const r = await secretOn(http.url, "a", sid, "gone");
      expect(r).toMatchObject({ status: 404, error: { code: -32001 } });
    }
    for (const sid of kept) expect((await secretOn(http.url, "a", sid, "kept")).secret).toBe("SECRET-kept");
    // Bob's session lives on, and Bob opens another and is served.
    expect((await secretOn(http.url, "b", bob, "bob")).secret).toBe("SECRET-bob");
    const bob2 = await openSession(http.url, "b");
    expect((await secretOn(http.url, "b", bob2, "bob2")).secret).toBe("SECRET-bob2");
    expect(http.liveSessions()).toBe(cap + 2);
  });

  it("a user whose every session has a call in flight gets 429 for another, and nothing of theirs is closed", async () => {
    const s = await serve(TOKENS, { maxSessionsPerUser: 2 }, cleanups);
    const url = s.http.url;
    const [a1, a2] = [await openSession(url, "a"), await openSession(url, "a")];
    const held = [
      post(url, call(5, "hold", { key: "h1" }), bearer("a", a1)),
      post(url, call(5, "hold", { key: "h2" }), bearer("a", a2)),
    ];
    await Promise.all([s.entered("h1"), s.entered("h2")]);
    const refused = await post(url, initialize(), bearer("a"));
    expect(refused.status).toBe(429);
    expect(refused.messages[0]).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/Too many sessions for this user \(2\)/) },
    });
    expect(refused.session).toBeNull();
    // Bob is served meanwhile.
    const bob = await openSession(url, "b");
    expect((await secretOn(url, "b", bob, "bob")).secret).toBe("SECRET-bob");
    s.release("h1");
    s.release("h2");
    const answers = await Promise.all(held);
    expect(answers.map((r) => r.messages[0])).toEqual([
      expect.objectContaining({
        id: 5,
        result: expect.objectContaining({ structuredContent: { key: "h1" } }),
      }),
      expect.objectContaining({
        id: 5,
        result: expect.objectContaining({ structuredContent: { key: "h2" } }),
      }),
    ]);
    // With the calls answered, the next session takes the place of the least recently used.
    const a3 = await openSession(url, "a");
    expect(s.http.liveSessions()).toBe(3);
    expect((await secretOn(url, "a", a3, "a3")).secret).toBe("SECRET-a3");
    expect((await secretOn(url, "a", a1, "a1")).status).toBe(404);
    expect((await secretOn(url, "a", a2, "a2")).secret).toBe("SECRET-a2");
  });

  it("without a token verifier there are no users to keep apart: one client's new session closes no other's", async () => {
    // An endpoint behind a proxy that authenticates (createKitHttpHandler without a verifier)
    const handler = createKitHttpHandler(createExampleServer({ notebook: new Notebook() }), {
      caller: anyScopes,
      allowedHosts: ["kit.test"],
      legacySessions: { maxSessionsPerUser: 2 },
      log: () => undefined,
    });
    cleanups.push(() => handler.close());
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const postTo = (body: unknown, sid?: string) =>
      handler.fetch(
        new Request("http://kit.test/mcp", {
          method: "POST",
          headers: sid ? { ...headers, "mcp-session-id": sid } : headers,
          body: JSON.stringify(body),
        }),
      );
    const sids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const opened = await postTo(initialize());
      expect(opened.status).toBe(200);
      await opened.text();
      sids.push(opened.headers.get("mcp-session-id") as string);
    }
    expect(handler.liveSessions()).toBe(4);
    for (const sid of sids) {
      const listed = await postTo({ jsonrpc: "2.0", id: 2, method: "tools/list" }, sid);
      expect(listed.status).toBe(200);
      expect(await listed.text()).toContain('"tools"');
    }
  });

  it("the endpoint's cap still answers 503 once users together reach it", async () => {
    const { http } = await serve(TOKENS, { maxSessions: 3, maxSessionsPerUser: 2 }, cleanups);
    for (let i = 0; i < 3; i++) await openSession(http.url, "a");
    await openSession(http.url, "b");
    expect(http.liveSessions()).toBe(3);
    const c = await post(http.url, initialize(), bearer("c"));
    expect(c.status).toBe(503);
    expect(c.messages[0]).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/Too many sessions \(3\)/) },
    });
  });
});

describe("a request being answered", () => {
  it("keeps its session from closing for idleness while it streams; idle afterwards, the session closes", async () => {
    let now = 0;
    const s = await serve(TOKENS, { idleMs: 60_000, now: () => now }, cleanups);
    const a = await openSession(s.http.url, "a");
    const held = post(s.http.url, call(3, "hold", { key: "long" }), bearer("a", a));
    await s.entered("long");
    now = 120_000;
    await openSession(s.http.url, "b"); // an initialize sweeps idle sessions first
    expect(s.http.liveSessions()).toBe(2);
    s.release("long");
    expect((await held).messages[0]).toMatchObject({ id: 3, result: { structuredContent: { key: "long" } } });
    now = 300_000;
    await openSession(s.http.url, "b");
    expect(s.http.liveSessions()).toBe(1);
    expect((await secretOn(s.http.url, "a", a, "late")).status).toBe(404);
  });
});

describe("sessions per user (property)", () => {
  it("whatever users do, each holds at most the cap, loses only its own least recently used, and is served on the rest", async () => {
    const CAP = 2;
    const MAX = 5;
    const users = ["a", "b", "c"] as const;
    const step = fc.record({
      user: fc.constantFrom(...users),
      kind: fc.constantFrom("open", "open", "use", "end"),
      pick: fc.nat(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 24 }), async (steps) => {
        const local: (() => Promise<void>)[] = [];
        const { http } = await serve(TOKENS, { maxSessions: MAX, maxSessionsPerUser: CAP }, local);
        // The model: each user's live sessions, least recently used first; and every one closed.
        const live = new Map<string, string[]>(users.map((u) => [u, []]));
        const gone: [string, string][] = [];
        const total = () => [...live.values()].reduce((n, l) => n + l.length, 0);
        try {
          for (const { user, kind, pick } of steps) {
            const mine = live.get(user) as string[];
            if (kind === "open") {
              if (mine.length < CAP && total() >= MAX) {
                expect((await post(http.url, initialize(), bearer(user))).status).toBe(503);
                continue;
              }
              if (mine.length === CAP) gone.push([user, mine.shift() as string]);
              mine.push(await openSession(http.url, user));
            } else if (mine.length > 0) {
              const [sid] = mine.splice(pick % mine.length, 1) as [string];
              if (kind === "use") {
                expect((await secretOn(http.url, user, sid, user)).secret).toBe(`SECRET-${user}`);
                mine.push(sid);
              } else {
                expect(await endSession(http.url, user, sid)).toBe(200);
                gone.push([user, sid]);
              }
            }
            expect(http.liveSessions()).toBe(total());
          }
          for (const [user, sids] of live)
            for (const sid of sids)
              expect((await secretOn(http.url, user, sid, user)).secret).toBe(`SECRET-${user}`);
          for (const [user, sid] of gone)
            expect((await secretOn(http.url, user, sid, user)).status).toBe(404);
        } finally {
          for (const c of local) await c();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe("a refreshed token", () => {
  const REFRESHING: Tokens = {
    "sam-1": { extra: { subject: "user:sam", tokenId: "t1", issuedAt: 1 } },
    "sam-2": { extra: { subject: "user:sam", tokenId: "t2", issuedAt: 2 } },
    "sue-1": { extra: { subject: "user:sue", tokenId: "t3", issuedAt: 3 } },
    // A verifier that names no subject: the owner is all of extra, per-token fields included.
    "anon-1": { extra: { tokenId: "t4" } },
  };

  it("of the same subject keeps the SDK client's session; another subject's token is refused on it", async () => {
    const { http } = await serve(REFRESHING, {}, cleanups);
    let token = "sam-1";
    const sessions = new Set<string>();
    const client = newClient();
    await client.connect(
      new StreamableHTTPClientTransport(new URL(http.url), {
        fetch: async (url, init) => {
          const headers = new Headers(init?.headers);
          headers.set("authorization", `Bearer ${token}`);
          const res = await fetch(url, { ...init, headers });
          const sid = res.headers.get("mcp-session-id");
          if (sid) sessions.add(sid);
          return res;
        },
      }),
    );
    cleanups.push(() => client.close());
    const ask = async (who: string) =>
      (await client.callTool({ name: "secret", arguments: { who } })).structuredContent;
    expect(await ask("before")).toEqual({ secret: "SECRET-before" });
    token = "sam-2";
    expect(await ask("after")).toEqual({ secret: "SECRET-after" });
    expect(sessions.size).toBe(1);
    expect(http.liveSessions()).toBe(1);
    const [sid] = [...sessions];
    expect(await secretOn(http.url, "sue-1", sid as string, "sue")).toMatchObject({ status: 404 });
    expect(await ask("still")).toEqual({ secret: "SECRET-still" });
  });

  it("from a verifier that names no subject is told in the log, once, when a session opens", async () => {
    const s = await serve(REFRESHING, {}, cleanups);
    await openSession(s.http.url, "anon-1");
    await openSession(s.http.url, "anon-1");
    await openSession(s.http.url, "sam-1");
    const told = s.logs.filter((l) => l.includes("subject"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/extra\.subject/);
  });
});
