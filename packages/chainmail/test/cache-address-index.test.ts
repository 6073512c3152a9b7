// The address index (src/cache/address-index.ts): a cache file written before it answers whole-address
// terms with the same rows after the upgrade as a cache written with it, and both as the definition
// (the address in that header, in any ASCII case, Trash and Junk left out without in:); the triggers
// keep it right when a message's headers are written again, when it is removed and when its folder
// is cleared; pages follow each other newest first.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { ADDRESS_INDEX_VERSION, SCHEMA_VERSION, migrate } from "../src/cache/schema.js";
import {
  type FtsWrite,
  clearFolder,
  ensureFolder,
  removeUids,
  runFtsWrites,
  upsertMessage,
} from "../src/cache/store.js";
import type { SyncedMessage } from "../src/imap/raw-fetch.js";
import { ageCutoffMs, dayStartMs, parseQuery } from "../src/query/index.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-addr-"));
  dirs.push(d);
  return d;
};

const PEOPLE = [
  { name: "Ann", address: "Ann@Example.COM" },
  { name: "Bob", address: "bob@x.example" },
  { name: "Jo Bob", address: "jo.bob@x.example" },
  { name: "List", address: "team-list@lists.example" },
  { name: "Me", address: "me@bench.example" },
  { name: "", address: "bob@x.example.org" },
];
const T0 = Date.UTC(2025, 0, 1);

interface Spec {
  uid: number;
  folder: "INBOX" | "Trash";
  from: number;
  to: number[];
  cc: number[];
  bcc: number[];
  seen: boolean;
  day: number;
  /** When it arrived, to the millisecond (default: the start of its day). */
  at?: number;
}

/** Deterministic mail: every person in every header, some in Trash, some read. */
const SPECS: Spec[] = Array.from({ length: 120 }, (_, i) => ({
  uid: i + 1,
  folder: i % 9 === 4 ? "Trash" : "INBOX",
  from: (i * 7) % PEOPLE.length,
  to: [(i * 5 + 1) % PEOPLE.length, ...(i % 4 === 0 ? [4] : [])],
  cc: i % 3 === 0 ? [(i + 1) % PEOPLE.length] : [],
  bcc: i % 10 === 0 ? [1] : [],
  seen: i % 2 === 0,
  day: i,
}));

const person = (k: number) => PEOPLE[k] as { name: string; address: string };
function message(s: Spec): SyncedMessage {
  return {
    seq: s.uid,
    uid: s.uid,
    flags: new Set(s.seen ? ["\\Seen"] : []),
    size: 1000,
    internalDate: new Date(s.at ?? T0 + s.day * 86_400_000),
    envelope: {
      date: new Date(T0 + s.day * 86_400_000),
      subject: `message ${s.uid}`,
      messageId: `<m${s.uid}@test>`,
      from: [person(s.from)],
      to: s.to.map(person),
      cc: s.cc.map(person),
      bcc: s.bcc.map(person),
    },
  } as SyncedMessage;
}

function write(db: CacheDb, specs: Spec[]) {
  db.transaction(() => {
    for (const s of specs)
      upsertMessage(
        db,
        ensureFolder(db, "a", s.folder, s.folder === "Trash" ? "trash" : "inbox"),
        message(s),
      );
  })();
}

/**
 * As the header sync writes: `size` messages per transaction, their address rows and FTS rows added
 * together after the batch's other writes (runFtsWrites).
 */
function writeBatched(db: CacheDb, specs: Spec[], size: number) {
  for (let i = 0; i < specs.length; i += size)
    db.transaction(() => {
      const later: FtsWrite[] = [];
      for (const s of specs.slice(i, i + size))
        upsertMessage(
          db,
          ensureFolder(db, "a", s.folder, s.folder === "Trash" ? "trash" : "inbox"),
          message(s),
          undefined,
          later,
        );
      runFtsWrites(later);
    })();
}

const indexRows = (db: CacheDb) =>
  db.prepare("SELECT address, field, id, folder_id FROM message_addresses ORDER BY 1, 2, 3").all();
const countRows = (db: CacheDb) =>
  db.prepare("SELECT address, field, folder_id, n FROM address_counts WHERE n > 0 ORDER BY 1, 2, 3").all();
const recount = (db: CacheDb) =>
  db
    .prepare(
      "SELECT address, field, folder_id, count(*) AS n FROM message_addresses GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
    .all();

/** A cache file at the version before the address index, written by the cache's own code. */
function oldCache(file: string, specs: Spec[]): void {
  const db = new Database(file);
  db.pragma("foreign_keys = ON");
  db.pragma("recursive_triggers = ON");
  migrate(db, ADDRESS_INDEX_VERSION - 1);
  write(db, specs);
  expect(
    db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'message_addresses'").get(),
  ).toEqual({ n: 0 });
  db.close();
}

const QUERIES = [
  "from:ann@example.com",
  "from:ANN@EXAMPLE.COM",
  "from:bob@x.example",
  "to:me@bench.example",
  "to:team-list@lists.example",
  "cc:bob@x.example",
  "bcc:bob@x.example",
  "from:bob@x.example is:unread",
  "from:ann@example.com after:2025/02/01",
  "-from:ann@example.com",
  "from:ann@example.com OR to:me@bench.example",
  // (an OR at the top of the where, with no Trash scope after it once Trash is empty: the cursor
  // must bind to the whole OR)
  "is:unread OR from:bob@x.example",
  "in:trash from:bob@x.example",
  "in:anywhere to:me@bench.example",
];

/** The definition, from the specs: a whole address is that address in that header, any case. */
function expected(q: string, specs: Spec[]): string[] {
  const is = (k: number[], a: string) => k.some((p) => person(p).address.toLowerCase() === a);
  const leaf = (s: Spec, t: string): boolean => {
    const m = /^(-?)(from|to|cc|bcc):(.+)$/.exec(t);
    if (m) {
      const a = (m[3] as string).toLowerCase();
      const hit =
        m[2] === "from"
          ? is([s.from], a)
          : m[2] === "to"
            ? is(s.to, a)
            : m[2] === "cc"
              ? is(s.cc, a)
              : is(s.bcc, a);
      return m[1] ? !hit : hit;
    }
    if (t === "is:unread") return !s.seen;
    if (t === "after:2025/02/01") return s.day >= 31;
    if (t === "in:trash") return s.folder === "Trash";
    if (t === "in:anywhere") return true;
    throw new Error(`no definition for ${t}`);
  };
  const match = (s: Spec) =>
    (q.includes(" OR ") ? q.split(" OR ").some((t) => leaf(s, t)) : q.split(" ").every((t) => leaf(s, t))) &&
    (q.includes("in:") || s.folder !== "Trash");
  return specs
    .filter(match)
    .sort((x, y) => y.day - x.day)
    .map((s) => `<m${s.uid}@test>`);
}

/** Every page of a search, newest first, `limit` at a time. */
function allPages(db: CacheDb, q: string, limit: number) {
  const out: string[] = [];
  let cursor: string | null = null;
  let count = -1;
  do {
    const r = searchCache(db, parseQuery(q), { limit, cursor, now: new Date(T0 + 400 * 86_400_000) });
    count = r.count;
    out.push(...r.rows.map((x) => x.message_id ?? ""));
    cursor = r.next_cursor;
  } while (cursor);
  const only = searchCache(db, parseQuery(q), { countOnly: true, now: new Date(T0 + 400 * 86_400_000) });
  return { rows: out, count, countOnly: only.count };
}

describe("the address index", () => {
  it("answers the same rows in a cache upgraded to it, a cache written with it, and the definition", () => {
    const dir = tmp();
    oldCache(path.join(dir, "old.db"), SPECS);
    const upgraded = openCache(path.join(dir, "old.db"));
    const fresh = openCache(path.join(dir, "fresh.db"));
    try {
      expect(upgraded.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
      write(fresh, SPECS);
      const table = (db: CacheDb) =>
        db.prepare("SELECT address, field, id, folder_id FROM message_addresses ORDER BY 1, 2, 3").all();
      expect(table(upgraded)).toEqual(table(fresh));
      for (const q of QUERIES) {
        const want = expected(q, SPECS);
        expect(want.length, q).toBeGreaterThan(0);
        for (const db of [upgraded, fresh]) {
          const got = allPages(db, q, 7);
          expect(got.rows, q).toEqual(want);
          expect(got.count, q).toBe(want.length);
          expect(got.countOnly, q).toBe(want.length);
        }
      }
      // A part of an address stays a phrase in the field's words (every sender at that domain)
      expect(allPages(fresh, "from:x.example", 50).count).toBe(
        SPECS.filter((s) => /x\.example/.test(person(s.from).address) && s.folder !== "Trash").length,
      );
    } finally {
      upgraded.close();
      fresh.close();
    }
  });

  it("follows headers written again, removed messages and cleared folders", () => {
    const db = openCache(path.join(tmp(), "cache.db"));
    try {
      const specs = SPECS.slice(0, 40).map((s) => ({ ...s }));
      write(db, specs);
      // Headers written again with another sender (an INSERT OR REPLACE of the row's headers)
      const moved = specs.filter((s) => s.from === 0 && s.folder === "INBOX").slice(0, 3);
      for (const s of moved) s.from = 1;
      write(db, moved);
      for (const q of ["from:ann@example.com", "from:bob@x.example"])
        expect(allPages(db, q, 5).rows, q).toEqual(expected(q, specs));
      // Removed by UID, and a folder cleared
      const inbox = ensureFolder(db, "a", "INBOX", "inbox");
      const gone = specs.filter((s) => s.folder === "INBOX").slice(0, 10);
      db.transaction(() =>
        removeUids(
          db,
          inbox.id,
          gone.map((s) => s.uid),
        ),
      )();
      const left = specs.filter((s) => !gone.includes(s));
      for (const q of QUERIES) expect(allPages(db, q, 5).rows, q).toEqual(expected(q, left));
      const trash = ensureFolder(db, "a", "Trash", "trash");
      db.transaction(() => clearFolder(db, trash.id))();
      const inboxOnly = left.filter((s) => s.folder === "INBOX");
      for (const q of QUERIES) expect(allPages(db, q, 5).rows, q).toEqual(expected(q, inboxOnly));
      // The per-folder counts are the index's rows counted
      expect(
        db
          .prepare("SELECT address, field, folder_id, n FROM address_counts WHERE n > 0 ORDER BY 1, 2, 3")
          .all(),
      ).toEqual(
        db
          .prepare(
            "SELECT address, field, folder_id, count(*) AS n FROM message_addresses GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
          )
          .all(),
      );
      // No row left behind for a message that is not cached
      expect(
        db
          .prepare("SELECT count(*) AS n FROM message_addresses WHERE id NOT IN (SELECT id FROM messages)")
          .get(),
      ).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it("holds the same rows and counts when a batch's headers are written together, new or again (property)", () => {
    // An address twice in one header, and in two headers of one message
    const specs = SPECS.slice(0, 60).map((s, i) => (i % 11 === 3 ? { ...s, to: [2, 2], cc: [2] } : s));
    const one = openCache(":memory:");
    try {
      write(one, specs);
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 40 }),
          fc.subarray(specs.map((s) => s.uid)),
          fc.integer({ min: 0, max: PEOPLE.length - 1 }),
          (size, again, from) => {
            const db = openCache(":memory:");
            const ref = openCache(":memory:");
            try {
              writeBatched(db, specs, size);
              expect(indexRows(db)).toEqual(indexRows(one));
              expect(countRows(db)).toEqual(countRows(one));
              // Headers written again (another sender), mixed with new mail in the batches
              const rewritten = specs.map((s) => (again.includes(s.uid) ? { ...s, from } : s));
              const more = SPECS.slice(60, 80);
              writeBatched(db, [...rewritten.filter((s) => again.includes(s.uid)), ...more], size);
              write(ref, [...rewritten, ...more]);
              expect(indexRows(db)).toEqual(indexRows(ref));
              expect(countRows(db)).toEqual(countRows(ref));
              expect(countRows(db)).toEqual(recount(db));
            } finally {
              db.close();
              ref.close();
            }
          },
        ),
        { numRuns: 25 },
      );
    } finally {
      one.close();
    }
  });

  it("pages any mail newest first with counts that match, whatever the page size (property)", () => {
    const db = openCache(path.join(tmp(), "cache.db"));
    try {
      write(db, SPECS);
      fc.assert(
        fc.property(fc.constantFrom(...QUERIES), fc.integer({ min: 1, max: 30 }), (q, limit) => {
          const got = allPages(db, q, limit);
          const want = expected(q, SPECS);
          expect(got.rows).toEqual(want);
          expect(got.count).toBe(want.length);
        }),
        { numRuns: 40 },
      );
    } finally {
      db.close();
    }
  });

  it("answers a date AND-ed to a whole address as the message's date says, to the second, from the index row's id alone (property)", () => {
    // Mail a day apart, and a message one second each side of a day's start and on it, so a bound
    // falls between two seconds
    const around = (day: number) => [-1, 0, 1].map((sec) => T0 + day * 86_400_000 + sec * 1000);
    const times = [
      ...SPECS.slice(0, 60).map((s) => T0 + s.day * 86_400_000 + 43_200_000),
      ...around(20),
      ...around(41),
    ];
    const specs = times.map((at, i) => ({ ...(SPECS[i % SPECS.length] as Spec), uid: i + 1, at }));
    const db = openCache(path.join(tmp(), "cache.db"));
    try {
      write(db, specs);
      const day = (d: number) => new Date(T0 + d * 86_400_000).toISOString().slice(0, 10);
      const check = (addr: string, kind: string, d1: number, d2: number, limit: number, half: boolean) => {
        // (`newer_than:40d` from this now is the start of day 20, to the millisecond or half a second after)
        const now = new Date(T0 + 60 * 86_400_000 + (half ? 500 : 0));
        const [lo, hi] = d1 <= d2 ? [d1, d2] : [d2, d1];
        const age = Math.max(1, 60 - d1);
        const q =
          kind === "after"
            ? `${addr} after:${day(d1).replaceAll("-", "/")}`
            : kind === "before"
              ? `${addr} before:${day(d1).replaceAll("-", "/")}`
              : kind === "after+before"
                ? `${addr} after:${day(lo).replaceAll("-", "/")} before:${day(hi).replaceAll("-", "/")}`
                : `${addr} ${kind}:${age}d`;
        const inDates = (at: number) =>
          kind === "after"
            ? at >= dayStartMs(day(d1))
            : kind === "before"
              ? at < dayStartMs(day(d1))
              : kind === "after+before"
                ? at >= dayStartMs(day(lo)) && at < dayStartMs(day(hi))
                : kind === "newer_than"
                  ? at >= ageCutoffMs(now, age, "d")
                  : at < ageCutoffMs(now, age, "d");
        const [field, address] = addr.split(":") as [string, string];
        const lists = (s: Spec) =>
          field === "from" ? [s.from] : field === "to" ? s.to : field === "cc" ? s.cc : s.bcc;
        const want = specs
          .filter(
            (s) =>
              s.folder !== "Trash" &&
              lists(s).some((k) => person(k).address.toLowerCase() === address) &&
              inDates(Math.floor(s.at / 1000) * 1000),
          )
          .sort((x, y) => y.at - x.at || y.uid - x.uid)
          .map((s) => `<m${s.uid}@test>`);
        const rows: string[] = [];
        let cursor: string | null = null;
        let count = -1;
        do {
          const r = searchCache(db, parseQuery(q), { limit, cursor, now });
          count = r.count;
          rows.push(...r.rows.map((x) => x.message_id ?? ""));
          cursor = r.next_cursor;
        } while (cursor);
        expect(rows, q).toEqual(want);
        expect(count, q).toBe(want.length);
        expect(searchCache(db, parseQuery(q), { countOnly: true, now }).count, q).toBe(want.length);
      };
      const ADDRS = [
        "from:bob@x.example",
        "to:me@bench.example",
        "from:ann@example.com",
        "from:jo.bob@x.example",
      ];
      const KINDS = ["after", "before", "newer_than", "older_than", "after+before"];
      // Every bound on the seconds around a day's start, then any (property)
      for (const addr of ADDRS)
        for (const kind of KINDS)
          for (const d of [19, 20, 21, 40, 41, 42])
            for (const half of [false, true]) check(addr, kind, d, d === 20 ? 41 : 20, 5, half);
      fc.assert(
        fc.property(
          fc.constantFrom(...ADDRS, "cc:bob@x.example"),
          fc.constantFrom(...KINDS),
          fc.integer({ min: 0, max: 62 }),
          fc.integer({ min: 0, max: 62 }),
          fc.integer({ min: 1, max: 30 }),
          fc.boolean(),
          check,
        ),
        { numRuns: 120 },
      );
    } finally {
      db.close();
    }
  });
});
