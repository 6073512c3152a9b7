import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Answer,
  bearer,
  call,
  openSession,
  post,
  read,
  secretOn,
  send,
  serve,
  type Tokens,
} from "./http-raw.js";

/**
 * What one POST may carry in a 2025-era session, over real HTTP with raw fetch: JSON-RPC batches
 * exist in protocol revision 2025-03-26 alone (2025-06-18 removed them), and a request id is one
 * request's while it is being answered.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const TOKENS: Tokens = { a: { extra: { subject: "user:alice" } } };
const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });

describe("JSON-RPC batches", () => {
  for (const version of ["2025-06-18", "2025-11-25"]) {
    it(`are refused with -32600 in a session negotiated at ${version}, and nothing in them runs`, async () => {
      const { http, runs } = await serve(TOKENS, {}, cleanups);
      const sid = await openSession(http.url, "a", version);
      const bodies = [
        [call(1, "secret", { who: "one" }), call(2, "secret", { who: "two" })],
        [call(3, "secret", { who: "three" })],
        [{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }],
      ];
      for (const body of bodies) {
        for (const headers of [bearer("a", sid), bearer("a", sid, version)]) {
          const r = await post(http.url, body, headers);
          expect(r.status).toBe(400);
          expect(r.messages).toEqual([
            {
              jsonrpc: "2.0",
              id: null,
              error: { code: -32600, message: expect.stringMatching(/batch.*2025-06-18/) },
            },
          ]);
        }
      }
      expect(runs).toEqual([]);
      // The session goes on serving single messages.
      expect((await secretOn(http.url, "a", sid, "single")).secret).toBe("SECRET-single");
    });
  }

  it("are answered in a session negotiated at 2025-03-26, unless a later revision's header comes with one", async () => {
    const { http, runs } = await serve(TOKENS, {}, cleanups);
    const sid = await openSession(http.url, "a", "2025-03-26");
    for (const headers of [bearer("a", sid), bearer("a", sid, "2025-03-26")]) {
      const r = await post(http.url, [call(1, "secret", { who: "one" }), list(2)], headers);
      expect(r.status).toBe(200);
      expect(r.messages.map((m) => m["id"]).sort()).toEqual([1, 2]);
    }
    expect(runs).toEqual(["one", "one"]);
    const later = await post(
      http.url,
      [call(3, "secret", { who: "later" }), list(4)],
      bearer("a", sid, "2025-06-18"),
    );
    expect(later.status).toBe(400);
    expect(later.messages[0]).toMatchObject({ error: { code: -32600 } });
    expect(runs).toEqual(["one", "one"]);
  });
});

describe("a request id in flight", () => {
  it("sent again in another POST of the session gets -32600, and the first request its own answer", async () => {
    const s = await serve(TOKENS, {}, cleanups);
    const sid = await openSession(s.http.url, "a");
    const first = post(s.http.url, call(7, "hold", { key: "first" }), bearer("a", sid));
    await s.entered("first");
    const second = await post(s.http.url, call(7, "secret", { who: "second" }), bearer("a", sid));
    expect(second.status).toBe(400);
    expect(second.messages).toEqual([
      {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32600, message: expect.stringMatching(/id 7 .*still being answered/) },
      },
    ]);
    s.release("first");
    const answered = await first;
    expect(answered.messages).toEqual([
      expect.objectContaining({
        id: 7,
        result: expect.objectContaining({ structuredContent: { key: "first" } }),
      }),
    ]);
    expect(s.runs).toEqual(["hold:first"]);
    // Answered, the id is free again.
    expect((await secretOn(s.http.url, "a", sid, "third", 7)).secret).toBe("SECRET-third");
  });
});

describe("request ids in flight (property)", () => {
  it("whatever ids concurrent POSTs reuse, each is answered once, with its own answer or -32600", async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constantFrom("hold", "secret"), id: fc.constantFrom(1, 2, "1") }),
      fc.record({ kind: fc.constant("release"), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 16 }), async (steps) => {
        const local: (() => Promise<void>)[] = [];
        const s = await serve(TOKENS, {}, local);
        // The model: the held requests, by key, with their id and their POST's answer to come.
        const held: { key: string; id: number | string; answer: Promise<Answer> }[] = [];
        try {
          const sid = await openSession(s.http.url, "a");
          const own = (id: number | string, content: Record<string, string>) => [
            expect.objectContaining({ id, result: expect.objectContaining({ structuredContent: content }) }),
          ];
          const settle = async (i: number) => {
            const [h] = held.splice(i, 1) as [(typeof held)[number]];
            s.release(h.key);
            expect((await h.answer).messages).toEqual(own(h.id, { key: h.key }));
          };
          for (const [n, st] of steps.entries()) {
            if (st.kind === "release") {
              if (held.length > 0) await settle(st.pick % held.length);
              continue;
            }
            const key = `k${n}`;
            const body =
              st.kind === "hold" ? call(st.id, "hold", { key }) : call(st.id, "secret", { who: key });
            const sent = send(s.http.url, body, bearer("a", sid));
            if (held.some((h) => h.id === st.id)) {
              // The status first: a request taken under an id in flight may never be answered.
              const res = await sent;
              expect(res.status).toBe(400);
              const refused = await read(res);
              expect(refused.messages).toEqual([
                expect.objectContaining({ id: st.id, error: expect.objectContaining({ code: -32600 }) }),
              ]);
            } else if (st.kind === "hold") {
              await s.entered(key);
              held.push({ key, id: st.id, answer: sent.then(read) });
            } else {
              expect((await read(await sent)).messages).toEqual(own(st.id, { secret: `SECRET-${key}` }));
            }
          }
          while (held.length > 0) await settle(0);
        } finally {
          // A failed run leaves nothing held for the next.
          for (const h of held) s.release(h.key);
          for (const c of local) await c();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
