/**
 * Merging and paging off the cache fast path (threads: false): each cache account and each server
 * folder is a stream already newest first; a page is their k-way merge, and the cursor keeps each
 * stream's position (a server folder's by the UID of its last row taken).
 */
import type { ListResponse } from "imapflow";
import { MailError, toWireError, partOfResult } from "../../errors.js";
import { type Call, type ServiceContext, accountOf, auditRead } from "../context.js";
import { cacheHits } from "./cache-path.js";
import { badCursor, type DecodedCursor, encodeCursor, type StreamPos } from "./cursor.js";
import { withFolderList } from "./folder-lists.js";
import { addSnippets, arrivalsFrom, folderError, serverMatches, serverRows } from "./server-path.js";
import type { Hit, Plan, SearchParams, SearchResult } from "./types.js";

/** A search whose accounts are not all on the cache fast path, one page merged from its streams. */
export async function pagedSearch(
  ctx: ServiceContext,
  call: Call,
  p: SearchParams,
  plans: Plan[],
  partial: SearchResult["partial"],
  cursor: DecodedCursor,
  listed: ReadonlyMap<string, ListResponse[]>,
): Promise<SearchResult> {
  const onCache = plans.filter((x) => x.use === "cache");
  const onServer = plans.filter((x) => x.use === "server");
  if (cursor.kind === "offset") throw badCursor();
  const from = cursor.kind === "streams" ? cursor.streams : new Map<string, StreamPos>();
  const counts: SearchResult["account_counts"] = [];
  /** Each stream's rows of this page, newest first, from its position on. */
  const streams: Array<{ key: string; start: number; count: number; rows: Hit[]; failed: boolean }> = [];
  for (const plan of onCache) {
    const start = from.get(plan.name)?.taken ?? 0;
    const got = cacheHits(
      ctx,
      [plan],
      { ...p, count_only: p.count_only },
      p.count_only ? 0 : start + p.limit,
    );
    const n = got.counts.get(plan.name) ?? 0;
    counts.push({ account: plan.name, count: n, source: "cache" });
    streams.push({ key: plan.name, start, count: n, rows: got.hits.slice(start), failed: false });
    auditRead(ctx, call, plan.name, "allowed", `search (${p.query.length} chars): ${n} match(es) from cache`);
  }
  const serverCounts = new Map<string, number>();
  await Promise.all(
    onServer.map(async ({ name, bound }) => {
      const account = accountOf(ctx, name);
      try {
        // Each attempt collects its own partial entries and rows: a read may run twice after a reconnect.
        const got = await ctx.pool.read(account, (c) =>
          withFolderList(ctx, c, account, bound, listed, async (folders, remembered) => {
            const mine: SearchResult["partial"] = [];
            const pages: typeof streams = [];
            await serverMatches(
              c,
              account,
              bound,
              mine,
              p.count_only,
              async (s) => {
                const pos = from.get(s.key);
                const after = pos?.uid === undefined ? -1 : s.uids.indexOf(pos.uid);
                const start = after >= 0 ? after + 1 : (pos?.taken ?? 0);
                const page = { key: s.key, start, count: s.count, rows: [] as Hit[], failed: false };
                pages.push(page);
                if (p.count_only) return;
                try {
                  page.rows = await serverRows(c, account, s, s.uids.slice(start, start + p.limit));
                } catch (err) {
                  if (!c.usable) throw err;
                  page.failed = true;
                  mine.push({ account: name, folder: s.name, error: folderError(c, err, "FETCH", ctx.log) });
                }
              },
              folders,
              remembered,
              arrivalsFrom(ctx, name),
              ctx.log,
            );
            return { pages, mine };
          }),
        );
        partial.push(...got.mine);
        streams.push(...got.pages);
        const n = got.pages.reduce((sum, s) => sum + s.count, 0);
        serverCounts.set(name, n);
        auditRead(ctx, call, name, "allowed", `search (${p.query.length} chars): ${n} match(es) from server`);
      } catch (err) {
        partial.push({ account: name, error: partOfResult(err, ctx.log, `search of account ${name}`) });
        auditRead(ctx, call, name, "error", `search: ${toWireError(err).reason}`);
      }
    }),
  );
  for (const plan of onServer) {
    const n = serverCounts.get(plan.name);
    if (n !== undefined) counts.push({ account: plan.name, count: n, source: "server" });
  }
  if (plans.length > 0 && counts.length === 0) {
    const first = partial[0]!.error;
    throw new MailError(first.reason, first.message, first.hint, first.detail);
  }
  counts.sort(
    (a, b) => plans.findIndex((x) => x.name === a.account) - plans.findIndex((x) => x.name === b.account),
  );
  const count = counts.reduce((sum, c) => sum + c.count, 0);
  const { page, taken } = p.count_only
    ? { page: [], taken: new Map<string, number>() }
    : mergePage(streams, p.limit);
  const missing = page.filter((r) => r.snippet === undefined);
  if (p.snippets && missing.length) await addSnippets(ctx, missing);
  const next = new Map(from);
  for (const s of streams) {
    const n = taken.get(s.key) ?? 0;
    const last = n > 0 ? s.rows[n - 1] : undefined;
    const server = s.key.includes("\u0000");
    next.set(s.key, {
      taken: s.start + n,
      ...(server && last ? { uid: last.uid } : server ? { uid: from.get(s.key)?.uid } : {}),
    });
  }
  const more = streams.some((s) => !s.failed && (next.get(s.key)?.taken ?? 0) < s.count);
  const saved = Object.fromEntries(
    [...next].map(([k, v]): [string, number | [number, number]] => [
      k,
      v.uid === undefined ? v.taken : [v.taken, v.uid],
    ]),
  );
  return {
    rows: page.map(({ sortDate: _d, uid: _u, path: _p, ...row }) => row),
    count,
    next_cursor: !p.count_only && more ? encodeCursor(p, { s: saved }) : null,
    source: overallSource(counts),
    account_counts: counts,
    partial,
  };
}

/**
 * A k-way merge, newest first by arrival (`sortDate`; ties by stream key): each stream is already in
 * that order, so a page takes at most `limit` rows of any one stream, and `taken` says how many of
 * each, for the next page to resume each stream where this one stopped.
 */
export function mergePage<T extends { sortDate: number }>(
  streams: ReadonlyArray<{ key: string; rows: readonly T[] }>,
  limit: number,
): { page: T[]; taken: Map<string, number> } {
  const page: T[] = [];
  const taken = new Map<string, number>();
  const heads = streams.map(() => 0);
  while (page.length < limit) {
    let best = -1;
    for (let i = 0; i < streams.length; i++) {
      const r = streams[i]!.rows[heads[i]!];
      if (!r) continue;
      const b = best < 0 ? undefined : streams[best]!.rows[heads[best]!]!;
      if (
        !b ||
        r.sortDate > b.sortDate ||
        (r.sortDate === b.sortDate && streams[i]!.key < streams[best]!.key)
      )
        best = i;
    }
    if (best < 0) break;
    page.push(streams[best]!.rows[heads[best]!]!);
    heads[best]!++;
    taken.set(streams[best]!.key, heads[best]!);
  }
  return { page, taken };
}

export function overallSource(counts: SearchResult["account_counts"]): SearchResult["source"] {
  const kinds = new Set(counts.map((c) => c.source));
  return kinds.size > 1 ? "mixed" : kinds.has("cache") ? "cache" : "server";
}
