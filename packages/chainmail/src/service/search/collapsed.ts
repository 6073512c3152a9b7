/**
 * threads: true off the cache fast path: every match of every path, collapsed to one row per
 * thread, paged by offset.
 */
import type { ListResponse } from "imapflow";
import { MailError, toWireError, partOfResult } from "../../errors.js";
import { type Call, type ServiceContext, accountOf, auditRead } from "../context.js";
import { cacheHits } from "./cache-path.js";
import { badCursor, type DecodedCursor, encodeCursor } from "./cursor.js";
import { withFolderList } from "./folder-lists.js";
import { overallSource } from "./merge.js";
import { addSnippets, arrivalsFrom, folderError, serverMatches, serverRows } from "./server-path.js";
import type { Hit, Plan, SearchParams, SearchResult } from "./types.js";

/**
 * threads: true off the cache fast path. Collapsing a thread to its newest row needs every match's
 * thread, so every match's envelope is fetched (no cap), and pages are offsets into the collapsed list.
 */
export async function collapsedSearch(
  ctx: ServiceContext,
  call: Call,
  p: SearchParams,
  plans: Plan[],
  partial: SearchResult["partial"],
  cursor: DecodedCursor,
  listed: ReadonlyMap<string, ListResponse[]>,
): Promise<SearchResult> {
  if (cursor.kind === "streams") throw badCursor();
  const onCache = plans.filter((x) => x.use === "cache");
  const onServer = plans.filter((x) => x.use === "server");
  const offset = cursor.kind === "offset" ? cursor.offset : 0;
  const all: Hit[] = [];
  const counts: SearchResult["account_counts"] = [];
  const fromCache = onCache.length
    ? cacheHits(ctx, onCache, { ...p, snippets: p.snippets, count_only: false }, offset + p.limit)
    : null;
  if (fromCache) {
    all.push(...fromCache.hits);
    for (const plan of onCache) {
      const n = fromCache.counts.get(plan.name) ?? 0;
      auditRead(
        ctx,
        call,
        plan.name,
        "allowed",
        `search (${p.query.length} chars): ${n} match(es) from cache`,
      );
    }
  }
  await Promise.all(
    onServer.map(async ({ name, bound }) => {
      const account = accountOf(ctx, name);
      try {
        const got = await ctx.pool.read(account, (c) =>
          withFolderList(ctx, c, account, bound, listed, async (folders, remembered) => {
            const mine: SearchResult["partial"] = [];
            const hits: Hit[] = [];
            for (const s of await serverMatches(
              c,
              account,
              bound,
              mine,
              false,
              undefined,
              folders,
              remembered,
              arrivalsFrom(ctx, name),
              ctx.log,
            )) {
              try {
                hits.push(...(await serverRows(c, account, s, s.uids)));
              } catch (err) {
                if (!c.usable) throw err;
                mine.push({ account: name, folder: s.name, error: folderError(c, err, "FETCH", ctx.log) });
              }
            }
            return { hits, mine };
          }),
        );
        partial.push(...got.mine);
        all.push(...got.hits);
        auditRead(
          ctx,
          call,
          name,
          "allowed",
          `search (${p.query.length} chars): ${got.hits.length} match(es) from server`,
        );
      } catch (err) {
        partial.push({ account: name, error: partOfResult(err, ctx.log, `search of account ${name}`) });
        auditRead(ctx, call, name, "error", `search: ${toWireError(err).reason}`);
      }
    }),
  );
  all.sort((a, b) => b.sortDate - a.sortDate || a.account.localeCompare(b.account) || b.uid - a.uid);
  const seen = new Set<string>();
  const rows = all.filter((r) => {
    const key = `${r.account}\u0000${r.thread_id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  let count = 0;
  for (const plan of plans) {
    if (plan.use === "server" && partial.some((x) => x.account === plan.name && !x.folder)) continue;
    const n =
      plan.use === "cache"
        ? (fromCache?.counts.get(plan.name) ?? 0)
        : rows.filter((r) => r.account === plan.name).length;
    count += n;
    counts.push({ account: plan.name, count: n, source: plan.use });
  }
  if (plans.length > 0 && counts.length === 0) {
    const first = partial[0]!.error;
    throw new MailError(first.reason, first.message, first.hint, first.detail);
  }
  const page = p.count_only ? [] : rows.slice(offset, offset + p.limit);
  const missing = page.filter((r) => r.snippet === undefined);
  if (p.snippets && missing.length) await addSnippets(ctx, missing);
  const next = !p.count_only && offset + p.limit < count ? encodeCursor(p, { o: offset + p.limit }) : null;
  return {
    rows: page.map(({ sortDate: _d, uid: _u, path: _p, ...row }) => row),
    count,
    next_cursor: next,
    source: overallSource(counts),
    account_counts: counts,
    partial,
  };
}
