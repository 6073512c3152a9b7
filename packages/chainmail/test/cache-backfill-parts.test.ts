// The backfill on realistic mail (src/testing/mailbox.ts: attachments, HTML-only, alternatives, RFC
// 2047): only the text part of multipart and HTML-only mail is downloaded (where the part is, stored
// in the compact form or in the object form of rows written before), its text is what the whole
// message gave, and the FTS writes of a batch make one index segment.
import { decodeBody } from "../src/cache/body-store.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FetchMessageObject } from "imapflow";
import { backfillBodies, compactFts, openCache, searchCache, syncFolder } from "../src/cache/index.js";
import { ensureFolder, type FtsWrite, runFtsWrites, upsertMessage } from "../src/cache/store.js";
import { decodeTextPart, textFromSource } from "../src/cache/body.js";
import { parseQuery } from "../src/query/index.js";
import { mailboxMessage } from "../src/testing/mailbox.js";
import { type CacheEnv, startCacheEnv } from "./support/cache-env.js";

const A = "personal";
const N = 120;
const mail = Array.from({ length: N }, (_, i) => mailboxMessage(i, N));
let env: CacheEnv;
const segments = () =>
  (env.db.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;
/** Line ends and surrounding space aside: the part and the whole message end their text differently. */
const norm = (s: string) => s;

beforeAll(async () => {
  env = await startCacheEnv();
  for (const m of mail) await env.append("INBOX", m.raw, m.flags, m.date);
});
afterAll(async () => {
  await env?.close();
});

describe("header sync on realistic mail", () => {
  it("writes the FTS rows of a transaction as one index segment", async () => {
    const c = await env.client();
    const lock = await c.getMailboxLock("INBOX", { readOnly: true });
    const fetched: FetchMessageObject[] = [];
    try {
      const q = {
        uid: true,
        flags: true,
        envelope: true,
        size: true,
        bodyStructure: true,
        internalDate: true,
      };
      for await (const m of c.fetch("1:*", { ...q, headers: ["references"] }, { uid: true })) fetched.push(m);
    } finally {
      lock.release();
    }
    const db = openCache(":memory:");
    const folder = ensureFolder(db, A, "INBOX", "inbox");
    const segs = () =>
      (db.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;
    db.transaction(() => {
      const fts: FtsWrite[] = [];
      for (const m of fetched) upsertMessage(db, folder, m, null, fts);
      runFtsWrites(fts);
    })();
    expect(segs()).toBe(1);
    // Written one after the other, the next message's INSERT OR REPLACE makes FTS5 write out the
    // terms pending so far as a segment of their own
    db.exec("DELETE FROM messages; INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    db.transaction(() => {
      for (const m of fetched) upsertMessage(db, folder, m, null);
    })();
    expect(segs()).toBeGreaterThan(5);
    // Arrivals out of UID order (here newest first): FTS5 also writes its pending terms out when a
    // rowid is lower than the last, so the held-back writes run in id order
    db.exec("DELETE FROM messages; INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    db.transaction(() => {
      const fts: FtsWrite[] = [];
      for (const m of [...fetched].reverse()) upsertMessage(db, folder, m, null, fts);
      runFtsWrites(fts);
    })();
    expect(segs()).toBe(1);
    db.close();
  });

  it("keeps where each body's text is", async () => {
    const c = await env.client();
    const r = await syncFolder(env.db, c, A, "INBOX", { role: "inbox", batchSize: 1000 });
    expect(r.added).toBe(N);
    const parts = env.db.prepare("SELECT mm.message_id, mm.text_part FROM message_meta mm").all() as {
      message_id: string;
      text_part: string | null;
    }[];
    const byId = new Map(parts.map((p) => [p.message_id, p.text_part]));
    for (const [i, m] of mail.entries()) {
      const ref = byId.get(`<m${i}@bench.example>`);
      if (m.kind === "text") expect(ref).toBeNull();
      else {
        // stored compactly (src/cache/body.ts, encodeTextPart)
        expect(ref?.startsWith("[")).toBe(true);
        const part = decodeTextPart(ref as string);
        if (m.kind === "html-only" || m.kind === "html-attachment")
          expect(part).toMatchObject({ part: "1", html: true });
        else expect(part).toMatchObject({ part: "1", html: false });
      }
    }
    // Every other row back in the object form rows were stored in before, so the backfill below
    // reads both forms
    const old = env.db.prepare("UPDATE message_meta SET text_part = ? WHERE id = ?");
    const rows = env.db
      .prepare("SELECT id, text_part FROM message_meta WHERE text_part IS NOT NULL ORDER BY id")
      .all() as { id: number; text_part: string }[];
    expect(rows.length).toBeGreaterThan(10);
    for (const [k, r] of rows.entries())
      if (k % 2 === 0) old.run(JSON.stringify(decodeTextPart(r.text_part)), r.id);
  });
});

describe("body backfill on realistic mail", () => {
  it("downloads only the text part of mail with attachments, with the text the whole message gave", async () => {
    const c = await env.client();
    let bytes = 0;
    for (;;) {
      const r = await backfillBodies(env.db, c, A, "INBOX", {
        dailyBudgetBytes: 1024 ** 3,
        compact: false,
      });
      bytes += r.bytes;
      if (r.remaining === 0 || r.fetched === 0) break;
    }
    const attachmentBytes = mail
      .filter((m) => m.kind === "attachment" || m.kind === "html-attachment")
      .reduce((s, m) => s + Buffer.byteLength(m.raw), 0);
    const total = mail.reduce((s, m) => s + Buffer.byteLength(m.raw), 0);
    // Attachments are most of the bytes; none of them were downloaded
    expect(attachmentBytes).toBeGreaterThan(total / 2);
    expect(bytes).toBeLessThan(total - attachmentBytes);
    const rows = env.db
      .prepare(
        "SELECT mm.message_id, b.text, b.enc FROM bodies b JOIN message_meta mm ON mm.id = b.message_rowid",
      )
      .all() as { message_id: string; text: string | Buffer; enc: number }[];
    expect(rows).toHaveLength(N);
    // (stored compressed: src/cache/body-store.ts)
    const text = new Map(rows.map((r) => [r.message_id, decodeBody(r.text, r.enc)]));
    for (const [i, m] of mail.entries()) {
      const whole = await textFromSource(Buffer.from(m.raw));
      expect(norm(text.get(`<m${i}@bench.example>`) as string), `${m.kind} message ${i}`).toBe(norm(whole));
    }
    // The bodies of one backfill call are indexed together: a segment per write slice, not per body
    // (a slice is ~4 ms of work, so how many bodies share one depends on the machine's load: a
    // transaction's rows making exactly one segment is the test above), and search finds body words
    // of attachment mail
    expect(segments()).toBeLessThanOrEqual(N / 10);
    await compactFts(env.db, { force: true });
    expect(segments()).toBe(1);
    const i = mail.findIndex((m) => m.kind === "attachment");
    const word = norm(text.get(`<m${i}@bench.example>`) as string).split(/\s+/)[5] as string;
    const hits = searchCache(env.db, parseQuery(word), { limit: 200 }).rows.map((r) => r.message_id);
    expect(hits).toContain(`<m${i}@bench.example>`);
  });
});
