/**
 * A word's count from FTS5's term statistics (src/cache/fts-vocab.ts) after the cache's own
 * writes: `writeInSlices` (src/cache/slices.ts) sets `temp_store` around each transaction, and
 * SQLite drops the connection's temp schema whenever that setting changes (the term statistics'
 * tables were once there: a count after a sync's write failed with "no such table"). A count after
 * the writes must still be the count of the word's matches, from the term statistics.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache, searchCache } from "../src/cache/index.js";
import { vocabCount } from "../src/cache/fts-vocab.js";
import { writeInSlices } from "../src/cache/slices.js";
import { ensureFolder, type FtsWrite, runFtsWrites, upsertMessage } from "../src/cache/store.js";
import { parseQuery } from "../src/query/index.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";

const NOW = new Date("2026-12-01T00:00:00Z");
const N = 600;
let dir = "";
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes messages [from, to) of the generated mailbox as the sync does, in slices. */
async function write(db: CacheDb, from: number, to: number): Promise<void> {
  const folder = ensureFolder(db, "a", "INBOX", "inbox");
  const items = Array.from({ length: to - from }, (_, k) => from + k);
  let fts: FtsWrite[] = [];
  await writeInSlices(db, items, {
    begin: () => {
      fts = [];
    },
    write: (i) => {
      upsertMessage(db, folder, syncedMailboxMessage(i, N, i + 1, NOW).msg, null, fts);
    },
    end: () => runFtsWrites(fts),
  });
}

const matchCount = (db: CacheDb, word: string) =>
  (
    db.prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?").get(`"${word}"`) as {
      n: number;
    }
  ).n;

describe("a word's count after the cache's writes", () => {
  it("is the count of its matches before and after every slice of writes", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-vocab-"));
    const db = openCache(path.join(dir, "cache.db"));
    const word = "update";
    const count = () =>
      searchCache(db, parseQuery(`subject:${word}`), { accounts: ["a"], countOnly: true, now: NOW }).count;
    const subjectCount = () =>
      (
        db
          .prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?")
          .get(`subject : "${word}"`) as { n: number }
      ).n;
    await write(db, 0, N / 2);
    const first = count();
    expect(first).toBe(subjectCount());
    expect(first).toBeGreaterThan(0);
    // (from the term statistics, not a MATCH: the path under test answers)
    expect(vocabCount(db, `subject : "${word}"`, "messages_fts")).toBe(first);
    await write(db, N / 2, N);
    expect(vocabCount(db, `subject : "${word}"`, "messages_fts")).toBe(subjectCount());
    expect(count()).toBe(subjectCount());
    expect(count()).toBeGreaterThan(first);
    const body = searchCache(db, parseQuery("invoice"), { accounts: ["a"], countOnly: true, now: NOW });
    expect(body.count).toBe(matchCount(db, "invoice"));
    expect(vocabCount(db, '"invoice"', "messages_fts")).toBe(body.count);
    db.close();
  });
});
