import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compactFts, ftsUpkeep } from "../src/cache/fts.js";
import { openCache } from "../src/cache/index.js";
import type { CacheDb } from "../src/cache/schema.js";
import { writerThreads } from "../src/cache/writer.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A cache file whose FTS index holds `n` segments: each row committed on its own, as a backfill's slices. */
function cacheWithSegments(n: number): CacheDb {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-merge-"));
  dirs.push(dir);
  const db = openCache(path.join(dir, "cache.db"));
  const add = db.prepare("INSERT INTO messages_fts (rowid, subject, body) VALUES (?, ?, ?)");
  for (let i = 1; i <= n; i++) add.run(i, `subject ${i} quarterly report`, `body ${i} invoice budget words`);
  return db;
}

const segments = (db: CacheDb) =>
  (db.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;
const changes = (db: CacheDb) => db.prepare("SELECT total_changes() AS n").pluck().get() as number;
const matches = (db: CacheDb, word: string) =>
  (db.prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?").get(word) as { n: number })
    .n;

describe("the FTS merging of a bulk writer", () => {
  it("runs on the header writer's thread: once it runs, this connection writes none of it, and the segments are merged all the same", async () => {
    const db = cacheWithSegments(40);
    const add = db.prepare("INSERT INTO messages_fts (rowid, subject, body) VALUES (?, ?, ?)");
    const threads = writerThreads();
    // No thread yet: the first step here, and the thread started only because it found work
    await ftsUpkeep(db, { offThread: true });
    expect(writerThreads()).toBe(threads + 1);
    // More segments, as the backfill's next slices write them
    for (let i = 41; i <= 160; i++)
      add.run(i, `subject ${i} quarterly report`, `body ${i} invoice budget words`);
    const before = segments(db);
    expect(before).toBeGreaterThanOrEqual(8);
    const written = changes(db);
    await ftsUpkeep(db, { offThread: true });
    expect(changes(db)).toBe(written);
    expect(segments(db)).toBeLessThan(before / 4);
    // The same merging on this thread: as many segments left, written by this connection
    const db2 = cacheWithSegments(160);
    const written2 = changes(db2);
    await ftsUpkeep(db2);
    expect(changes(db2)).toBeGreaterThan(written2);
    expect(segments(db2)).toBeLessThan(before / 4);
    // The index answers as before
    expect(matches(db, "invoice")).toBe(160);
    expect(matches(db, "quarterly")).toBe(160);
    db.close();
    db2.close();
  });

  it("leaves a thread alone when nothing is to merge (new mail, a message at a time)", async () => {
    // (the earlier tests' threads end with their connections)
    for (let i = 0; i < 200 && writerThreads() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    const db = cacheWithSegments(1);
    const threads = writerThreads();
    await ftsUpkeep(db, { offThread: true });
    expect(writerThreads()).toBe(threads);
    db.close();
  });

  it("compacts to one segment off the thread, and on it where no such thread can run (a cache in memory)", async () => {
    const db = cacheWithSegments(60);
    const written = changes(db);
    expect(await compactFts(db, { force: true, offThread: true })).toBe(true);
    expect(segments(db)).toBe(1);
    const here = changes(db) - written;
    expect(matches(db, "budget")).toBe(60);
    db.close();

    const mem = openCache(":memory:");
    const add = mem.prepare("INSERT INTO messages_fts (rowid, subject, body) VALUES (?, ?, ?)");
    for (let i = 1; i <= 60; i++) add.run(i, `subject ${i}`, `body ${i} budget`);
    const memWritten = changes(mem);
    expect(await compactFts(mem, { force: true, offThread: true })).toBe(true);
    expect(segments(mem)).toBe(1);
    expect(matches(mem, "budget")).toBe(60);
    // In memory every step was this connection's
    expect(changes(mem) - memWritten).toBeGreaterThan(here);
    mem.close();
  });
});
