// Issue 34's second storage step: the indexes of `messages` and `message_meta` rebuilt full after a
// bulk load (src/cache/repack.ts), answering every search as before, any number of times, searches
// answered while a worker rebuilds them; where a body's text part is (`message_meta.text_part`)
// stored in a compact form, rows of the older form read as before; bodies compressed at level 3
// before read back the same.
import fs from "node:fs";
import os from "node:os";
import { deflateRawSync } from "node:zlib";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TextPartRef, decodeTextPart, encodeTextPart } from "../src/cache/body.js";
import { BODY_DEFLATE, putBody, readBody } from "../src/cache/body-store.js";
import { type CacheDb, compactFts, openCache } from "../src/cache/index.js";
import { repackIndexes } from "../src/cache/repack.js";
import { stmt } from "../src/cache/schema.js";
import {
  ensureFolder,
  type FtsWrite,
  indexMessage,
  runFtsWrites,
  upsertMessage,
} from "../src/cache/store.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";
import { answer as answerAll } from "./support/cache-answer.js";

const N = 3000;
const BATCH = 250;
const NOW = new Date("2026-01-01T00:00:00Z");
let dir: string;
let db: CacheDb;
const texts = new Map<number, string>();

/**
 * The generated mail written as a first sync writes it: the newest batch first, each batch's
 * headers in ascending UID order, then its bodies, so each batch lands before the previous one in
 * every date-ordered index.
 */
function writeLikeFirstSync(): void {
  const folder = ensureFolder(db, "a", "INBOX", "inbox");
  for (let to = N; to > 0; to -= BATCH) {
    const bodies: { id: number; text: string }[] = [];
    db.transaction(() => {
      const fts: FtsWrite[] = [];
      for (let i = Math.max(0, to - BATCH); i < to; i++) {
        const { msg, text } = syncedMailboxMessage(i, N, i + 1, NOW);
        texts.set(i + 1, text);
        bodies.push({ id: upsertMessage(db, folder, msg, null, fts), text });
      }
      runFtsWrites(fts);
    })();
    db.transaction(() => {
      for (const { id, text } of bodies) {
        putBody(db, id, text, 1);
        stmt(db, "UPDATE messages SET body_state = 1 WHERE id = ?").run(id);
      }
      runFtsWrites(bodies.map(({ id, text }) => ({ id, write: () => indexMessage(db, id, text) })));
    })();
  }
  db.prepare("UPDATE folders SET complete = 1, last_sync = ?, server_count = ?").run(NOW.getTime(), N);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-repack-"));
  db = openCache(path.join(dir, "cache.db"));
  writeLikeFirstSync();
  await compactFts(db, { force: true });
}, 120_000);

afterAll(() => {
  db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const answer = (q: string) => answerAll(db, q, NOW);

const QUERIES = [
  "",
  "is:unread",
  "is:flagged",
  "has:attachment",
  "is:unread has:attachment",
  "after:2025/06/01",
  "after:2025/03/01 before:2025/04/01",
  "newer_than:30d",
  "larger:100K",
  "smaller:5K",
  "from:notifications",
  "to:me@bench.example",
  "subject:update",
  "invoice",
  "invoice is:unread",
  "in:inbox",
  "-is:unread after:2025/09/01",
];

/** What every query answers, and a sample of stored bodies and text-part rows. */
function snapshot() {
  const ids = db.prepare("SELECT id, uid FROM messages ORDER BY uid").all() as { id: number; uid: number }[];
  return {
    answers: QUERIES.map((q) => [q, answer(q)]),
    bodies: ids.filter((_, i) => i % 97 === 0).map((r) => readBody(db, r.id)),
    parts: db.prepare("SELECT id, text_part FROM message_meta ORDER BY id").all(),
  };
}

/** Pages of the indexes of `messages` and `message_meta` and of the address tables (dbstat). */
const indexPages = () =>
  (
    db
      .prepare(
        "SELECT count(*) AS n FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('messages', 'message_meta')) OR name IN ('message_addresses', 'address_counts')",
      )
      .get() as { n: number }
  ).n;

describe("indexes rebuilt after a bulk load", () => {
  it("take fewer pages, give them back to the file system, and every search answers as before, rebuilt again too", async () => {
    const before = snapshot();
    // (the generated mail matches each query shape at least once, so the answers compare something)
    for (const [q, a] of before.answers) expect((a as { count: number }).count, String(q)).toBeGreaterThan(0);
    expect(before.bodies.every((b, i) => b === texts.get(1 + i * 97))).toBe(true);
    const pagesBefore = indexPages();
    const fileBefore = db.pragma("page_count", { simple: true }) as number;

    // Searches go on meanwhile: the worker's connection writes the new b-trees (the daemon's
    // connection sees another connection's commits: data_version changes), this one reads
    const version = db.pragma("data_version", { simple: true });
    const started: string[] = [];
    let during = 0;
    let done = false;
    const repack = repackIndexes(db, (sql) => started.push(sql)).finally(() => {
      done = true;
    });
    while (!done) {
      if (started.length > 0) {
        expect(answer("invoice")).toEqual(before.answers[13]?.[1]);
        during++;
      }
      await new Promise((r) => setImmediate(r));
    }
    const names = await repack;
    expect(db.pragma("data_version", { simple: true })).not.toBe(version);
    expect(during).toBeGreaterThan(0);
    expect(started).toEqual(names.map((n) => `REINDEX "${n}"`));
    expect(names).toEqual(
      expect.arrayContaining([
        "message_addresses",
        "address_counts",
        "messages_newest",
        "messages_unread",
        "messages_flagged",
        "messages_attach",
        "messages_body",
        "messages_size",
        "messages_thread",
        "message_meta_msgid",
        "sqlite_autoindex_messages_1",
      ]),
    );
    const pagesAfter = indexPages();
    // Written newest batch first, the date-ordered indexes had many part-empty pages
    expect(pagesAfter).toBeLessThan(pagesBefore * 0.9);
    expect(db.pragma("freelist_count", { simple: true })).toBe(0);
    expect(db.pragma("page_count", { simple: true })).toBeLessThan(fileBefore);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(snapshot()).toEqual(before);

    // Again (a later bulk load): nothing left to gain, the same answers
    await repackIndexes(db);
    expect(indexPages()).toBe(pagesAfter);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(snapshot()).toEqual(before);
  });

  it("are left as written in a cache of more messages than the bound (a rebuild would hold writers too long)", async () => {
    const pages = indexPages();
    const started: string[] = [];
    expect(await repackIndexes(db, (sql) => started.push(sql), N - 1)).toEqual([]);
    expect(started).toEqual([]);
    expect(indexPages()).toBe(pages);
  });

  it("leave later mail writable and found", async () => {
    const folder = ensureFolder(db, "a", "INBOX", "inbox");
    const { msg } = syncedMailboxMessage(N, N + 1, N + 1, NOW);
    const fts: FtsWrite[] = [];
    db.transaction(() => {
      upsertMessage(db, folder, msg, null, fts);
      runFtsWrites(fts);
    })();
    const all = answer("");
    expect(all.count).toBe(N + 1);
    expect(all.uids[0]).toBe(N + 1);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  });
});

describe("indexes rebuilt in a :memory: cache", () => {
  it("on this thread, the same rows after", async () => {
    const mem = openCache(":memory:");
    const folder = ensureFolder(mem, "a", "INBOX", "inbox");
    for (let to = 400; to > 0; to -= 100)
      mem.transaction(() => {
        const fts: FtsWrite[] = [];
        for (let i = to - 100; i < to; i++)
          upsertMessage(mem, folder, syncedMailboxMessage(i, 400, i + 1, NOW).msg, null, fts);
        runFtsWrites(fts);
      })();
    const rows = () =>
      mem
        .prepare(
          "SELECT m.uid, x.message_id FROM messages m INDEXED BY messages_newest JOIN message_meta x ON x.id = m.id ORDER BY m.internal_date DESC, m.id DESC",
        )
        .all();
    const before = rows();
    expect(before).toHaveLength(400);
    const started: string[] = [];
    expect(await repackIndexes(mem, (sql) => started.push(sql))).toHaveLength(started.length);
    expect(started.length).toBeGreaterThanOrEqual(11);
    expect(rows()).toEqual(before);
    expect(mem.pragma("integrity_check", { simple: true })).toBe("ok");
    mem.close();
  });
});

describe("bodies stored at level 3 before", () => {
  it("read back the same, and a body written now is no larger", () => {
    const ids = db
      .prepare("SELECT message_rowid FROM bodies ORDER BY message_rowid LIMIT 200")
      .pluck()
      .all() as number[];
    let was = 0;
    let now = 0;
    for (const id of ids) {
      const text = readBody(db, id) as string;
      now += db.prepare("SELECT length(text) FROM bodies WHERE message_rowid = ?").pluck().get(id) as number;
      // the row as the level-3 writer stored it
      const old = deflateRawSync(Buffer.from(text, "utf8"), { level: 3 });
      db.prepare("UPDATE bodies SET text = ?, enc = ? WHERE message_rowid = ?").run(old, BODY_DEFLATE, id);
      was += old.length;
      expect(readBody(db, id)).toBe(text);
      putBody(db, id, text, 1);
      expect(readBody(db, id)).toBe(text);
    }
    expect(now).toBeLessThan(was);
  });
});

describe("the stored text part", () => {
  const ref: fc.Arbitrary<TextPartRef> = fc.record({
    part: fc.oneof(
      fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }).map((p) => p.join(".")),
      fc.string(),
    ),
    html: fc.boolean(),
    root: fc.boolean(),
    charset: fc.oneof(fc.constantFrom("", "utf-8", "utf8", "us-ascii", "ascii"), fc.string()),
    encoding: fc.oneof(fc.constantFrom("", "7bit", "8bit", "quoted-printable", "base64"), fc.string()),
  });

  it("reads back as it was, in the compact form and in the object form rows were written in before", () => {
    fc.assert(
      fc.property(ref, (r) => {
        expect(decodeTextPart(encodeTextPart(r))).toEqual(r);
        expect(decodeTextPart(JSON.stringify(r))).toEqual(r);
      }),
      { numRuns: 500 },
    );
  });

  it("is under a third of the object form's length for the refs a sync stores", () => {
    const stored = db
      .prepare("SELECT text_part FROM message_meta WHERE text_part IS NOT NULL")
      .pluck()
      .all() as string[];
    expect(stored.length).toBeGreaterThan(N / 10);
    const compact = stored.reduce((s, t) => s + t.length, 0);
    const object = stored.reduce((s, t) => s + JSON.stringify(decodeTextPart(t)).length, 0);
    expect(stored.every((t) => t.startsWith("["))).toBe(true);
    expect(compact).toBeLessThan(object / 3);
  });
});
