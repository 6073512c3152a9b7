// The migration to arrival ids with 2^14 ties a second (src/cache/id-migration.ts): a cache numbered
// with 2^19 is renumbered, its meta, bodies and address rows follow, both FTS indexes are written
// again from the stored headers and (compressed) bodies, and every search answers as before, pages
// and all; run again (an older user_version found), it changes nothing.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { TIES, firstIdOf } from "../src/cache/arrival-id.js";
import { putBody } from "../src/cache/body-store.js";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { COMPACT_IDS_VERSION, SCHEMA_VERSION, migrate, stmt } from "../src/cache/schema.js";
import {
  REPLY_TO_IS_FROM,
  ensureFolder,
  type FtsWrite,
  indexMessage,
  runFtsWrites,
  upsertMessage,
} from "../src/cache/store.js";
import { parseQuery } from "../src/query/index.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";

const OLD_TIES = 2 ** 19;
const OFFSET = 2 ** 32;
const N = 600;
const NOW = new Date("2026-01-01T00:00:00Z");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const QUERIES = [
  "",
  "is:unread",
  "has:attachment",
  "subject:update",
  "meeting OR invoice",
  "{invoice budget} -report",
  "larger:20k",
  "in:trash",
];

/** Every match of each query, newest first, paging through with the cursor (message ids), and the count. */
function answers(db: CacheDb) {
  return QUERIES.map((q) => {
    const ast = parseQuery(q);
    const opts = { limit: 40, accounts: ["a"], now: NOW };
    const first = searchCache(db, ast, opts);
    const ids = first.rows.map((r) => r.message_id);
    for (let cursor = first.next_cursor; cursor; ) {
      const next = searchCache(db, ast, { ...opts, cursor });
      ids.push(...next.rows.map((r) => r.message_id));
      cursor = next.next_cursor;
    }
    return { q, count: first.count, ids };
  });
}

/** What the address index and its counts hold, by Message-ID rather than row id. */
const addressRows = (db: Database.Database) => ({
  rows: db
    .prepare(
      "SELECT a.address, a.field, x.message_id, a.folder_id FROM message_addresses a JOIN message_meta x ON x.id = a.id ORDER BY 1, 2, 3",
    )
    .all(),
  counts: db.prepare("SELECT * FROM address_counts WHERE n > 0 ORDER BY 1, 2, 3").all(),
});

describe("the migration to 2^14 ties a second", () => {
  it("renumbers a cache numbered with 2^19, rebuilds its indexes, and every search answers as before", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-compact-ids-"));
    dirs.push(dir);
    const file = path.join(dir, "cache.db");
    const db = new Database(file);
    // (as openCache makes a new file)
    db.pragma("auto_vacuum = INCREMENTAL");
    db.pragma("journal_mode = WAL");
    db.pragma("foreign_keys = ON");
    db.pragma("recursive_triggers = ON");
    migrate(db, COMPACT_IDS_VERSION - 1);
    const inbox = ensureFolder(db, "a", "INBOX", "inbox");
    const trash = ensureFolder(db, "a", "Trash", "trash");
    // Written by the cache's own code, some in the Trash and some sharing an arrival second
    for (let from = 0; from < N; from += 200) {
      const bodies: { id: number; text: string }[] = [];
      db.transaction(() => {
        const fts: FtsWrite[] = [];
        for (let i = from; i < from + 200; i++) {
          const { msg, text } = syncedMailboxMessage(i, N, i + 1, NOW);
          if (i % 25 === 1) msg.internalDate = syncedMailboxMessage(i - 1, N, i, NOW).msg.internalDate;
          bodies.push({ id: upsertMessage(db, i % 40 === 3 ? trash : inbox, msg, null, fts), text });
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
    // Reply-To stored as From's JSON again, as before the marker
    db.prepare(`UPDATE message_meta SET reply_to_json = from_json WHERE reply_to_json = ?`).run(
      REPLY_TO_IS_FROM,
    );
    const before = answers(db as CacheDb);
    expect(before[0]?.count).toBe(N - 15);
    expect(before.every((a) => a.count > 0)).toBe(true);
    const addressesBefore = addressRows(db);
    const bodiesBefore = db
      .prepare(
        "SELECT x.message_id, b.text FROM bodies b JOIN message_meta x ON x.id = b.message_rowid ORDER BY 1",
      )
      .all();
    const ties = db
      .prepare("SELECT count(*) FROM (SELECT internal_date FROM messages GROUP BY 1 HAVING count(*) > 1)")
      .pluck()
      .get() as number;
    expect(ties).toBeGreaterThan(10);

    // The ids as 2^19 ties a second made them; the indexes keyed by id left as they were (stale:
    // the migration must build them anew, or the searches below go wrong)
    db.exec("DROP TRIGGER messages_arrival_ins; DROP TRIGGER messages_arrival_upd;");
    db.pragma("defer_foreign_keys = ON");
    const old = (id: string) => `((${id} / ${TIES}) * ${OLD_TIES} + (${id} % ${TIES}))`;
    db.transaction(() => {
      db.exec(`UPDATE messages SET id = -${old("id")};
        UPDATE message_meta SET id = -${old("id")};
        UPDATE bodies SET message_rowid = -${old("message_rowid")};
        UPDATE message_addresses SET id = -${old("id")};
        UPDATE messages SET id = -id; UPDATE message_meta SET id = -id;
        UPDATE bodies SET message_rowid = -message_rowid; UPDATE message_addresses SET id = -id;`);
    })();
    expect(
      db
        .prepare(`SELECT count(*) FROM messages WHERE (id >> 19) != internal_date / 1000 + ${OFFSET}`)
        .pluck()
        .get(),
    ).toBe(0);
    // One evicted body: its words leave the index until the backfill fetches it again
    const evicted = db.prepare("SELECT id FROM messages ORDER BY id LIMIT 1").pluck().get() as number;
    const evictedId = db.prepare("SELECT message_id FROM message_meta WHERE id = ?").pluck().get(evicted);
    db.prepare("DELETE FROM bodies WHERE message_rowid = ?").run(evicted);
    db.prepare("UPDATE messages SET body_state = 2 WHERE id = ?").run(evicted);
    db.close();

    const said: string[] = [];
    const after = openCache(file, (line) => said.push(line));
    try {
      // The WAL the rewrite filled was cut once the upgrade was done
      expect(fs.statSync(`${file}-wal`).size).toBe(0);
      expect(after.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
      expect(said[0]).toMatch(/upgrading .* \(600 messages\)/);
      // New ids: the arrival second times 2^14 plus the tie, in the same order
      expect(
        after
          .prepare(`SELECT count(*) FROM messages WHERE (id >> 14) != internal_date / 1000 + ${OFFSET}`)
          .pluck()
          .get(),
      ).toBe(0);
      expect(after.prepare("SELECT max(id) FROM messages").pluck().get()).toBeLessThan(2 ** 47);
      expect(after.prepare("SELECT min(id) FROM messages").pluck().get()).toBeGreaterThanOrEqual(
        firstIdOf(Math.floor(Date.UTC(1990, 0, 1) / 1000)),
      );
      expect(after.pragma("foreign_key_check")).toEqual([]);
      expect(
        after
          .prepare(
            "SELECT x.message_id, b.text FROM bodies b JOIN message_meta x ON x.id = b.message_rowid ORDER BY 1",
          )
          .all(),
      ).toEqual(bodiesBefore.filter((b) => (b as { message_id: unknown }).message_id !== evictedId));
      expect(addressRows(after)).toEqual(addressesBefore);
      expect(
        after.prepare("SELECT count(*) FROM message_meta WHERE reply_to_json = from_json").pluck().get(),
      ).toBe(0);
      expect(after.prepare("SELECT body_state FROM messages ORDER BY id LIMIT 1").pluck().get()).toBe(0);
      // The same answers, pages and all, but the evicted body's words
      const now = answers(after);
      for (const [k, a] of now.entries()) {
        const b = before[k] as (typeof before)[number];
        if (a.ids.length === b.ids.length) expect(a, a.q).toEqual(b);
        else {
          // Only a query that matched the evicted message's body words may lose it
          expect(
            b.ids.filter((m) => !a.ids.includes(m)),
            a.q,
          ).toEqual([evictedId]);
          expect(a.count, a.q).toBe(b.count - 1);
        }
      }
      // Both FTS indexes in one segment; the order triggers back with the new width
      for (const t of ["messages_fts", "subjects_fts"])
        expect(after.prepare(`SELECT count(DISTINCT segid) FROM ${t}_idx`).pluck().get(), t).toBe(1);
      const t = Date.UTC(2026, 5, 1) / 1000;
      expect(() =>
        after
          .prepare(
            "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date) VALUES (?, 1, 'a', 9999, 'k', ?)",
          )
          .run(t * OLD_TIES, t * 1000),
      ).toThrow(/messages.id must follow internal_date/);
      expect(after.pragma("freelist_count", { simple: true })).toBe(0);

      // Run again from the version before: nothing changes
      after.pragma(`user_version = ${COMPACT_IDS_VERSION - 1}`);
      migrate(after);
      expect(answers(after)).toEqual(now);
      expect(addressRows(after)).toEqual(addressesBefore);
    } finally {
      after.close();
    }
  });
});
