// The query plan of every statement a search runs, for each query shape of the benchmark, with and
// without the accounts filter, on a populated cache: without statistics (as the daemon runs), and
// with statistics gathered on a small cache that then grew (stale) or on the grown one. A plan that
// drives a search through the thread index sorts the whole account; one through the folder index
// reads every row of the folder; a bare SCAN reads the table.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { parseQuery } from "../src/query/index.js";
import { ROOT_REPLIES, THREAD_MEMBERS } from "../src/service/cached-thread.js";
import { POP_NOW, populateCache, senderAddress } from "./support/populate.js";

const A = "work";
const B = "home";
let dir: string;
let db: CacheDb;

/** Each shape and the index (or FTS) its statements must use. */
const SHAPES: Array<[string, RegExp]> = [
  ["has:attachment", /USING COVERING INDEX messages_attach/],
  ["larger:1M", /USING COVERING INDEX messages_size \(size>\?\)/],
  ["is:unread in:inbox", /USING COVERING INDEX messages_unread/],
  ["is:flagged", /USING COVERING INDEX messages_flagged/],
  // (subject: terms alone: the subjects' own index, src/cache/storage-migration.ts)
  ["subject:meeting", /subjects_fts VIRTUAL TABLE/],
  // A whole address reads the address index's range (src/cache/address-index.ts), newest first
  [`from:${senderAddress(20)}`, /SEARCH a USING PRIMARY KEY \(address=\? AND field=\?/],
  [`is:unread from:${senderAddress(30)}`, /SEARCH a USING PRIMARY KEY \(address=\? AND field=\?/],
  ["from:news", /messages_fts VIRTUAL TABLE/],
  ["invoice", /messages_fts VIRTUAL TABLE/],
  ["budget deadline", /messages_fts VIRTUAL TABLE/],
  ['"meeting report"', /messages_fts VIRTUAL TABLE/],
  // Text after a date floor reads FTS5 from the floor's id up (`>`: a rowid lower bound, which
  // ids following arrival time make a date bound), each hit's row looked up by id
  ["newer_than:30d project", /SCAN f VIRTUAL TABLE INDEX \d+:M\d+>\nSEARCH m USING INTEGER PRIMARY KEY/],
  ["newer_than:7d project", /SCAN f VIRTUAL TABLE INDEX \d+:M\d+>\nSEARCH m USING INTEGER PRIMARY KEY/],
  ["newer_than:5y project", /SCAN f VIRTUAL TABLE INDEX \d+:M\d+>\nSEARCH m USING INTEGER PRIMARY KEY/],
  ["{invoice budget} -report", /messages_fts VIRTUAL TABLE/],
];

/** Shapes whose count the folder counters give: count_only reads no message row at all. */
const FOLDER_COUNTED = new Set(["has:attachment", "is:unread in:inbox", "is:flagged"]);

interface Call {
  sql: string;
  args: unknown[];
}

/** The database with every statement's SQL and arguments recorded as it runs. */
function recording(target: CacheDb, calls: Call[]): CacheDb {
  const wrapStatement = (s: Database.Statement, sql: string) =>
    new Proxy(s, {
      get(t, k) {
        const v = Reflect.get(t, k) as unknown;
        if (typeof v !== "function") return v;
        if (k === "all" || k === "get" || k === "run" || k === "iterate")
          return (...args: unknown[]) => {
            calls.push({ sql, args });
            return (v as (...a: unknown[]) => unknown).apply(t, args);
          };
        return (v as (...a: unknown[]) => unknown).bind(t);
      },
    });
  return new Proxy(target, {
    get(t, k) {
      if (k === "prepare") return (sql: string) => wrapStatement(t.prepare(sql), sql);
      const v = Reflect.get(t, k) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

/** The plan lines of every message-reading statement of one search. */
function searchPlans(q: string, accounts: string[] | undefined, countOnly: boolean): string[][] {
  const calls: Call[] = [];
  searchCache(recording(db, calls), parseQuery(q), {
    limit: 25,
    accounts,
    countOnly,
    now: new Date(POP_NOW),
  });
  return calls
    .filter((c) => /\bmessages m\b/.test(c.sql))
    .map((c) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...(c.args as unknown[])) as { detail: string }[]).map(
        (r) => r.detail,
      ),
    );
}

function expectGoodPlans(label: string, a: string, b: string) {
  for (const [q, want] of SHAPES)
    for (const accounts of [[a], [b], [a, b], undefined])
      for (const countOnly of [false, true]) {
        const plans = searchPlans(q, accounts, countOnly);
        const what = `${label}: ${q} accounts=${accounts?.join(",") ?? "all"} count_only=${countOnly}`;
        if (countOnly && FOLDER_COUNTED.has(q)) {
          expect(plans, what).toEqual([]);
          continue;
        }
        expect(plans.length, what).toBeGreaterThan(0);
        const lines = plans.flat();
        expect(
          lines.filter((l) => /messages_thread|messages_body/.test(l)),
          what,
        ).toEqual([]);
        expect(
          lines.filter((l) => /^SCAN m$/.test(l)),
          what,
        ).toEqual([]);
        // The first statement that reads messages (the count, or count and page together) uses the
        // shape's own index
        expect((plans[0] as string[]).join("\n"), what).toMatch(want);
      }
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-plans-"));
  db = openCache(path.join(dir, "cache.db"));
});
afterAll(() => {
  db?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("search query plans", () => {
  it("use each shape's own index on a small cache", () => {
    populateCache(db, {
      accounts: [
        { name: A, messages: 300 },
        { name: B, messages: 60 },
      ],
    });
    expectGoodPlans("small", A, B);
  });

  it("keep them as the cache grows, without statistics and with stale or fresh ones", () => {
    db.exec("ANALYZE");
    populateCache(db, {
      accounts: [
        { name: `${A}2`, messages: 15_000 },
        { name: `${B}2`, messages: 1_500 },
      ],
      seed: 7,
    });
    expectGoodPlans("stale statistics", `${A}2`, `${B}2`);
    db.exec("DELETE FROM sqlite_stat1");
    db.exec("ANALYZE sqlite_schema");
    expectGoodPlans("no statistics", `${A}2`, B);
    db.exec("ANALYZE");
    expectGoodPlans("fresh statistics", A, `${B}2`);
  });
});

describe("text pages", () => {
  it("read FTS5 newest first and stop after the page, with or without the accounts filter", () => {
    // Ids follow arrival time (src/cache/arrival-id.ts), so FTS5's rowid order is the page order:
    // no sort, and no walk of the date index testing rows against every hit
    for (const q of ["invoice", "{invoice budget} -report", "newer_than:30d project", "subject:meeting"])
      for (const accounts of [[`${A}2`], [`${A}2`, B], undefined]) {
        const calls: Call[] = [];
        const res = searchCache(recording(db, calls), parseQuery(q), {
          limit: 25,
          accounts,
          now: new Date(POP_NOW),
        });
        const what = `${q} accounts=${accounts?.join(",") ?? "all"}`;
        expect(res.rows.length, what).toBeGreaterThan(0);
        // The page: the statement that yields ids and dates, before the one that shapes the rows
        const paging = calls.filter((c) => /^SELECT m\.id, m\.internal_date\b/.test(c.sql.trim()));
        expect(paging, what).toHaveLength(1);
        const call = paging[0] as Call;
        const page = (
          db.prepare(`EXPLAIN QUERY PLAN ${call.sql}`).all(...(call.args as unknown[])) as {
            detail: string;
          }[]
        )
          .map((r) => r.detail)
          .join("\n");
        expect(page, what).toMatch(/SCAN f VIRTUAL TABLE INDEX/);
        expect(page, what).toMatch(/SEARCH m USING INTEGER PRIMARY KEY/);
        expect(page, what).not.toMatch(/TEMP B-TREE|messages_newest/);
      }
  });
});

describe("threads with a date floor", () => {
  it("walk the date index over a short stretch and look the hits up over a long one", () => {
    // (collapsed threads count distinct thread keys, which FTS5's order does not give)
    for (const [q, want] of [
      ["newer_than:7d project", /USING INDEX messages_newest \(internal_date>\?\)[\s\S]*messages_fts/],
      ["newer_than:5y project", /USING INTEGER PRIMARY KEY[\s\S]*messages_fts/],
    ] as const) {
      const calls: Call[] = [];
      searchCache(recording(db, calls), parseQuery(q), {
        limit: 25,
        threads: true,
        now: new Date(POP_NOW),
      });

      const count = calls.find((c) => /count\(DISTINCT m\.thread_key\)/.test(c.sql)) as Call;
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${count.sql}`).all(...(count.args as unknown[])) as {
          detail: string;
        }[]
      )
        .map((r) => r.detail)
        .join("\n");
      expect(plan, q).toMatch(want);
    }
  });
});

describe("result shaping", () => {
  it("reads a page's rows, thread fields and snippets in one statement whatever the page size", () => {
    const statements = (limit: number, snippets: boolean) => {
      const calls: Call[] = [];
      const res = searchCache(recording(db, calls), parseQuery("is:unread"), {
        limit,
        snippets,
        accounts: [A],
        now: new Date(POP_NOW),
      });
      expect(res.rows).toHaveLength(limit);
      return { calls: calls.length, rows: res.rows };
    };
    const small = statements(2, true);
    const big = statements(60, true);
    expect(big.calls).toBe(small.calls);
    expect(statements(60, false).calls).toBe(small.calls);
    for (const r of big.rows) {
      expect(r.snippet).toMatch(/\S/);
      expect(r.references).toEqual([]);
      expect(r.message_id).toMatch(/^<b\d+@work>$/);
    }
  });
});

describe("one account with mail in Trash", () => {
  it("counts text shapes by FTS5 and reads only the Trash rows (or the hits) beside it", () => {
    const one = openCache(path.join(dir, "one.db"));
    try {
      populateCache(one, { accounts: [{ name: "solo", messages: 3000 }] });
      for (const [q, want] of SHAPES)
        for (const countOnly of [false, true]) {
          const calls: Call[] = [];
          searchCache(recording(one, calls), parseQuery(q), {
            limit: 25,
            accounts: ["solo"],
            countOnly,
            now: new Date(POP_NOW),
          });
          const what = `${q} count_only=${countOnly}`;
          const lines = calls
            .filter((c) => /\bmessages m\b/.test(c.sql))
            .flatMap((c) =>
              (
                one.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...(c.args as unknown[])) as {
                  detail: string;
                }[]
              ).map((r) => r.detail),
            );
          expect(
            lines.filter((l) => /^SCAN m$|messages_thread/.test(l)),
            what,
          ).toEqual([]);
          // The folder index only to read the Trash rows by folder, never walked whole
          expect(
            lines.filter((l) => /messages_body/.test(l) && !/messages_body \(folder_id=\?\)/.test(l)),
            what,
          ).toEqual([]);
          if (!FOLDER_COUNTED.has(q) || !countOnly)
            expect(calls.map((c) => c.sql).join("\n"), what).toMatch(
              want.source.includes("_fts")
                ? // (FTS5's MATCH, or for one word its term statistics: src/cache/fts-vocab.ts)
                  /(messages|subjects)_fts|vocab_(messages|subjects)_/
                : // (a whole address: the address index's rows carry the folder for the scope; alone,
                  // its count is the sum of its per-folder counts)
                  want.source.includes("address=")
                  ? countOnly && (q.startsWith("from:") || q.startsWith("has:attachment from:"))
                    ? /address_counts a WHERE a\.address = \? AND a\.field = \? AND \(a\.folder_id NOT IN \(\?\)\)/
                    : /message_addresses a( CROSS JOIN messages m ON m\.id = a\.id)? WHERE a\.address = \? AND a\.field = \?/
                  : /messages m/,
            );
        }
    } finally {
      one.close();
    }
  });
});

describe("get_thread from the cache", () => {
  it("finds a thread's members through the thread key and Message-ID indexes, not the account", () => {
    const plan = (sql: string, args: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail);
    const members = plan(THREAD_MEMBERS, [A, "<t1@work>", "<b3@work>", "<t1@work>", "<b3@work>", A]);
    expect(members.join("\n")).toMatch(/messages_thread \(account=\? AND thread_key=\?\)/);
    expect(members.join("\n")).toMatch(/message_meta_msgid \(message_id=\?\)/);
    expect(members.filter((l) => /^SCAN|messages_thread \(account=\?\)$/.test(l))).toEqual([]);
    const replies = plan(ROOT_REPLIES, ["<t1@work>", A]);
    expect(replies.join("\n")).toMatch(/message_meta_msgid \(message_id=\?\)/);
    expect(replies.filter((l) => /^SCAN|messages_thread/.test(l))).toEqual([]);
  });
});
