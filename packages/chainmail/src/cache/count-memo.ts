// Counts remembered until the cache changes. A count that walks its matches (one word's doclist in
// FTS5, an address's range with `has:attachment` probed per message) costs the same every time it
// is asked, and it is asked again and again for the same query: each page of a search counts it
// anew, and the same question comes back while nothing was synced. At 1,000,000 messages
// `subject:update` (213,907 matches) spent 5.3 ms counting, `invoice` 2.6, `has:attachment from:`
// the top sender 5.6, of searches that otherwise take about 1 ms.
//
// A remembered count is exact because it is dropped on any change to the database: the key is
// SQLite's `total_changes()` (every row this connection inserted, updated or deleted, trigger and
// FTS5 rows included, rolled back or not) and `data_version` (changes by every other connection:
// the repack worker). A count is only remembered when the generation read before it equals the one
// read after it (nothing changed while it was counted), and never inside a transaction (it would
// count rows a rollback takes away without changing `total_changes`).
import { type CacheDb, stmt } from "./schema.js";

interface Memo {
  generation: string;
  counts: Map<string, unknown>;
}

const memos = new WeakMap<CacheDb, Memo>();
/** Distinct counts kept per connection between changes (a few dozen bytes each). */
const MAX_COUNTS = 512;

/** Changes by this connection and commits by others, or null inside a transaction. */
function generationOf(db: CacheDb): string | null {
  if (db.inTransaction) return null;
  return stmt(db, "SELECT total_changes() || ' ' || data_version FROM pragma_data_version")
    .pluck()
    .get() as string;
}

/**
 * `count()`'s answer for `key` (which must name everything the count depends on: the SQL and its
 * parameters), from memory when nothing in the database changed since it was counted.
 */
export function rememberedCount<T>(db: CacheDb, key: string, count: () => T): T {
  // The scale benchmark asks each query a hundred times: it judges the first count of a query
  // (every count walked, as after any write), so its daemon runs with remembering off
  if (process.env.CHAINMAIL_REMEMBER_COUNTS === "0") return count();
  const before = generationOf(db);
  if (before === null) return count();
  let memo = memos.get(db);
  if (memo?.generation === before) {
    if (memo.counts.has(key)) return memo.counts.get(key) as T;
  } else {
    memo = { generation: before, counts: new Map() };
    memos.set(db, memo);
  }
  const n = count();
  // (the count itself may have written: the word's token is found through a scratch table once)
  if (generationOf(db) !== before) return n;
  if (memo.counts.size >= MAX_COUNTS) memo.counts.clear();
  memo.counts.set(key, n);
  return n;
}

/** Drops what this connection remembers (the benchmark measures counts that are not remembered). */
export function forgetCounts(db: CacheDb): void {
  memos.delete(db);
}
