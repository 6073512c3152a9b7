/**
 * Counts remembered until the cache changes (src/cache/count-memo.ts), and the address counts of
 * messages with attachments (src/cache/address-index.ts, addAddressAttached), stay exact: after random
 * sequences of the cache's own writes (headers and bodies written, rewritten, removed, flags
 * changed, attachment flags changed, moved to Trash, a folder cleared as on a UIDVALIDITY reset, bodies evicted, a removal by
 * another connection, a write rolled back), every count the scale run's queries give, asked
 * right after the change with the count of before remembered, equals a count(*) of the query's SQL
 * condition, and the page is the same as with nothing remembered.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { evictOldestBodies } from "../src/cache/backfill.js";
import { putBody } from "../src/cache/body-store.js";
import { forgetCounts, rememberedCount } from "../src/cache/count-memo.js";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { ADDRESS_ATTACHED_VERSION, migrate, stmt } from "../src/cache/schema.js";
import {
  clearFolder,
  ensureFolder,
  type FtsWrite,
  indexMessage,
  removeUids,
  runFtsWrites,
  updateFlags,
  upsertMessage,
} from "../src/cache/store.js";
import { scaleQueries } from "../src/bench/scale-queries.js";
import { compileToSql, mentionsIn, parseQuery } from "../src/query/index.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";
import { registerCacheFunctions } from "../src/cache/subject-counts.js";

const NOW = new Date("2026-01-01T00:00:00Z");
const N = 300;
const QUERIES = scaleQueries(N, NOW, NOW).map((q) => q.query);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

type Op =
  | { k: "write"; from: number; n: number; bodies: boolean }
  | { k: "remove"; uid: number }
  | { k: "flags"; uid: number; seen: boolean }
  | { k: "attach"; uid: number }
  | { k: "move"; uid: number }
  | { k: "clear"; trash: boolean }
  | { k: "evict" }
  | { k: "other"; uid: number }
  | { k: "rollback"; from: number };

const uid = fc.integer({ min: 1, max: N });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      k: fc.constant("write" as const),
      from: fc.integer({ min: 0, max: N - 1 }),
      n: fc.integer({ min: 1, max: 40 }),
      bodies: fc.boolean(),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ k: fc.constant("remove" as const), uid }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("flags" as const), uid, seen: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("attach" as const), uid }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("move" as const), uid }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("clear" as const), trash: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("evict" as const) }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("other" as const), uid }), weight: 1 },
  {
    arbitrary: fc.record({ k: fc.constant("rollback" as const), from: fc.integer({ min: 0, max: N - 1 }) }),
    weight: 1,
  },
);

/** Generated messages [from, from + n) into INBOX as the sync and the backfill write them. */
function write(db: CacheDb, from: number, n: number, bodies: boolean) {
  const { inbox } = folders(db);
  const written: { id: number; text: string }[] = [];
  db.transaction(() => {
    const fts: FtsWrite[] = [];
    for (let i = from; i < Math.min(N, from + n); i++) {
      const { msg, text } = syncedMailboxMessage(i, N, i + 1, NOW);
      written.push({ id: upsertMessage(db, inbox, msg, undefined, fts), text });
    }
    runFtsWrites(fts);
    if (!bodies) return;
    for (const { id, text } of written) {
      putBody(db, id, text, Date.now());
      stmt(db, "UPDATE messages SET body_state = 1 WHERE id = ?").run(id);
    }
    runFtsWrites(written.map(({ id, text }) => ({ id, write: () => indexMessage(db, id, text) })));
  })();
}

/** The folders, created before the first count (ensureFolder writes). */
function folders(db: CacheDb) {
  return { inbox: ensureFolder(db, "a", "INBOX", "inbox"), trash: ensureFolder(db, "a", "Trash", "trash") };
}

/** One change; nothing else is written (a write of its own would make any change look seen). */
function apply(db: CacheDb, file: string, o: Op) {
  const folderId = (p: string) =>
    db.prepare("SELECT id FROM folders WHERE path = ?").pluck().get(p) as number;
  const inbox = { id: folderId("INBOX") };
  const trash = { id: folderId("Trash") };
  switch (o.k) {
    case "write":
      return write(db, o.from, o.n, o.bodies);
    case "remove":
      return db.transaction(() => removeUids(db, inbox.id, [o.uid]))();
    case "flags":
      return db.transaction(() =>
        updateFlags(db, inbox.id, o.uid, new Set(o.seen ? ["\\Seen"] : []), undefined, undefined),
      )();
    case "attach":
      // (a direct change of the flag: the sync only writes it with the headers)
      return db
        .prepare("UPDATE messages SET has_attachment = 1 - has_attachment WHERE folder_id = ? AND uid = ?")
        .run(inbox.id, o.uid);
    case "move":
      // (the triggers move the counters and the address rows with the message)
      return db
        .prepare(
          "UPDATE OR IGNORE messages SET folder_id = ?, uid = uid + 100000 WHERE folder_id = ? AND uid = ?",
        )
        .run(trash.id, inbox.id, o.uid);
    case "clear":
      return db.transaction(() => clearFolder(db, o.trash ? trash.id : inbox.id))();
    case "evict":
      return evictOldestBodies(db, { bytes: 4000 });
    case "other": {
      // A commit by another connection (the repack worker writes through its own)
      const other = new Database(file);
      try {
        other.pragma("foreign_keys = ON");
        other.pragma("recursive_triggers = ON");
        // (as every connection of the cache: the functions its triggers call)
        registerCacheFunctions(other as CacheDb);
        other.transaction(() => removeUids(other as CacheDb, inbox.id, [o.uid]))();
      } finally {
        other.close();
      }
      return;
    }
    case "rollback":
      try {
        db.transaction(() => {
          write(db, o.from, 10, true);
          db.prepare("DELETE FROM messages WHERE id IN (SELECT id FROM messages ORDER BY id LIMIT 5)").run();
          throw new Error("rolled back");
        })();
      } catch {
        // (the write is gone)
      }
      return;
  }
}

/** count(*) of the query's SQL condition, with Trash left out as search leaves it out. */
function recount(db: CacheDb, q: string): number {
  const ast = parseQuery(q);
  const excluded = db
    .prepare("SELECT id FROM folders WHERE role IN ('trash', 'junk') AND cached_count > 0")
    .pluck()
    .all() as number[];
  const sql = compileToSql(ast, NOW, { excludedFolderIds: mentionsIn(ast) ? [] : excluded, labels: false });
  return (
    db.prepare(`SELECT count(*) AS n FROM messages m WHERE ${sql.where}`).get(...sql.params) as { n: number }
  ).n;
}

// The kept counts of messages with attachments per address, header and folder, and a recount
const ATTACHED =
  "SELECT address, field, folder_id, n, attached FROM address_counts WHERE n > 0 ORDER BY 1, 2, 3";
const REATTACHED = `SELECT a.address, a.field, a.folder_id, count(*) AS n, sum(m.has_attachment = 1) AS attached
  FROM message_addresses a JOIN messages m ON m.id = a.id AND m.folder_id = a.folder_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;

const search = (db: CacheDb, q: string, countOnly: boolean) =>
  searchCache(db, parseQuery(q), { accounts: ["a"], countOnly, limit: 25, now: NOW });

describe("counts remembered until the cache changes", () => {
  it("equal the walked count after every change, and the pages are the same", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 12 }), (ops) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-memo-"));
        dirs.push(dir);
        const file = path.join(dir, "cache.db");
        const db = openCache(file);
        try {
          write(db, 0, N, true);
          // (remembered before the first change)
          for (const q of QUERIES) search(db, q, true);
          for (const o of ops) {
            apply(db, file, o);
            // (every count remembered from before the change, where the cache could answer stale)
            const pages = QUERIES.map((q) => {
              const want = recount(db, q);
              expect(search(db, q, true).count, `${q} after ${JSON.stringify(o)}`).toBe(want);
              const page = search(db, q, false);
              expect(page.count, `${q} page after ${JSON.stringify(o)}`).toBe(want);
              return page;
            });
            expect(db.prepare(ATTACHED).all(), `attachment counts after ${JSON.stringify(o)}`).toEqual(
              db.prepare(REATTACHED).all(),
            );
            forgetCounts(db);
            for (const [i, q] of QUERIES.entries()) expect(search(db, q, false)).toEqual(pages[i]);
          }
        } finally {
          db.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 12 },
    );
  }, 240_000);

  it("are counted again after a change, a commit elsewhere or a rollback, and not inside a transaction", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-memo-"));
    dirs.push(dir);
    const file = path.join(dir, "cache.db");
    const db = openCache(file);
    write(db, 0, 20, false);
    let walks = 0;
    const count = () => rememberedCount(db, "k", () => ++walks);
    expect([count(), count()]).toEqual([1, 1]);
    apply(db, file, { k: "flags", uid: 3, seen: true });
    expect([count(), count()]).toEqual([2, 2]);
    apply(db, file, { k: "other", uid: 4 });
    expect([count(), count()]).toEqual([3, 3]);
    apply(db, file, { k: "rollback", from: 0 });
    expect(count()).toBe(4);
    db.transaction(() => {
      expect([count(), count()]).toEqual([5, 6]);
    })();
    // A count that wrote (a word's token found through the scratch table) is not remembered
    expect(rememberedCount(db, "w", () => db.prepare("UPDATE folders SET last_sync = 1").run().changes)).toBe(
      2,
    );
    expect(rememberedCount(db, "w", () => 0)).toBe(0);
    expect(rememberedCount(db, "w", () => 1)).toBe(0);
    // The scale benchmark's daemon remembers nothing: it judges each query's first count
    process.env.CHAINMAIL_REMEMBER_COUNTS = "0";
    try {
      expect([rememberedCount(db, "off", () => 1), rememberedCount(db, "off", () => 2)]).toEqual([1, 2]);
    } finally {
      delete process.env.CHAINMAIL_REMEMBER_COUNTS;
    }
    expect([rememberedCount(db, "off", () => 3), rememberedCount(db, "off", () => 4)]).toEqual([3, 3]);
    db.close();
  });

  it("of messages with attachments per address are filled by the migration, and again when it re-runs", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-memo-"));
    dirs.push(dir);
    const file = path.join(dir, "cache.db");
    const old = new Database(file) as CacheDb;
    old.pragma("foreign_keys = ON");
    old.pragma("recursive_triggers = ON");
    migrate(old, ADDRESS_ATTACHED_VERSION - 1);
    write(old, 0, N, false);
    expect(old.prepare("SELECT count(*) FROM message_addresses").pluck().get()).toBeGreaterThan(N);
    old.close();
    const db = openCache(file);
    const rows = db.prepare(ATTACHED).all() as { attached: number }[];
    expect(rows.some((r) => r.attached > 0)).toBe(true);
    expect(rows).toEqual(db.prepare(REATTACHED).all());
    const q = QUERIES.find((x) => x.startsWith("has:attachment from:")) as string;
    expect(search(db, q, true).count).toBe(recount(db, q));
    // A copy restored from before the step, the values left as they were: the step runs again
    db.prepare("UPDATE message_addresses SET attached = 1 - attached WHERE id % 3 = 0").run();
    db.prepare("UPDATE address_counts SET attached = attached + 7").run();
    db.pragma(`user_version = ${ADDRESS_ATTACHED_VERSION - 1}`);
    migrate(db);
    expect(db.prepare(ATTACHED).all()).toEqual(rows);
    apply(db, file, { k: "attach", uid: 5 });
    expect(db.prepare(ATTACHED).all()).toEqual(db.prepare(REATTACHED).all());
    db.close();
  });
});
