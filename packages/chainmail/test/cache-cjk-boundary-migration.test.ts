// The migration to boundary tokens between CJK characters and the separators beside them
// (src/cache/cjk-migration.ts, indexCjkBoundaries): a cache file written before it, whose word
// index and subjects' index let a CJK term match across punctuation, answers as the server does
// after the upgrade, keeps every Latin answer, has evicted bodies with CJK text fetched again (and
// no other), and answers the same when the step runs again.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { newMessageSlot } from "../src/cache/arrival-id.js";
import { encodeBody } from "../src/cache/body-store.js";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { CJK_BOUNDARY_VERSION, SCHEMA_VERSION, migrate } from "../src/cache/schema.js";
import { parseQuery } from "../src/query/index.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const found = (db: CacheDb, q: string) =>
  searchCache(db, parseQuery(q), { limit: 200 })
    .rows.map((r) => r.message_id ?? "")
    .sort();

/** How the cache spaced CJK text before the boundary tokens: each character apart, separators kept. */
const before = (t: string) =>
  t.replace(
    /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3005\u3006\u30fc\uff70]/gu,
    " $& ",
  );

it("re-indexes the rows with CJK text of an existing cache file, in both indexes; re-runnable", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-cjk-boundary-"));
  dirs.push(dir);
  const file = path.join(dir, "cache.db");
  const db = new Database(file);
  db.pragma("foreign_keys = ON");
  db.pragma("recursive_triggers = ON");
  migrate(db, CJK_BOUNDARY_VERSION - 1);
  db.prepare(
    "INSERT INTO folders (id, account, path, path_norm, role, complete) VALUES (1, 'a', 'INBOX', 'inbox', 'inbox', 1)",
  ).run();
  // body_state: 1 stored (compressed when long, as bodies are stored now), 2 evicted
  const long = "。".repeat(80);
  const rows = [
    { subject: "定例。会議", from: "田中 tanaka@x.example", body: `明日の定例、会議です${long}`, state: 1 },
    {
      subject: "Budget review",
      from: "Ann ann@x.example",
      body: "the quarterly budget, Q3 会議の資料",
      state: 1,
    },
    { subject: "Lunch", from: "Ann ann@x.example", body: "plain latin lunch text, budget", state: 1 },
    { subject: "Archived", from: "Ann ann@x.example", body: "evicted text 定例。会議", state: 2 },
    { subject: "Old latin", from: "Ann ann@x.example", body: "evicted latin words", state: 2 },
  ];
  const msg = db.prepare(
    "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date, body_state) VALUES (?, 1, 'a', ?, ?, ?, ?)",
  );
  const meta = db.prepare(
    "INSERT INTO message_meta (id, message_id, subject, from_json) VALUES (?, ?, ?, ?)",
  );
  const oldFts = db.prepare(
    "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, ?, '', '', '', ?)",
  );
  const oldSubject = db.prepare("INSERT INTO subjects_fts (rowid, subject) VALUES (?, ?)");
  // (as that version's putBody stored bodies: the columns of today's came later)
  const body = db.prepare(
    "INSERT INTO bodies (message_rowid, text, bytes, fetched_at, enc) VALUES (?, ?, ?, 0, ?)",
  );
  rows.forEach((r, i) => {
    const s = newMessageSlot(db, Date.UTC(2026, 0, 1 + i));
    const [name, address] = r.from.split(" ");
    msg.run(s.id, i + 1, `t${i}`, s.internalDate, r.state);
    meta.run(s.id, `<m${i + 1}@x>`, r.subject, JSON.stringify([{ name, address }]));
    if (r.state === 1) {
      const { value, enc } = encodeBody(r.body);
      body.run(s.id, value, Buffer.byteLength(r.body), enc);
    }
    oldFts.run(s.id, before(r.subject), before(r.from), before(r.body));
    oldSubject.run(s.id, before(r.subject));
  });
  expect(db.prepare("SELECT count(*) FROM bodies WHERE enc = 1").pluck().get()).toBe(1);
  // Before: the characters match across the separators (the server finds none of these)
  expect(found(db, "例会")).toEqual(["<m1@x>", "<m4@x>"]);
  expect(found(db, "subject:例会")).toEqual(["<m1@x>"]);
  expect(found(db, "Q3会議")).toEqual(["<m2@x>"]);
  const LATIN = ["budget", "lunch", "ann", "quarterly budget", "subject:budget", "latin"];
  expect(found(db, "evicted")).toEqual(["<m4@x>", "<m5@x>"]);
  const latin = LATIN.map((q) => found(db, q));
  db.close();

  // The step alone first (the later steps rewrite every row: their own tests cover them, and the
  // whole upgrade is checked at the end)
  const open = (version: number) => {
    const c = new Database(file);
    c.pragma("foreign_keys = ON");
    c.pragma("recursive_triggers = ON");
    if (version < CJK_BOUNDARY_VERSION) c.pragma(`user_version = ${version}`);
    migrate(c, CJK_BOUNDARY_VERSION);
    expect(c.pragma("user_version", { simple: true })).toBe(CJK_BOUNDARY_VERSION);
    return c;
  };
  const cjk = (c: CacheDb) => {
    expect(found(c, "例会")).toEqual([]);
    expect(found(c, "subject:例会")).toEqual([]);
    expect(found(c, "Q3会議")).toEqual([]);
    expect(found(c, '"Q3 会議"')).toEqual(["<m2@x>"]);
    expect(found(c, '"定例。会議"')).toEqual(["<m1@x>"]);
    expect(found(c, 'subject:"定例。会議"')).toEqual(["<m1@x>"]);
    expect(found(c, '"定例、会議"')).toEqual(["<m1@x>"]);
    expect(found(c, '"定例 会議"')).toEqual([]);
    expect(found(c, "会議")).toEqual(["<m1@x>", "<m2@x>"]);
    expect(found(c, "from:田中")).toEqual(["<m1@x>"]);
    expect(LATIN.map((q) => found(c, q))).toEqual(latin);
  };
  const answers = (c: CacheDb) => {
    cjk(c);
    // The evicted body with CJK text is fetched again (its text could not be indexed anew), the
    // evicted Latin one is not: the counters follow
    // (until the backfill fetches it: the evicted Latin body keeps its words in the index)
    expect(found(c, "evicted")).toEqual(["<m5@x>"]);
    expect(c.prepare("SELECT body_state FROM messages ORDER BY id").pluck().all()).toEqual([1, 1, 1, 0, 2]);
    expect(c.prepare("SELECT with_body FROM folders").pluck().get()).toBe(4);
    // Each index holds each message once: no row left behind by the rewrite
    const count = (table: string, q: string) =>
      c.prepare(`SELECT count(*) FROM ${table} WHERE ${table} MATCH ?`).pluck().get(q);
    expect(count("messages_fts", 'ann OR "田"')).toBe(5);
    expect(count("subjects_fts", '"会" OR budget OR lunch OR archived OR old')).toBe(5);
  };
  const up = open(CJK_BOUNDARY_VERSION - 1);
  answers(up);
  up.close();

  // The step again, from the version before it: the same answers
  const twice = open(CJK_BOUNDARY_VERSION - 1);
  answers(twice);
  twice.close();

  // The whole upgrade from there (later steps rebuild the indexes from the stored text, as
  // insertFts writes it now): the CJK and Latin answers hold
  const lines: string[] = [];
  const latest = openCache(file, (l) => lines.push(l));
  expect(latest.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
  if (SCHEMA_VERSION > CJK_BOUNDARY_VERSION) expect(lines[0]).toContain(`to ${SCHEMA_VERSION}`);
  cjk(latest);
  latest.close();
});
