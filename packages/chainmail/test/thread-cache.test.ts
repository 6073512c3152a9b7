/**
 * get_thread from the cache against get_thread from the server, on the test Dovecot: for every
 * message of the mailbox (Trash too), with and without `full`, every field of both results agrees;
 * the cache path answers without the server (source "cache") when it holds every member, and steps
 * aside when it cannot (a change through the daemon, a body it does not store).
 */
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../src/imap/messages.js";
import { readThread } from "../src/imap/thread.js";
import { decodeRef } from "../src/refs.js";
import { buildMessage, generateCorpus, type MessageSpec } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { freePort } from "../src/testing/smtp.js";

let env: MailEnv;
let imap: ImapFlow;
const BODY_LIMIT = 2000; // mailenv's [daemon] body_limit

const at = (h: number) => new Date(Date.UTC(2024, 4, 1, h));
const msg = (id: string, h: number, extra: Partial<MessageSpec> = {}): string =>
  buildMessage({
    from: "Dana <dana@example.com>",
    to: ["alice@example.com"],
    subject: `Broken thread ${id}`,
    date: at(h),
    messageId: `<${id}@example.com>`,
    text: `Message ${id}.\n`,
    ...extra,
  });
// A message with no Message-ID, References or In-Reply-To (its thread key is a hash)
const noIds = buildMessage({
  from: "Eve <eve@example.com>",
  to: ["alice@example.com"],
  subject: "No ids at all",
  date: at(30),
  messageId: "<drop@example.com>",
  text: "Nothing names me.\n",
}).replace(/^Message-ID: .*\r\n/im, "");

beforeAll(async () => {
  env = await startMailEnv();
  const corpus = generateCorpus({ threads: 3, fillers: 3, hugeBytes: 300 * 1024 });
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    corpus.map((m) => ({ raw: m.raw, flags: m.flags ?? [] })),
  );
  const r = "<r@example.com>";
  const p = "<p@example.com>";
  await env.dv.appendMessages("alice", "INBOX", [
    { raw: msg("r", 1) },
    { raw: msg("p", 2, { inReplyTo: r, references: [r] }) },
    // Replies to p with In-Reply-To alone: its key is p, not the root
    { raw: msg("c", 3, { inReplyTo: p }) },
    { raw: msg("d", 4, { inReplyTo: p, references: [r, p] }) },
    { raw: noIds },
  ]);
  // Copies in Archive (the ref's own folder's copy is the one shown) and one member in Trash
  await env.dv.appendMessages("alice", "Archive", [{ raw: msg("p", 2, { inReplyTo: r, references: [r] }) }]);
  await env.dv.appendMessages("alice", "Archive", [{ raw: noIds }]);
  await env.dv.appendMessages("alice", "Trash", [{ raw: msg("t", 5, { inReplyTo: p, references: [r, p] }) }]);
  // A thread longer than get_thread shows (50): the oldest are omitted_refs
  const l0 = "<long0@example.com>";
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    Array.from({ length: 53 }, (_, i) => ({
      raw: msg(`long${i}`, 100 + i, i === 0 ? {} : { inReplyTo: l0, references: [l0] }),
    })),
  );
  // A thread with a body longer than the cache stores (100,000 characters)
  const b0 = "<big0@example.com>";
  await env.dv.appendMessages("alice", "INBOX", [
    { raw: msg("big0", 200) },
    {
      raw: msg("big1", 201, {
        inReplyTo: b0,
        references: [b0],
        text: `${"long line of text ".repeat(7000)}\n`,
      }),
    },
  ]);
  const sync = await env.client.cacheSync({ accounts: ["work"] });
  expect(sync.accounts[0]!.ok).toBe(true);
  imap = await env.dv.connect("alice");
}, 120_000);
afterAll(async () => {
  await imap?.logout().catch(() => undefined);
  await env?.stop();
});

async function allRefs(): Promise<string[]> {
  const refs: string[] = [];
  for (const query of ["", "in:trash"]) {
    const res = await env.client.search({ query, accounts: ["work"], limit: 200, source: "server" });
    refs.push(...res.rows.map((x) => x.ref));
  }
  return refs;
}

/** The server path alone: IMAP SEARCH in every folder, every message fetched. */
async function fromServer(ref: string, full: boolean) {
  return readThread(imap, decodeRef(ref), { full, bodyLimit: BODY_LIMIT }, false);
}

const withoutSource = (m: Message) => ({ ...m, source: undefined });

describe("get_thread from the cache", () => {
  it("gives every field the server path gives, for every message, with and without full", async () => {
    const refs = await allRefs();
    expect(refs.length).toBeGreaterThan(70);
    let fromCache = 0;
    for (const full of [false, true]) {
      for (const ref of refs) {
        const server = await fromServer(ref, full);
        const cache = await env.client.getThread({ ref, full });
        const label = `${ref} full=${full}`;
        expect(cache.thread_id, label).toBe(server.thread_id);
        expect(cache.truncated, label).toBe(server.truncated);
        expect(cache.omitted_refs, label).toEqual(server.omitted_refs);
        expect(cache.messages.map(withoutSource), label).toEqual(server.messages.map(withoutSource));
        if (cache.source === "cache") fromCache++;
      }
    }
    // Every ref but the two of the thread with a body past what the cache stores, and the HTML-only
    // newsletter (its cached text is the word index's, without links: src/service/cached-read.ts)
    expect(fromCache).toBe(2 * (refs.length - 3));
  });

  it("answers from the cache alone, with the edge cases the server path has", async () => {
    const refs = await allRefs();
    const bySubject = async (subject: string) => {
      const res = await env.client.search({ query: `subject:"${subject}"`, accounts: ["work"], limit: 200 });
      return res.rows.map((x) => x.ref);
    };
    const c = (await bySubject("Broken thread c"))[0]!;
    const t = await env.client.getThread({ ref: c });
    // c replies to p with In-Reply-To alone, so its key is p, whose own message replies to r: d
    // lists p after r in its References, which only the server's header search sees (so the
    // server names the members here, and the cache gives their content).
    expect(t.messages.map((m) => [m.subject, m.folder])).toEqual([
      ["Broken thread p", "INBOX"],
      ["Broken thread c", "INBOX"],
      ["Broken thread d", "INBOX"],
    ]);
    const archived = (await env.client.search({ query: "in:archive", accounts: ["work"] })).rows;
    const pArchive = archived.find((x) => x.subject === "Broken thread p")!.ref;
    const tp = await env.client.getThread({ ref: pArchive });
    expect(tp.source).toBe("cache");
    expect(tp.messages.map((m) => [m.subject, m.folder])).toEqual([
      ["Broken thread r", "INBOX"],
      ["Broken thread p", "Archive"],
      ["Broken thread c", "INBOX"],
      ["Broken thread d", "INBOX"],
    ]);
    const trashRef = refs.find((r) => decodeRef(r).folder === "Trash")!;
    const tt = await env.client.getThread({ ref: trashRef });
    expect(tt.messages.map((m) => m.folder)).toEqual(["INBOX", "INBOX", "INBOX", "Trash"]);
    const lone = (await bySubject("No ids at all"))[0]!;
    const tl = await env.client.getThread({ ref: lone });
    expect(tl.source).toBe("cache");
    expect(tl.messages).toHaveLength(1);
    const long = (await bySubject("Broken thread long52"))[0]!;
    const tlong = await env.client.getThread({ ref: long });
    expect(tlong.source).toBe("cache");
    expect(tlong.messages).toHaveLength(50);
    expect(tlong.truncated).toBe(true);
    expect(tlong.omitted_refs).toHaveLength(3);
  });

  it("answers with the server unreachable (a member only the server has is an error), mixes in the server for a body it does not store", async () => {
    const bySubject = async (subject: string) =>
      (await env.client.search({ query: `subject:"${subject}"`, accounts: ["work"] })).rows[0]!.ref;
    const big = await bySubject("Broken thread big0");
    const th = await env.client.getThread({ ref: big });
    expect(th.source).toBe("mixed");
    expect(th.messages.map((m) => m.source)).toEqual(["cache", "server"]);
    const ref = await bySubject("project thread 2");
    const before = await env.client.getThread({ ref });
    expect(before.source).toBe("cache");
    env.writeConfig({ work: { port: await freePort() } });
    await env.confirmPolicy(); // a new port waits for the owner
    try {
      expect(await env.client.getThread({ ref })).toEqual(before);
      // The member whose body only the server has is an error of its own; the rest is answered.
      const partial = await env.client.getThread({ ref: big });
      expect(partial.messages).toEqual([th.messages[0]]);
      expect(partial.errors).toMatchObject([
        { ref: th.messages[1]!.ref, error: { reason: "SERVER_UNAVAILABLE" } },
      ]);
    } finally {
      env.writeConfig({});
      await env.confirmPolicy();
    }
  });

  it("steps aside after a change through the daemon until the next sync", async () => {
    const ref = (await env.client.search({ query: 'subject:"project thread 3"', accounts: ["work"] }))
      .rows[0]!.ref;
    expect((await env.client.getThread({ ref })).source).toBe("cache");
    await env.client.setFlags({ refs: [ref], add: ["flagged"] });
    const after = await env.client.getThread({ ref });
    expect(after.messages.every((m) => m.source === "server")).toBe(true);
    expect(after.messages.find((m) => m.ref === ref)!.flags).toContain("flagged");
    await env.client.cacheSync({ accounts: ["work"] });
    expect((await env.client.getThread({ ref })).source).toBe("cache");
  });
});
