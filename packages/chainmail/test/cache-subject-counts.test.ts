/**
 * Each subject word's count kept (src/cache/subject-counts.ts) equals the count walked in the
 * subjects' index, for every term, after random sequences of the cache's own writes: headers
 * written and written again with another subject (or the same, or none), removals, moves to Trash,
 * a folder cleared as on a UIDVALIDITY reset, a folder dropped, a removal by another connection,
 * a rolled-back write and folds (forced, or after enough changes); and a `subject:` word's count
 * through `searchCache` equals a count(*) of its MATCH. Also: the migration fills the counts of an
 * existing cache file, and again when it re-runs.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { SUBJECT_COUNTS_VERSION, migrate } from "../src/cache/schema.js";
import {
  clearFolder,
  dropFolder,
  ensureFolder,
  type FtsWrite,
  removeUids,
  runFtsWrites,
  upsertMessage,
} from "../src/cache/store.js";
import { foldSubjectChanges, keptSubjectCount, registerCacheFunctions } from "../src/cache/subject-counts.js";
import { parseQuery } from "../src/query/index.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";

const NOW = new Date("2026-01-01T00:00:00Z");
const N = 60;
/** Subject words, CJK text among them (one token per character, set apart from Latin words). */
const WORDS = [
  "update",
  "updates",
  "invoice",
  "Weekly",
  "café",
  "cafe",
  "会議",
  "定例会議です",
  "re:",
  "2026",
];
/** The words a count is asked for (`subject:` each). */
const ASKED = ["update", "invoice", "weekly", "cafe", "会", "議", "2026", "absent"];
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const subject = fc.array(fc.constantFrom(...WORDS), { maxLength: 4 }).map((ws) => ws.join(" "));
const uid = fc.integer({ min: 1, max: N });
type Op =
  | { k: "write"; from: number; subjects: string[]; folder: "INBOX" | "Trash" }
  | { k: "remove"; uid: number }
  | { k: "move"; uid: number }
  | { k: "clear"; trash: boolean }
  | { k: "drop" }
  | { k: "other"; uid: number }
  | { k: "rollback"; from: number; subjects: string[] }
  | { k: "fold" };
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      k: fc.constant("write" as const),
      from: fc.integer({ min: 0, max: N - 1 }),
      subjects: fc.array(subject, { minLength: 1, maxLength: 25 }),
      folder: fc.constantFrom("INBOX" as const, "Trash" as const),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ k: fc.constant("remove" as const), uid }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("move" as const), uid }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("clear" as const), trash: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("drop" as const) }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("other" as const), uid }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("rollback" as const),
      from: fc.integer({ min: 0, max: N - 1 }),
      subjects: fc.array(subject, { minLength: 1, maxLength: 5 }),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ k: fc.constant("fold" as const) }), weight: 2 },
);

/** Messages [from, from + subjects.length) written (new or again) as the sync writes a batch. */
function write(db: CacheDb, from: number, subjects: string[], folderPath = "INBOX") {
  const folder = ensureFolder(db, "a", folderPath, folderPath === "Trash" ? "trash" : "inbox");
  db.transaction(() => {
    const fts: FtsWrite[] = [];
    for (const [j, s] of subjects.entries()) {
      const i = (from + j) % N;
      const { msg } = syncedMailboxMessage(i, N, i + 1, NOW);
      upsertMessage(db, folder, { ...msg, envelope: { ...msg.envelope, subject: s } }, undefined, fts);
    }
    runFtsWrites(fts);
  })();
}

function apply(db: CacheDb, file: string, o: Op) {
  const folderId = (p: string) =>
    db.prepare("SELECT id FROM folders WHERE path = ?").pluck().get(p) as number | undefined;
  const inbox = folderId("INBOX");
  switch (o.k) {
    case "write":
      return write(db, o.from, o.subjects, o.folder);
    case "remove":
      if (inbox !== undefined) db.transaction(() => removeUids(db, inbox, [o.uid]))();
      return;
    case "move": {
      const trash = ensureFolder(db, "a", "Trash", "trash");
      db.prepare(
        "UPDATE OR IGNORE messages SET folder_id = ?, uid = uid + 100000 WHERE folder_id = ? AND uid = ?",
      ).run(trash.id, inbox ?? -1, o.uid);
      return;
    }
    case "clear": {
      const id = folderId(o.trash ? "Trash" : "INBOX");
      if (id !== undefined) db.transaction(() => clearFolder(db, id))();
      return;
    }
    case "drop": {
      const id = folderId("Trash");
      if (id !== undefined) dropFolder(db, id);
      return;
    }
    case "other": {
      // Another connection of the cache (set up as the cache's connections are) removes a message
      const other = new Database(file) as CacheDb;
      try {
        other.pragma("foreign_keys = ON");
        other.pragma("recursive_triggers = ON");
        registerCacheFunctions(other);
        if (inbox !== undefined) other.transaction(() => removeUids(other, inbox, [o.uid]))();
      } finally {
        other.close();
      }
      return;
    }
    case "rollback":
      try {
        db.transaction(() => {
          write(db, o.from, o.subjects);
          db.prepare("DELETE FROM messages WHERE id IN (SELECT id FROM messages ORDER BY id LIMIT 3)").run();
          foldSubjectChanges(db, 1);
          throw new Error("rolled back");
        })();
      } catch {
        // (the write is gone)
      }
      return;
    case "fold":
      return foldSubjectChanges(db, 1);
  }
}

/** Every term the subjects' index or the kept counts know, with its walked and its kept count. */
function counts(db: CacheDb) {
  const terms = db
    .prepare(
      "SELECT term FROM vocab_subjects_rows UNION SELECT term FROM subject_term_counts UNION SELECT term FROM vocab_subject_changes",
    )
    .pluck()
    .all() as string[];
  const walked = db.prepare("SELECT doc FROM vocab_subjects_rows WHERE term = ?").pluck();
  return terms.map((t) => ({
    term: t,
    walked: (walked.get(t) as number | undefined) ?? 0,
    kept: keptSubjectCount(db, t),
  }));
}

const matchCount = (db: CacheDb, word: string) =>
  db
    .prepare("SELECT count(*) FROM subjects_fts WHERE subjects_fts MATCH ?")
    .pluck()
    .get(`"${word}"`) as number;
/** The count a search gives for `subject:word` over all mail (Trash included: `in:anywhere`). */
const searched = (db: CacheDb, word: string) =>
  searchCache(db, parseQuery(`subject:${word} in:anywhere`), {
    accounts: ["a"],
    countOnly: true,
    limit: 25,
    now: NOW,
  }).count;

function expectExact(db: CacheDb, after: string) {
  for (const c of counts(db)) expect(c.kept, `${c.term} after ${after}`).toBe(c.walked);
  for (const w of ASKED) expect(searched(db, w), `subject:${w} after ${after}`).toBe(matchCount(db, w));
}

function tempFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-subjcount-"));
  dirs.push(dir);
  return path.join(dir, "cache.db");
}

describe("subject word counts kept", () => {
  it("equal the walked count for every term after random writes, removals, moves, resets and folds", () => {
    fc.assert(
      fc.property(
        fc.array(subject, { minLength: N, maxLength: N }),
        fc.array(op, { maxLength: 14 }),
        (first, ops) => {
          const file = tempFile();
          const db = openCache(file);
          try {
            write(db, 0, first);
            expectExact(db, "the first write");
            for (const o of ops) {
              apply(db, file, o);
              expectExact(db, JSON.stringify(o));
            }
            foldSubjectChanges(db, 1);
            expectExact(db, "the last fold");
            expect(db.prepare("SELECT count(*) FROM subject_term_counts WHERE n <= 0").pluck().get()).toBe(0);
          } finally {
            db.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 240_000);

  it("fold once the changes pass the threshold, in the batch's write", () => {
    const db = openCache(tempFile());
    const subjects = Array.from({ length: N }, (_, i) => `update ${WORDS[i % WORDS.length]}`);
    const changes = () => db.prepare("SELECT count(*) FROM subject_changes_docsize").pluck().get() as number;
    write(db, 0, subjects);
    expect(changes()).toBe(N);
    foldSubjectChanges(db, N + 1);
    expect(changes()).toBe(N);
    foldSubjectChanges(db, N);
    expect(changes()).toBe(0);
    expect(db.prepare("SELECT n FROM subject_term_counts WHERE term = 'updat'").pluck().get()).toBe(N);
    // Written again with the same subjects: nothing changes
    write(db, 0, subjects);
    expect(changes()).toBe(0);
    expectExact(db, "a rewrite");
    db.close();
  });

  it("are filled by the migration from an existing cache file, and again when it re-runs", () => {
    const file = tempFile();
    const old = new Database(file) as CacheDb;
    old.pragma("foreign_keys = ON");
    old.pragma("recursive_triggers = ON");
    migrate(old, SUBJECT_COUNTS_VERSION - 1);
    write(
      old,
      0,
      Array.from({ length: N }, (_, i) => `${WORDS[i % WORDS.length]} update ${i}`),
    );
    old.close();
    const db = openCache(file);
    expect(db.prepare("SELECT count(*) FROM subject_term_counts").pluck().get()).toBeGreaterThan(N);
    expectExact(db, "the migration");
    const kept = db.prepare("SELECT * FROM subject_term_counts ORDER BY term").all();
    // A copy restored from before the step, with counts and changes left as they were: it runs again
    db.prepare("UPDATE subject_term_counts SET n = n + 3").run();
    write(db, 5, ["invoice 会議"]);
    db.pragma(`user_version = ${SUBJECT_COUNTS_VERSION - 1}`);
    migrate(db);
    expectExact(db, "the migration again");
    foldSubjectChanges(db, 1);
    write(db, 5, [`${WORDS[5]} update 5`]);
    foldSubjectChanges(db, 1);
    expect(db.prepare("SELECT * FROM subject_term_counts ORDER BY term").all()).toEqual(kept);
    db.close();
  });
});
