/**
 * search. Per account: `server` asks the IMAP server (the query module's imapSearchFolder); `cache`
 * answers from cache.db whatever it holds (missing folders in `partial`); `auto` uses the cache when
 * cacheCanAnswerQuery says it is complete and fresh for the query, else the server. When every
 * account is on the cache, one keyset-paged cache query answers (the fast path); otherwise rows of
 * both kinds are merged newest first and paged by offset.
 *
 * This file decides which path answers; the paths live beside it: query.ts (parsing), plan.ts (cache
 * or server per account), cache-path.ts, server-path.ts, folder-lists.ts (which folders the server
 * path reads), merge.ts (merged pages of cache and server streams), collapsed.ts (threads: true),
 * cursor.ts (next_cursor), types.ts.
 */
import type { ListResponse } from "imapflow";
import { MailError } from "../../errors.js";
import { splitAccounts } from "../../query/analyze.js";
import { leaves } from "../../query/ast.js";
import { type Call, type ServiceContext, accountOf } from "../context.js";
import { cacheOnly } from "./cache-path.js";
import { collapsedSearch } from "./collapsed.js";
import { decodeCursor } from "./cursor.js";
import { checkInFolders } from "./folder-lists.js";
import { pagedSearch } from "./merge.js";
import { planAccounts } from "./plan.js";
import { parse, withItemThreads } from "./query.js";
import type { SearchParams, SearchResult } from "./types.js";

export { decodeCursor, type DecodedCursor, encodeCursor, type StreamPos } from "./cursor.js";
export { mergePage } from "./merge.js";
export type { SearchParams, SearchResult, SearchRow, SearchSource } from "./types.js";

export async function search(ctx: ServiceContext, call: Call, p: SearchParams): Promise<SearchResult> {
  const ast = withItemThreads(ctx, parse(p.query), p.source);
  for (const name of p.accounts) accountOf(ctx, name);
  const { perAccount, named } = splitAccounts(
    ast,
    ctx.config.accounts.map((a) => a.name),
    p.accounts,
  );
  for (const n of named) {
    if (!ctx.config.accounts.some((a) => a.name.toLowerCase() === n.toLowerCase())) {
      throw new MailError(
        "NOT_FOUND",
        `query names an unknown account ${JSON.stringify(n)}`,
        "list_accounts gives the account names.",
      );
    }
  }
  const listed = new Map<string, ListResponse[]>();
  await checkInFolders(ctx, ast, [...perAccount.keys()], listed);
  const partial: SearchResult["partial"] = [];
  const cursor = decodeCursor(p);
  // item: terms are answered from the cache alone (the server knows nothing of work items).
  const planned = leaves(ast).some((l) => l.kind === "item") ? { ...p, source: "cache" as const } : p;
  let plans = planAccounts(ctx, planned, perAccount, partial);
  // A search that began on the cache keeps paging the cache, so its pages stay consistent.
  if (cursor.kind === "cache") plans = plans.map((x) => ({ ...x, use: "cache" as const }));
  const onCache = plans.filter((x) => x.use === "cache");
  const onServer = plans.filter((x) => x.use === "server");
  // One keyset-paged cache query when every account is answered by the cache: the fast path.
  if (onServer.length === 0 && onCache.length > 0 && (cursor.kind === "none" || cursor.kind === "cache")) {
    return cacheOnly(ctx, call, p, onCache, partial, cursor.cache);
  }
  if (p.threads) return collapsedSearch(ctx, call, p, plans, partial, cursor, listed);
  return pagedSearch(ctx, call, p, plans, partial, cursor, listed);
}
