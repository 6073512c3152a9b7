/**
 * The cache's arrival times of a folder read for the server path's first search (cache/arrivals.ts):
 * read in slices with the event loop free between them, they come out in exactly the order
 * `SORT (ARRIVAL)` reversed gives (arrival second descending, ties by UID descending) whatever the
 * UID order, and a folder whose UIDVALIDITY changes while its slices are read gives nothing (its
 * later slices would name other messages under the same UIDs).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { cachedArrivals, folderRow, readArrivals } from "../src/cache/arrivals.js";
import { type CacheDb, openCache } from "../src/cache/index.js";
import { ensureFolder, upsertMessage } from "../src/cache/store.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";

const NOW = new Date("2026-12-01T00:00:00Z");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A fresh cache with one folder whose message `uid` arrived at `seconds[uid - 1]`. */
function cacheWith(seconds: number[], folderPath = "Bulk"): CacheDb {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-arrivals-"));
  dirs.push(dir);
  const db = openCache(path.join(dir, "cache.db"));
  const folder = ensureFolder(db, "a", folderPath, null);
  db.prepare("UPDATE folders SET uidvalidity = '7' WHERE id = ?").run(folder.id);
  db.transaction(() => {
    seconds.forEach((s, k) => {
      const { msg } = syncedMailboxMessage(k, seconds.length, k + 1, NOW);
      upsertMessage(db, folder, { ...msg, internalDate: new Date(s * 1000) });
    });
  })();
  return db;
}

/** SORT (ARRIVAL) reversed, computed plainly. */
const expected = (seconds: number[]) =>
  seconds
    .map((s, k) => ({ uid: k + 1, s }))
    .sort((a, b) => b.s - a.s || b.uid - a.uid)
    .map((x) => x.uid);

describe("a folder's cached arrivals", () => {
  it("come out newest first by (arrival second, UID), read in slices, for any arrival order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1_700_000_000, max: 1_700_000_040 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        async (seconds, slice) => {
          const db = cacheWith(seconds);
          const folder = folderRow(db, "a", "Bulk");
          if (!folder) throw new Error("no folder");
          const read = await readArrivals(db, "a", "Bulk", folder, slice);
          expect(read && [...read.uids]).toEqual(expected(seconds));
          expect(read && [...read.seconds]).toEqual(expected(seconds).map((uid) => seconds[uid - 1]));
          db.close();
        },
      ),
      { numRuns: 25 },
    );
  });

  it("reads a folder larger than one slice whole through cachedArrivals", async () => {
    // 6,000 messages (more than one slice of 5,000), every tenth arriving a day early (UID order is not arrival order)
    const seconds = Array.from({ length: 6_000 }, (_, k) => 1_700_000_000 + k - (k % 10 === 0 ? 86_400 : 0));
    const db = cacheWith(seconds);
    const got = await cachedArrivals(db, "a", "Bulk", "7");
    expect(got?.cached).toBe(6_000);
    expect(got && Array.from(got.uids)).toEqual(expected(seconds));
    // Under another UIDVALIDITY the rows name other messages: nothing
    expect(await cachedArrivals(db, "a", "Bulk", "8")).toBeNull();
    db.close();
  });

  it("gives nothing when the folder's UIDVALIDITY changes between two slices", async () => {
    const seconds = Array.from({ length: 30 }, (_, k) => 1_700_000_000 + k);
    const db = cacheWith(seconds);
    const folder = folderRow(db, "a", "Bulk");
    if (!folder) throw new Error("no folder");
    let changed = false;
    const read = await readArrivals(db, "a", "Bulk", folder, 10, () => {
      if (changed) return;
      changed = true;
      // What the sync does in one transaction: the folder's rows cleared, the new UIDVALIDITY
      // recorded, and new messages under the old UIDs
      db.prepare("UPDATE folders SET uidvalidity = '8' WHERE id = ?").run(folder.id);
    });
    expect(changed).toBe(true);
    expect(read).toBeNull();
    // Unchanged, the same read gives every row
    const again = folderRow(db, "a", "Bulk");
    if (!again) throw new Error("no folder");
    expect((await readArrivals(db, "a", "Bulk", again, 10))?.uids.length).toBe(30);
    db.close();
  });
});
