// The folder counters (cached messages, bodies, unreadable bodies) that freshness and completeness
// read instead of a GROUP BY over the mailbox: after every kind of change they equal a recount.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  backfillBodies,
  cacheCanAnswerQuery,
  cacheStatus,
  evictBodies,
  getFolder,
  migrate,
  syncFolder,
} from "../src/cache/index.js";
import { FOLDER_COUNTERS_VERSION } from "../src/cache/schema.js";
import { listColumn, parseQuery } from "../src/query/index.js";
import { updateFlags } from "../src/cache/store.js";
import { generateCorpus } from "../src/testing/corpus.js";
import { newMessageSlot } from "../src/cache/arrival-id.js";
import { type CacheEnv, USER, startCacheEnv } from "./support/cache-env.js";

const A = "personal";
let env: CacheEnv;
const corpus = generateCorpus({ threads: 3, fillers: 6, hugeBytes: 300 * 1024 });

interface Counts {
  path: string;
  cached: number;
  with_body: number;
  unreadable: number;
  labelled: number;
}

/** The counters as stored, and as a full recount of the messages table gives them. */
function countersAndRecount(db: Database.Database): { stored: Counts[]; recount: Counts[] } {
  const stored = db
    .prepare(
      "SELECT path, cached_count AS cached, with_body, unreadable, labelled FROM folders WHERE account = ? ORDER BY path",
    )
    .all(A) as Counts[];
  const recount = db
    .prepare(
      `SELECT f.path, count(m.id) AS cached, coalesce(sum(m.body_state IN (1, 2)), 0) AS with_body,
         coalesce(sum(m.body_state = 3), 0) AS unreadable, coalesce(sum(m.labels_norm != ''), 0) AS labelled
       FROM folders f LEFT JOIN messages m ON m.folder_id = f.id WHERE f.account = ? GROUP BY f.id ORDER BY f.path`,
    )
    .all(A) as Counts[];
  return { stored, recount };
}

function expectCountersExact(): Counts[] {
  const { stored, recount } = countersAndRecount(env.db);
  expect(stored).toEqual(recount);
  return stored;
}

const byPath = (rows: Counts[], p: string) => rows.find((r) => r.path === p);

beforeAll(async () => {
  env = await startCacheEnv();
  let t = Date.UTC(2024, 2, 1, 9);
  for (const m of corpus) {
    await env.append("INBOX", m.raw, m.flags ?? [], new Date(t));
    t += 3600_000;
  }
});
afterAll(async () => {
  await env?.close();
});

describe("folder counters", () => {
  it("count every message after the initial sync and every body after the backfill", async () => {
    const c = await env.client();
    await syncFolder(env.db, c, A, "INBOX", { batchSize: 4, role: "inbox" });
    expect(byPath(expectCountersExact(), "INBOX")).toMatchObject({ cached: corpus.length, with_body: 0 });
    // Word searches need bodies: not answerable until the backfill, by the counters alone
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("project")).complete).toBe(false);
    await backfillBodies(env.db, c, A, "INBOX", { dailyBudgetBytes: 50 * 1024 * 1024 });
    const after = byPath(expectCountersExact(), "INBOX");
    expect((after?.with_body ?? 0) + (after?.unreadable ?? 0)).toBe(corpus.length);
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("project")).complete).toBe(true);
    const status = cacheStatus(env.db, { accounts: [A] }).accounts[0]?.folders.find(
      (f) => f.name === "INBOX",
    );
    expect(status).toMatchObject({ headers_cached: corpus.length, bodies_cached: after?.with_body });
  });

  it("follow flag changes, moves and expunges", async () => {
    const w = await env.client();
    await w.mailboxCreate("Work");
    await w.mailboxOpen("INBOX");
    const uids = (await w.search({ all: true }, { uid: true })) || [];
    await w.messageFlagsAdd(String(uids[0]), ["\\Flagged", "\\Seen"], { uid: true });
    await w.messageMove(`${uids[1]},${uids[2]}`, "Work", { uid: true });
    await w.messageDelete(String(uids[3]), { uid: true });
    await w.logout();
    const c = await env.client();
    await syncFolder(env.db, c, A, "INBOX", { role: "inbox" });
    await syncFolder(env.db, c, A, "Work", { role: null });
    const rows = expectCountersExact();
    expect(byPath(rows, "INBOX")?.cached).toBe(corpus.length - 3);
    expect(byPath(rows, "Work")?.cached).toBe(2);
    expect(getFolder(env.db, A, "INBOX")?.server_count).toBe(corpus.length - 3);
    // The moved messages arrive without bodies: word searches over Work are not answerable yet
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("in:work project")).complete).toBe(false);
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("in:work is:flagged")).complete).toBe(true);
  });

  it("follow body eviction and unreadable bodies", async () => {
    const before = byPath(expectCountersExact(), "INBOX");
    const evicted = await evictBodies(env.db, 0);
    expect(evicted).toBeGreaterThan(0);
    // Evicted bodies stay indexed (body_state 2), so they still count as bodies
    expect(byPath(expectCountersExact(), "INBOX")?.with_body).toBe(before?.with_body);
    const id = (
      env.db
        .prepare(
          "SELECT m.id FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.path = 'Work' LIMIT 1",
        )
        .get() as { id: number }
    ).id;
    env.db.prepare("UPDATE messages SET body_state = 3 WHERE id = ?").run(id);
    expect(byPath(expectCountersExact(), "Work")?.unreadable).toBe(1);
  });

  it("follow label changes (Gmail's labels arrive with the flags)", () => {
    const row = env.db
      .prepare(
        "SELECT m.folder_id, m.uid FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.path = 'INBOX' LIMIT 2",
      )
      .all() as { folder_id: number; uid: number }[];
    for (const r of row)
      updateFlags(env.db, r.folder_id, r.uid, new Set(["\\Seen"]), new Set(["Work", "Later"]), undefined);
    expect(byPath(expectCountersExact(), "INBOX")?.labelled).toBe(2);
    const first = row[0] as { folder_id: number; uid: number };
    updateFlags(env.db, first.folder_id, first.uid, new Set(), new Set(["Other"]), undefined);
    expect(byPath(expectCountersExact(), "INBOX")?.labelled).toBe(2);
    updateFlags(env.db, first.folder_id, first.uid, new Set(), new Set(), undefined);
    expect(byPath(expectCountersExact(), "INBOX")?.labelled).toBe(1);
  });

  it("restart from zero when UIDVALIDITY changes, and follow the refetch", async () => {
    env.dovecot.doveadm(["mailbox", "update", "-u", USER, "--uid-validity", "777", "Work"]);
    const c = await env.client();
    const r = await syncFolder(env.db, c, A, "Work", { role: null });
    expect(r.uidvalidityChanged).toBe(true);
    expect(byPath(expectCountersExact(), "Work")).toEqual({
      path: "Work",
      cached: 2,
      with_body: 0,
      unreadable: 0,
      labelled: 0,
    });
  });

  it("follow a row that INSERT OR REPLACE takes over", () => {
    const row = env.db
      .prepare(
        "SELECT m.* FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.path = 'INBOX' AND m.body_state = 2 LIMIT 1",
      )
      .get() as Record<string, unknown>;
    const cols = Object.keys(row);
    env.db
      .prepare(
        `INSERT OR REPLACE INTO messages (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`,
      )
      .run({ ...row, body_state: 0, id: newMessageSlot(env.db, row.internal_date as number).id });
    expectCountersExact();
  });

  it("follow a dropped folder's cascade, leaving the other folders' counters alone", () => {
    const before = byPath(expectCountersExact(), "INBOX");
    env.db.prepare("DELETE FROM folders WHERE account = ? AND path = 'Work'").run(A);
    const rows = expectCountersExact();
    expect(byPath(rows, "Work")).toBeUndefined();
    expect(byPath(rows, "INBOX")).toEqual(before);
  });
});

describe("the counters migration", () => {
  it("fills the counters of a cache that had messages before it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-counters-"));
    const db = new Database(path.join(dir, "cache.db"));
    try {
      db.pragma("foreign_keys = ON");
      migrate(db, FOLDER_COUNTERS_VERSION - 1);
      db.prepare("INSERT INTO folders (id, account, path, path_norm) VALUES (1, ?, 'INBOX', 'inbox')").run(A);
      db.prepare("INSERT INTO folders (id, account, path, path_norm) VALUES (2, ?, 'Old', 'old')").run(A);
      const ins = db.prepare(
        "INSERT INTO messages (folder_id, account, uid, thread_key, internal_date, body_state) VALUES (?, ?, ?, 't', 0, ?)",
      );
      for (let uid = 1; uid <= 7; uid++) ins.run(1, A, uid, uid % 3 === 0 ? 3 : uid % 2);
      ins.run(2, A, 1, 2);
      db.prepare("UPDATE messages SET labels_norm = ? WHERE folder_id = 2").run(listColumn(["Work"]));
      migrate(db, FOLDER_COUNTERS_VERSION);
      const { stored, recount } = countersAndRecount(db);
      expect(stored).toEqual(recount);
      expect(stored).toEqual([
        { path: "INBOX", cached: 7, with_body: 3, unreadable: 2, labelled: 0 },
        { path: "Old", cached: 1, with_body: 1, unreadable: 0, labelled: 1 },
      ]);
      // The later steps keep them right: the arrival-order step queues the evicted body (Old's,
      // body_state 2) to be fetched again, so it no longer counts as having one
      migrate(db);
      const later = countersAndRecount(db);
      expect(later.stored).toEqual(later.recount);
      expect(later.stored[1]).toEqual({ path: "Old", cached: 1, with_body: 0, unreadable: 0, labelled: 1 });
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
