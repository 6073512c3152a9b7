// Message ids that follow arrival time (src/cache/arrival-id.ts): new rows get them, the schema
// refuses rows that break the order, and the migration renumbers a cache written before, with its
// meta, bodies and FTS rows, so every search answers as it did.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { arrivalSecond, firstIdOf, newMessageSlot, slotsInOrder } from "../src/cache/arrival-id.js";
import { type CacheDb, migrate, openCache, searchCache } from "../src/cache/index.js";
import { ARRIVAL_IDS_VERSION } from "../src/cache/schema.js";
import { ensureFolder } from "../src/cache/store.js";
import { parseQuery } from "../src/query/index.js";

const TIES = 2 ** 19;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const insertRow = (db: CacheDb, id: number, folder: number, uid: number, date: number) =>
  db
    .prepare(
      "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date) VALUES (?, ?, 'a', ?, 'k', ?)",
    )
    .run(id, folder, uid, date);

describe("message ids", () => {
  it("follow arrival time: later seconds get higher ids, ties in the order stored", () => {
    const db = openCache(":memory:");
    const f = ensureFolder(db, "a", "INBOX", "inbox").id;
    const t = Date.UTC(2026, 0, 2, 3, 4, 5);
    const put = (uid: number, ms: number) => {
      const s = newMessageSlot(db, ms);
      insertRow(db, s.id, f, uid, s.internalDate);
      return s;
    };
    const a = put(1, t + 999);
    const b = put(2, t);
    const c = put(3, t - 1000);
    const d = put(4, Date.UTC(1960, 0, 1));
    // Whole seconds, as INTERNALDATE has them; a tie goes after the one stored before it
    expect(a).toEqual({ id: firstIdOf(t / 1000), internalDate: t });
    expect(b).toEqual({ id: a.id + 1, internalDate: t });
    expect(c.id).toBeLessThan(a.id);
    expect(d.id).toBeGreaterThanOrEqual(0);
    expect(d.id).toBeLessThan(c.id);
    const byId = db.prepare("SELECT uid FROM messages ORDER BY id DESC").pluck().all();
    const byDate = db.prepare("SELECT uid FROM messages ORDER BY internal_date DESC, id DESC").pluck().all();
    expect(byId).toEqual(byDate);
    expect(byId).toEqual([2, 1, 3, 4]);
    // Ids stay exact as JavaScript numbers at both ends of the range
    expect(Number.isSafeInteger(firstIdOf(arrivalSecond(8.64e15)) + TIES - 1)).toBe(true);
    expect(firstIdOf(arrivalSecond(-8.64e15))).toBe(0);
    db.close();
  });

  it("spill into the next second when a second is full, stored a second later", () => {
    const db = openCache(":memory:");
    const f = ensureFolder(db, "a", "INBOX", "inbox").id;
    const t = Date.UTC(2026, 5, 1);
    insertRow(db, firstIdOf(t / 1000) + TIES - 1, f, 1, t);
    expect(newMessageSlot(db, t)).toEqual({ id: firstIdOf(t / 1000 + 1), internalDate: t + 1000 });
    const next = slotsInOrder();
    let last = next(t);
    for (let i = 1; i < TIES; i++) last = next(t);
    expect(last).toEqual({ id: firstIdOf(t / 1000) + TIES - 1, internalDate: t });
    expect(next(t)).toEqual({ id: firstIdOf(t / 1000 + 1), internalDate: t + 1000 });
    db.close();
  });

  it("are enforced by the schema: a row out of order is refused, nothing written", () => {
    const db = openCache(":memory:");
    const f = ensureFolder(db, "a", "INBOX", "inbox").id;
    const t = Date.UTC(2026, 5, 1);
    const refused = /messages.id must follow internal_date/;
    expect(() =>
      db
        .prepare(
          "INSERT INTO messages (folder_id, account, uid, thread_key, internal_date) VALUES (?, 'a', 1, 'k', ?)",
        )
        .run(f, t),
    ).toThrow(refused);
    expect(() => insertRow(db, firstIdOf(t / 1000), f, 1, t + 500)).toThrow(refused);
    expect(() => insertRow(db, firstIdOf(t / 1000 + 1), f, 1, t)).toThrow(refused);
    insertRow(db, firstIdOf(t / 1000), f, 1, t);
    expect(() => db.prepare("UPDATE messages SET internal_date = internal_date + 1000").run()).toThrow(
      refused,
    );
    expect(() => db.prepare("UPDATE messages SET id = id + ?").run(TIES)).toThrow(refused);
    expect(db.prepare("SELECT id, internal_date AS d FROM messages").all()).toEqual([
      { id: firstIdOf(t / 1000), d: t },
    ]);
    expect(db.prepare("SELECT cached_count FROM folders").pluck().get()).toBe(1);
    db.close();
  });
});

describe("the arrival-order migration", () => {
  it("renumbers a cache numbered as stored, with its meta, bodies and FTS rows", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-arrival-"));
    dirs.push(dir);
    const file = path.join(dir, "cache.db");
    const db = new Database(file);
    db.pragma("foreign_keys = ON");
    db.pragma("recursive_triggers = ON");
    migrate(db, ARRIVAL_IDS_VERSION - 1);
    db.prepare(
      "INSERT INTO folders (id, account, path, path_norm, role, complete) VALUES (1, 'a', 'INBOX', 'inbox', 'inbox', 1), (2, 'a', 'Trash', 'trash', 'trash', 1)",
    ).run();
    // As a first sync stores them: newest batch first, so the newest mail has the lowest ids;
    // some arrivals share a second, one has milliseconds (an arrival time the cache made up)
    const base = Date.UTC(2025, 2, 1);
    const N = 40;
    const dateOf = (i: number) => base - Math.floor(i / 3) * 60_000 + (i === 7 ? 250 : 0);
    const msg = db.prepare(
      "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date, body_state, seen) VALUES (?, ?, 'a', ?, ?, ?, ?, ?)",
    );
    const meta = db.prepare(
      'INSERT INTO message_meta (id, message_id, subject, from_json) VALUES (?, ?, ?, \'[{"name":"Ann","address":"ann@x.example"}]\')',
    );
    const body = db.prepare(
      "INSERT INTO bodies (message_rowid, text, bytes, fetched_at) VALUES (?, ?, 9, 0)",
    );
    const fts = db.prepare(
      "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, 'Ann ann@x.example', '', '', '', ?)",
    );
    // body_state: 1 stored, 2 evicted (words only in FTS), 3 unreadable, 0 not fetched yet
    const stateOf = (i: number) => (i % 10 === 4 ? 2 : i % 10 === 6 ? 3 : i % 10 === 8 ? 0 : 1);
    for (let i = 1; i <= N; i++) {
      const words = `word${i} ${i % 2 ? "odd" : "even"}${i % 5 === 0 ? " fifth" : ""}`;
      msg.run(i, i % 9 === 0 ? 2 : 1, i, `t${i % 4}`, dateOf(i), stateOf(i), i % 3 === 0 ? 1 : 0);
      meta.run(i, `<m${i}@x>`, `subject ${i}`);
      if (stateOf(i) === 1) body.run(i, `body text ${words}`);
      fts.run(i, `subject ${i}`, stateOf(i) === 1 || stateOf(i) === 2 ? `body text ${words}` : "");
    }
    const QUERIES = ["odd", "fifth", "subject", "word13", "ann", "in:trash", "is:unread", "odd is:unread"];
    // Before: which messages match (the order needs the new ids, which this cache has not yet)
    const matches = (d: CacheDb) =>
      QUERIES.map(
        (q) => new Set(searchCache(d, parseQuery(q), { limit: 200 }).rows.map((x) => x.message_id ?? "")),
      );
    const answers = (d: CacheDb) =>
      QUERIES.map((q) => {
        const pages: string[][] = [];
        let cursor: string | null = null;
        do {
          const r = searchCache(d, parseQuery(q), { limit: 4, cursor });
          pages.push(r.rows.map((x) => x.message_id ?? ""));
          cursor = r.next_cursor;
        } while (cursor);
        return pages.flat();
      });
    const order = (d: Database.Database) =>
      d
        .prepare(
          "SELECT x.message_id FROM messages m JOIN message_meta x ON x.id = m.id ORDER BY m.internal_date DESC, m.id DESC",
        )
        .pluck()
        .all();
    const orderBefore = order(db) as string[];
    const before = matches(db as CacheDb).map((set) => orderBefore.filter((m) => set.has(m)));
    const bodiesBefore = db
      .prepare(
        "SELECT x.message_id, b.text FROM bodies b JOIN message_meta x ON x.id = b.message_rowid ORDER BY 1",
      )
      .all();
    db.close();

    const said: string[] = [];
    const after = openCache(file, (line) => said.push(line));
    try {
      // Ids in arrival order, whole seconds, same order as before
      expect(order(after)).toEqual(orderBefore);
      expect(
        after
          .prepare(
            "SELECT x.message_id FROM messages m JOIN message_meta x ON x.id = m.id ORDER BY m.id DESC",
          )
          .pluck()
          .all(),
      ).toEqual(orderBefore);
      expect(
        after.prepare("SELECT count(*) FROM messages WHERE internal_date % 1000 != 0").pluck().get(),
      ).toBe(0);
      expect(after.prepare("SELECT count(*) FROM messages WHERE id < 1000000").pluck().get()).toBe(0);
      // Every meta and body row moved with its message
      expect(
        after.prepare("SELECT count(*) FROM message_meta x JOIN messages m ON m.id = x.id").pluck().get(),
      ).toBe(N);
      expect(
        after
          .prepare(
            "SELECT x.message_id, b.text FROM bodies b JOIN message_meta x ON x.id = b.message_rowid ORDER BY 1",
          )
          .all(),
      ).toEqual(bodiesBefore);
      expect(after.pragma("foreign_key_check")).toEqual([]);
      // The same answers, pages and all; the evicted bodies' words are gone from the index until
      // the backfill fetches them again (body_state 0), everything else matches as before
      const evicted = new Set(
        Array.from({ length: N }, (_, k) => k + 1)
          .filter((i) => stateOf(i) === 2)
          .map((i) => `<m${i}@x>`),
      );
      const now = answers(after);
      const textOnly = new Set([0, 1, 3, 7]);
      now.forEach((rows, k) => {
        const expected = textOnly.has(k) ? (before[k] as string[]).filter((m) => !evicted.has(m)) : before[k];
        expect(rows, `query ${k}`).toEqual(expected);
      });
      expect(after.prepare("SELECT count(*) FROM messages WHERE body_state = 2").pluck().get()).toBe(0);
      expect(after.prepare("SELECT count(*) FROM messages WHERE body_state = 0").pluck().get()).toBe(
        Array.from({ length: N }, (_, k) => stateOf(k + 1)).filter((s) => s === 0 || s === 2).length,
      );
      // Counters still equal a recount (the evicted rows no longer count as having a body)
      const counters = after
        .prepare("SELECT id, cached_count, with_body, unreadable FROM folders ORDER BY id")
        .all();
      const recount = after
        .prepare(
          "SELECT f.id, count(m.id) AS cached_count, coalesce(sum(m.body_state IN (1, 2)), 0) AS with_body, coalesce(sum(m.body_state = 3), 0) AS unreadable FROM folders f LEFT JOIN messages m ON m.folder_id = f.id GROUP BY f.id ORDER BY f.id",
        )
        .all();
      expect(counters).toEqual(recount);
      after.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 0)").run();
      // The daemon's log hears of the upgrade, before and after
      expect(said).toHaveLength(2);
      expect(said[0]).toMatch(
        new RegExp(`upgrading .* from version ${ARRIVAL_IDS_VERSION - 1} to \\d+ \\(${N} messages\\)`),
      );
      expect(said[1]).toMatch(/^cache: upgraded in \d+\.\d s$/);
      const again: string[] = [];
      openCache(file, (line) => again.push(line)).close();
      expect(again).toEqual([]);
      // And new rows follow the same order
      const s = newMessageSlot(after, base + 3_600_000);
      expect(s.id).toBeGreaterThan(
        after.prepare("SELECT max(id) FROM messages WHERE id < ?").pluck().get(s.id) as number,
      );
    } finally {
      after.close();
    }
  });
});
