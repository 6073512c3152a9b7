// Every match of a query from the cache, newest first, paging through with the cursor, and the
// count (which count_only must give as well): what the cache-storage and cache-repack tests
// compare before and after a change of how cache.db is stored.
import { expect } from "vitest";
import type { CacheDb } from "../../src/cache/index.js";
import { searchCache } from "../../src/cache/search.js";
import { parseQuery } from "../../src/query/index.js";

export function answer(db: CacheDb, q: string, now: Date, account = "a"): { count: number; uids: number[] } {
  const ast = parseQuery(q);
  const opts = { limit: 100, accounts: [account], now };
  const first = searchCache(db, ast, opts);
  const uids = first.rows.map((r) => r.uid);
  for (let cursor = first.next_cursor; cursor; ) {
    const next = searchCache(db, ast, { ...opts, cursor });
    uids.push(...next.rows.map((r) => r.uid));
    cursor = next.next_cursor;
  }
  const counted = searchCache(db, ast, { ...opts, countOnly: true }).count;
  expect(counted).toBe(first.count);
  return { count: first.count, uids };
}
