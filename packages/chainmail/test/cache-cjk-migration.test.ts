// The migration to CJK characters indexed one token each (src/cache/cjk-migration.ts): a cache
// file written before it, whose FTS rows hold whole CJK runs as one token, finds a CJK word inside a
// run after the upgrade, keeps every other answer, and has evicted bodies fetched again.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { newMessageSlot } from "../src/cache/arrival-id.js";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { CJK_TOKENS_VERSION, SCHEMA_VERSION, migrate } from "../src/cache/schema.js";
import { parseQuery } from "../src/query/index.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const found = (db: CacheDb, q: string) =>
  searchCache(db, parseQuery(q), { limit: 200 })
    .rows.map((r) => r.message_id ?? "")
    .sort();

it("re-indexes the rows with CJK text of an existing cache file; the rest answer as before", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-cjk-"));
  dirs.push(dir);
  const file = path.join(dir, "cache.db");
  const db = new Database(file);
  db.pragma("foreign_keys = ON");
  db.pragma("recursive_triggers = ON");
  migrate(db, CJK_TOKENS_VERSION - 1);
  db.prepare(
    "INSERT INTO folders (id, account, path, path_norm, role, complete) VALUES (1, 'a', 'INBOX', 'inbox', 'inbox', 1)",
  ).run();
  // body_state: 1 stored, 2 evicted (its words only in the index)
  const rows = [
    {
      subject: "明日の定例会議",
      from: "田中 tanaka@x.example",
      body: "明日の定例会議です。資料を添付します。",
      state: 1,
    },
    {
      subject: "Budget review",
      from: "Ann ann@x.example",
      body: "the quarterly budget, Q3会議の資料",
      state: 1,
    },
    { subject: "Lunch", from: "Ann ann@x.example", body: "plain latin lunch text", state: 1 },
    { subject: "Archived", from: "Ann ann@x.example", body: "evicted text 会議", state: 2 },
  ];
  const msg = db.prepare(
    "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date, body_state) VALUES (?, 1, 'a', ?, ?, ?, ?)",
  );
  const meta = db.prepare(
    "INSERT INTO message_meta (id, message_id, subject, from_json) VALUES (?, ?, ?, ?)",
  );
  const body = db.prepare("INSERT INTO bodies (message_rowid, text, bytes, fetched_at) VALUES (?, ?, 9, 0)");
  // As the cache wrote them before: the fields as they are, a CJK run one token
  const oldFts = db.prepare(
    "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, ?, '', '', '', ?)",
  );
  rows.forEach((r, i) => {
    const s = newMessageSlot(db, Date.UTC(2026, 0, 1 + i));
    const [name, address] = r.from.split(" ");
    msg.run(s.id, i + 1, `t${i}`, s.internalDate, r.state);
    meta.run(s.id, `<m${i + 1}@x>`, r.subject, JSON.stringify([{ name, address }]));
    if (r.state === 1) body.run(s.id, r.body);
    oldFts.run(s.id, r.subject, r.from, r.body);
  });
  // Before the upgrade a CJK word inside a run is not found (the query side already splits it)
  expect(found(db, "会議")).toEqual([]);
  expect(found(db, "田中")).toEqual([]);
  const latin = ["budget", "lunch", "ann", "evicted", "quarterly budget"].map((q) => found(db, q));
  db.close();

  const lines: string[] = [];
  const up = openCache(file, (l) => lines.push(l));
  expect(up.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
  expect(lines[0]).toContain(`to ${SCHEMA_VERSION}`);
  // (the evicted body's CJK words wait for the backfill to fetch it again: below)
  expect(found(up, "会議")).toEqual(["<m1@x>", "<m2@x>"]);
  expect(found(up, "定例")).toEqual(["<m1@x>"]);
  expect(found(up, "資料")).toEqual(["<m1@x>", "<m2@x>"]);
  expect(found(up, "Q3会議")).toEqual(["<m2@x>"]);
  expect(found(up, "会")).toEqual(["<m1@x>", "<m2@x>"]);
  expect(found(up, "from:田中")).toEqual(["<m1@x>"]);
  expect(found(up, "subject:会議")).toEqual(["<m1@x>"]);
  expect(["budget", "lunch", "ann", "evicted", "quarterly budget"].map((q) => found(up, q))).toEqual(latin);
  // The evicted body is fetched again (its text could not be indexed anew): state 0, the counters follow
  expect(up.prepare("SELECT body_state FROM messages ORDER BY id").pluck().all()).toEqual([1, 1, 1, 0]);
  expect(up.prepare("SELECT with_body FROM folders").pluck().get()).toBe(3);
  // The index holds each message once: no row left behind by the rewrite
  expect(
    up.prepare("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?").pluck().get('ann OR "田 中"'),
  ).toBe(4);
  up.close();
});
