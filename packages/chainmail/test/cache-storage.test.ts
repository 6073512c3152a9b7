// The cache's storage step (src/cache/storage-migration.ts): compressed bodies read back as the text
// they were, a cache upgraded from the previous schema and one written with the new answer every
// search alike, and `subject:` terms answered from the subjects' own index match exactly what the
// word index's subject column matches.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BODY_DEFLATE,
  BODY_TEXT,
  decodeBody,
  encodeBody,
  putBody,
  readBody,
} from "../src/cache/body-store.js";
import { type CacheDb, compactFts, openCache } from "../src/cache/index.js";
import { COMPACT_STORAGE_VERSION, SCHEMA_VERSION, migrate, stmt } from "../src/cache/schema.js";
import { searchCache } from "../src/cache/search.js";
import {
  ensureFolder,
  type FtsWrite,
  indexMessage,
  removeUids,
  runFtsWrites,
  upsertMessage,
} from "../src/cache/store.js";
import { compileToSql, ftsString, parseQuery } from "../src/query/index.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";
import { answer as answerAll } from "./support/cache-answer.js";

const N = 1200;
const NOW = new Date("2026-01-01T00:00:00Z");
let dir: string;
let upgraded: CacheDb;
let fresh: CacheDb;
const texts = new Map<number, string>();
const subjects = new Map<number, string>();

/**
 * The generated mail written with the cache's own code; `oldBodies` stores the bodies as the
 * previous schema's backfill did (the text itself, no encoding column).
 */
function write(db: CacheDb, oldBodies: boolean): void {
  const folder = ensureFolder(db, "a", "INBOX", "inbox");
  for (let from = 0; from < N; from += 300) {
    const bodies: { id: number; text: string }[] = [];
    db.transaction(() => {
      const fts: FtsWrite[] = [];
      for (let i = from; i < Math.min(N, from + 300); i++) {
        const { msg, text } = syncedMailboxMessage(i, N, i + 1, NOW);
        texts.set(i + 1, text);
        subjects.set(i + 1, msg.envelope?.subject ?? "");
        bodies.push({ id: upsertMessage(db, folder, msg, null, fts), text });
      }
      runFtsWrites(fts);
    })();
    db.transaction(() => {
      for (const { id, text } of bodies) {
        if (oldBodies)
          db.prepare(
            "INSERT OR REPLACE INTO bodies (message_rowid, text, bytes, fetched_at) VALUES (?, ?, ?, ?)",
          ).run(id, text, Buffer.byteLength(text), 1);
        else putBody(db, id, text, 1);
        stmt(db, "UPDATE messages SET body_state = 1 WHERE id = ?").run(id);
      }
      runFtsWrites(bodies.map(({ id, text }) => ({ id, write: () => indexMessage(db, id, text) })));
    })();
  }
  db.prepare("UPDATE folders SET complete = 1, last_sync = ?, server_count = ?").run(NOW.getTime(), N);
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-storage-"));
  const oldFile = path.join(dir, "old.db");
  const old = new Database(oldFile);
  old.pragma("foreign_keys = ON");
  old.pragma("recursive_triggers = ON");
  migrate(old, COMPACT_STORAGE_VERSION - 1);
  write(old, true);
  expect(old.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'subjects_fts'").get()).toEqual({
    n: 0,
  });
  old.close();
  upgraded = openCache(oldFile);
  fresh = openCache(path.join(dir, "new.db"));
  write(fresh, false);
}, 120_000);

afterAll(() => {
  upgraded?.close();
  fresh?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const idOf = (db: CacheDb, uid: number) =>
  (db.prepare("SELECT id FROM messages WHERE uid = ?").get(uid) as { id: number }).id;

const answer = (db: CacheDb, q: string) => answerAll(db, q, NOW);

/** The words of the generated subjects, as unicode61 splits them (lower case). */
function subjectWords(): Map<string, number> {
  const freq = new Map<string, number>();
  for (const s of subjects.values())
    for (const w of new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []))
      freq.set(w, (freq.get(w) ?? 0) + 1);
  return freq;
}

describe("bodies stored compressed", () => {
  it("read back exactly for any well-formed text, and as the TEXT form reads back for any other", () => {
    const db = openCache(":memory:");
    const folder = ensureFolder(db, "p", "INBOX", "inbox");
    const id = upsertMessage(db, folder, syncedMailboxMessage(0, 10, 1, NOW).msg);
    // The previous schema's form: the text itself in a TEXT column
    db.exec("CREATE TABLE old_form (x TEXT)");
    const asText = (s: string) => {
      db.prepare("DELETE FROM old_form").run();
      db.prepare("INSERT INTO old_form VALUES (?)").run(s);
      return db.prepare("SELECT x FROM old_form").pluck().get() as string;
    };
    const wellFormed = (s: string) =>
      !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ""));
    // Long, repetitive strings of any code units (lone surrogates included) and of any code points
    const anyText = fc.oneof(
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc
        .tuple(fc.string({ unit: "binary", minLength: 1, maxLength: 40 }), fc.integer({ min: 2, max: 200 }))
        .map(([s, k]) => s.repeat(k)),
      fc
        .tuple(fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }), fc.integer({ min: 2, max: 200 }))
        .map(([s, k]) => s.repeat(k)),
      // a surrogate pair cut in half, as the body limit's slice can leave it
      fc.string({ unit: "grapheme", maxLength: 200 }).map((s) => `${s.repeat(3)}😀`.slice(0, -1)),
    );
    let compressed = 0;
    fc.assert(
      fc.property(anyText, (s) => {
        putBody(db, id, s, 1);
        const back = readBody(db, id);
        expect(back).toBe(asText(s));
        // a well-formed string (what a fetched body is) comes back as it went in, stored either way
        if (wellFormed(s)) {
          expect(back).toBe(s);
          const { value, enc } = encodeBody(s);
          expect(decodeBody(value, enc)).toBe(s);
        }
        if (db.prepare("SELECT enc FROM bodies WHERE message_rowid = ?").pluck().get(id) === BODY_DEFLATE)
          compressed++;
      }),
      { numRuns: 400 },
    );
    // (the repeated strings are the compressed ones)
    expect(compressed).toBeGreaterThan(50);
    db.close();
  });

  it("through the bodies table: a new cache compresses, an upgraded one keeps its rows readable", () => {
    const encs = (db: CacheDb) =>
      Object.fromEntries(
        (
          db.prepare("SELECT enc, count(*) AS n FROM bodies GROUP BY enc").all() as {
            enc: number;
            n: number;
          }[]
        ).map((r) => [r.enc, r.n]),
      );
    expect(encs(upgraded)).toEqual({ [BODY_TEXT]: N });
    expect(encs(fresh)[BODY_DEFLATE]).toBeGreaterThan(N * 0.9);
    for (const [uid, text] of texts) {
      expect(readBody(upgraded, idOf(upgraded, uid))).toBe(text);
      expect(readBody(fresh, idOf(fresh, uid))).toBe(text);
    }
    // snippets read the stored body too
    const snip = (db: CacheDb) =>
      searchCache(db, parseQuery("invoice"), {
        limit: 50,
        accounts: ["a"],
        now: NOW,
        snippets: true,
      }).rows.map((r) => r.snippet);
    expect(snip(fresh)).toEqual(snip(upgraded));
    expect(snip(fresh).every((s) => typeof s === "string" && s.length > 0)).toBe(true);
    // a body written again over an old row is compressed; replaced, it reads back the new text
    const id = idOf(upgraded, 7);
    putBody(upgraded, id, `${texts.get(7)} again`, 2);
    expect(readBody(upgraded, id)).toBe(`${texts.get(7)} again`);
    putBody(upgraded, id, texts.get(7) as string, 1);
    expect(readBody(upgraded, id)).toBe(texts.get(7));
  });

  it("shrink the generated bodies to under half", () => {
    const stored = (fresh.prepare("SELECT sum(length(text)) AS n FROM bodies").get() as { n: number }).n;
    const text = (fresh.prepare("SELECT sum(bytes) AS n FROM bodies").get() as { n: number }).n;
    expect(stored).toBeLessThan(text / 2);
  });
});

describe("an upgraded cache and a new one", () => {
  it("are at the current version, the new one's word index with the body first", () => {
    for (const db of [upgraded, fresh])
      expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    const first = (db: CacheDb) =>
      (db.prepare("SELECT name FROM pragma_table_info('messages_fts')").pluck().all() as string[])[0];
    expect(first(upgraded)).toBe("subject");
    expect(first(fresh)).toBe("body");
    // (and its date indexes ascending, read backwards for newest first)
    const desc = (db: CacheDb) =>
      db.prepare("SELECT \"desc\" FROM pragma_index_xinfo('messages_unread') WHERE cid >= 0").pluck().all();
    expect(desc(upgraded)).toEqual([1, 1, 0, 0]);
    expect(desc(fresh)).toEqual([0, 0, 0, 0]);
  });

  it("answer every search alike", () => {
    const words = [...subjectWords().entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w);
    const pick = [...words.slice(0, 15), ...words.filter((_, i) => i % 37 === 5).slice(0, 25)];
    const queries = [
      ...pick.map((w) => `subject:${w}`),
      ...pick.slice(0, 12).map((w) => w),
      ...pick.slice(0, 10).map((w, i) => `subject:${w} subject:${pick[i + 3]}`),
      ...pick.slice(0, 10).map((w, i) => `subject:${w} -subject:${pick[i + 1]}`),
      ...pick.slice(0, 10).map((w, i) => `subject:${w} OR subject:${pick[i + 2]}`),
      ...pick.slice(0, 8).map((w) => `subject:${w} is:unread`),
      ...pick.slice(0, 8).map((w) => `subject:${w} after:2025/06/01`),
      ...pick.slice(0, 8).map((w) => `subject:${w} invoice`),
      ...pick.slice(0, 6).map((w) => `{subject:${w} from:notifications}`),
      `subject:"re ${pick[0]}"`,
      "subject:日本語",
      "subject:Grüße",
      "subject:grusse",
      "subject:café",
      "from:notifications",
      "to:me@bench.example subject:update",
      "quokkabench",
      "-subject:update",
    ];
    for (const q of queries) expect(answer(fresh, q), q).toEqual(answer(upgraded, q));
  });
});

describe("subject: terms from the subjects' own index", () => {
  /** The old plan's count: the word index's subject column, matched directly. */
  const columnCount = (db: CacheDb, expr: string) =>
    (
      db.prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?").get(expr) as {
        n: number;
      }
    ).n;

  it("matches what the word index's subject column matches, and the subjects' words themselves", () => {
    const freq = subjectWords();
    const all = [...freq.keys()];
    // Words no other subject word can share a stem with (none starts like it), so the porter
    // stemmer cannot merge them: their matches are the subjects holding the word itself
    const plain = all.filter(
      (w) =>
        /^[a-z]{4,}$/.test(w) && !all.some((x) => x !== w && x.slice(0, w.length - 2) === w.slice(0, -2)),
    );
    expect(plain.length).toBeGreaterThan(20);
    for (const db of [fresh, upgraded]) {
      for (const w of all.slice(0, 200)) {
        const got = answer(db, `subject:"${w}"`);
        expect(got.count, w).toBe(columnCount(db, `subject : ${ftsString(w)}`));
      }
      for (const w of plain.slice(0, 60)) {
        const want = [...subjects.entries()]
          .filter(([, s]) => (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? ([] as string[])).includes(w))
          .map(([uid]) => uid)
          .sort((a, b) => b - a);
        const got = answer(db, `subject:${w}`);
        expect(
          [...got.uids].sort((a, b) => b - a),
          w,
        ).toEqual(want);
      }
    }
  });

  it("are chosen for expressions of subject: terms alone", () => {
    const table = (q: string) => compileToSql(parseQuery(q), NOW).ftsTable;
    expect(table("subject:update")).toBe("subjects_fts");
    expect(table("subject:update -subject:report")).toBe("subjects_fts");
    expect(table("subject:update OR subject:report")).toBe("subjects_fts");
    expect(table("subject:update is:unread")).toBe("subjects_fts");
    expect(table("subject:update invoice")).toBe("messages_fts");
    expect(table("subject:update OR from:ann")).toBe("messages_fts");
    expect(table("update")).toBe("messages_fts");
  });

  it("forgets removed messages", () => {
    const folder = ensureFolder(fresh, "a", "INBOX", "inbox");
    const gone = [...subjects.entries()].filter(([, s]) => /update/i.test(s)).slice(0, 40);
    const before = answer(fresh, "subject:update");
    fresh.transaction(() =>
      removeUids(
        fresh,
        folder.id,
        gone.map(([uid]) => uid),
      ),
    )();
    const after = answer(fresh, "subject:update");
    expect(after.count).toBe(before.count - gone.length);
    expect(after.count).toBe(columnCount(fresh, 'subject : "update"'));
    const rows = fresh
      .prepare("SELECT count(*) AS n FROM subjects_fts WHERE subjects_fts MATCH 'update'")
      .get();
    expect(rows).toEqual({ n: after.count });
  });
});

describe("free pages", () => {
  it("go back to the file system after a full merge in a new cache; an older cache keeps its mode", async () => {
    expect(fresh.pragma("auto_vacuum", { simple: true })).toBe(2);
    expect(upgraded.pragma("auto_vacuum", { simple: true })).toBe(0);
    const folder = ensureFolder(fresh, "a", "INBOX", "inbox");
    fresh.transaction(() =>
      removeUids(
        fresh,
        folder.id,
        Array.from({ length: 400 }, (_, i) => i + 401),
      ),
    )();
    const pages = fresh.pragma("page_count", { simple: true }) as number;
    expect(await compactFts(fresh, { force: true })).toBe(true);
    expect(fresh.pragma("freelist_count", { simple: true })).toBe(0);
    expect(fresh.pragma("page_count", { simple: true })).toBeLessThan(pages);
    // what is left still answers as the word index's subject column does
    const n = (
      fresh
        .prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?")
        .get('subject : "update"') as { n: number }
    ).n;
    expect(answer(fresh, "subject:update").count).toBe(n);
  });
});
