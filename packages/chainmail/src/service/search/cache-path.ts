/**
 * The cache path: cache rows in the search row shape, every cache match of some accounts (for a
 * merge with server rows), and the fast path, one keyset-paged cache query when the cache answers
 * every account.
 */
import { CursorError, type SearchCacheResult } from "../../cache/index.js";
import { searchCacheShaped } from "../../cache/search.js";
import { type Call, type ServiceContext, auditRead } from "../context.js";
import { SEARCH_ROW } from "./cache-row.js";
import { badCursor, encodeCursor } from "./cursor.js";
import { parse } from "./query.js";
import { addSnippets } from "./server-path.js";
import type { Hit, Plan, SearchParams, SearchResult } from "./types.js";

/** Accounts whose mail all sits in All Mail (Google): searched there alone unless the query says in:. */
function googleAccounts(ctx: ServiceContext): string[] {
  return ctx.config.accounts.filter((a) => a.provider === "google").map((a) => a.name);
}

/** Every cache match of these accounts up to `want` rows, newest first by arrival. */
export function cacheHits(
  ctx: ServiceContext,
  plans: Plan[],
  p: SearchParams,
  want: number,
): { hits: Hit[]; counts: Map<string, number> } {
  const hits: Hit[] = [];
  const counts = new Map<string, number>();
  for (const plan of plans) {
    let cursor: string | null = null;
    let taken = 0;
    do {
      const res: SearchCacheResult<Hit> = searchCacheShaped(
        ctx.cache!.db,
        plan.bound,
        {
          accounts: [plan.name],
          allMailAccounts: googleAccounts(ctx),
          limit: 200,
          cursor,
          threads: p.threads,
          snippets: p.snippets,
          countOnly: p.count_only,
        },
        SEARCH_ROW,
      );
      counts.set(plan.name, res.account_counts[plan.name] ?? 0);
      hits.push(...res.rows);
      taken += res.rows.length;
      cursor = res.next_cursor;
    } while (cursor && taken < want);
  }
  return { hits, counts };
}

export async function cacheOnly(
  ctx: ServiceContext,
  call: Call,
  p: SearchParams,
  plans: Plan[],
  partial: SearchResult["partial"],
  cacheCursor: string | null,
): Promise<SearchResult> {
  const names = plans.map((x) => x.name);
  // Each account's bound query differs only in its account:/in: folding; bind per account and OR
  // them would lose the keyset order, so the unbound query runs with the accounts filter.
  const ast = plans.length === 1 ? plans[0]!.bound : parse(p.query);
  let res: SearchCacheResult<Hit>;
  try {
    res = searchCacheShaped(
      ctx.cache!.db,
      ast,
      {
        accounts: names,
        allMailAccounts: googleAccounts(ctx),
        limit: p.limit,
        cursor: cacheCursor,
        threads: p.threads,
        snippets: p.snippets,
        countOnly: p.count_only,
      },
      SEARCH_ROW,
    );
  } catch (err) {
    if (err instanceof CursorError) throw badCursor();
    throw err;
  }
  const counts = names.map((name) => ({
    account: name,
    count: res.account_counts[name] ?? 0,
    source: "cache" as const,
  }));
  for (const c of counts)
    auditRead(
      ctx,
      call,
      c.account,
      "allowed",
      `search (${p.query.length} chars): ${c.count} match(es) from cache`,
    );
  const hits = res.rows;
  const missing = hits.filter((r) => r.snippet === undefined);
  if (p.snippets && missing.length) {
    // Rows whose body text is not stored (evicted, or older than a settled cache's reach) get their
    // snippet from the server; without the server they keep an empty one, as the cache has no text.
    await addSnippets(ctx, missing).catch(() => undefined);
    for (const r of missing) r.snippet ??= "";
  }
  return {
    rows: hits.map(({ sortDate: _d, uid: _u, path: _p, ...row }) => row),
    count: res.count,
    next_cursor: res.next_cursor ? encodeCursor(p, { c: res.next_cursor }) : null,
    source: "cache",
    account_counts: counts,
    partial,
  };
}
