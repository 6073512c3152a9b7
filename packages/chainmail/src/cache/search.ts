import { createHash } from "node:crypto";
import {
  type AttachmentInfo,
  compileToSql,
  formatQuery,
  leaves,
  mentionsIn,
  type QueryNode,
} from "../query/index.js";
import { rememberedCount } from "./count-memo.js";
import { type CountedFolder, countFromFolders, ftsHitsIn } from "./folder-counts.js";
import { CACHE_ROW, type RowShape, readPageRows } from "./row-shape.js";
import { type CacheDb, stmt } from "./schema.js";
import {
  type CursorBody,
  FEW_HITS,
  FTS_ONLY,
  type Hit,
  type Plan,
  allMatches,
  countMatches,
  dateWalkPays,
  ftsCount,
  pageMatches,
  pageOrder,
  totals,
} from "./search-plan.js";

export class CursorError extends Error {
  readonly code = "INVALID_CURSOR";
  constructor(message: string) {
    super(message);
    this.name = "CursorError";
  }
}

export interface SearchCacheOptions {
  /** Rows per page, 1-200 (default 25). */
  limit?: number;
  cursor?: string | null;
  /** Only these accounts (empty or absent: all). */
  accounts?: string[];
  threads?: boolean;
  snippets?: boolean;
  countOnly?: boolean;
  now?: Date;
  /**
   * Accounts whose every message is in one All Mail folder (Google): without an `in:` term only that
   * folder is searched there, as on the server, so a message with several labels is one match, not
   * one per label folder.
   */
  allMailAccounts?: readonly string[];
}

export interface Address {
  name: string;
  address: string;
}

export interface CacheRow {
  account: string;
  folder: string;
  uid: number;
  uidvalidity: string;
  message_id: string | null;
  thread_key: string;
  /** RFC 3339: the Date header, or the arrival time when it has none. */
  date: string;
  /** RFC 3339 arrival time (INTERNALDATE), which orders results. */
  received: string;
  from: Address | null;
  to: Address[];
  cc: Address[];
  subject: string;
  flags: string[];
  keywords: string[];
  labels: string[];
  size: number;
  has_attachment: boolean;
  attachments: AttachmentInfo[];
  /** In-Reply-To, References and Gmail's thread id, from which callers derive their thread ids. */
  in_reply_to: string | null;
  references: string[];
  gm_thread_id: string | null;
  /** With `threads`: how many matching messages the thread has. */
  thread_count?: number;
  /** With `snippets`: up to 200 characters of body around the first matching word, or null. */
  snippet?: string | null;
}

export { makeSnippet } from "./row-shape.js";

export interface SearchCacheResult<R = CacheRow> {
  rows: R[];
  count: number;
  next_cursor: string | null;
  account_counts: Record<string, number>;
}

const hashQuery = (ast: QueryNode, o: SearchCacheOptions) =>
  createHash("sha256")
    .update(
      JSON.stringify([
        formatQuery(ast),
        !!o.threads,
        [...(o.accounts ?? [])].map((a) => a.toLowerCase()).sort(),
      ]),
    )
    .digest("base64url")
    .slice(0, 16);

function decodeCursor(cursor: string, hash: string): CursorBody {
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as CursorBody;
  } catch {
    throw new CursorError("The cursor is not one search returned");
  }
  // Version 1 cursors carry row ids from before ids followed arrival time (./arrival-id.ts): after
  // the cache's upgrade they would point at the wrong place and end or skip pages
  if ((body as { v?: unknown } | null)?.v === 1)
    throw new CursorError(
      "The cursor is from before the cache was upgraded; search again without it for a fresh one",
    );
  if (
    body?.v !== 2 ||
    typeof body.d !== "number" ||
    typeof body.i !== "number" ||
    typeof body.h !== "string"
  ) {
    throw new CursorError("The cursor is not one search returned");
  }
  if (body.h !== hash)
    throw new CursorError(
      "The cursor belongs to a different search; pass the same query, accounts and threads",
    );
  return body;
}

const encodeCursor = (b: CursorBody) => Buffer.from(JSON.stringify(b)).toString("base64url");

/**
 * Answers a query from the cache, newest first (by arrival), with keyset pagination. The cursor
 * carries a hash of the normalized query, threads and accounts: a cursor from another search is
 * refused with CursorError.
 */
export function searchCache(
  db: CacheDb,
  ast: QueryNode,
  options: SearchCacheOptions = {},
): SearchCacheResult {
  return searchCacheShaped(db, ast, options, CACHE_ROW);
}

/** searchCache with the page's rows in `shape` (./row-shape.ts): only the columns it reads. */
export function searchCacheShaped<R>(
  db: CacheDb,
  ast: QueryNode,
  options: SearchCacheOptions,
  shape: RowShape<R>,
): SearchCacheResult<R> {
  const limit = Math.min(200, Math.max(1, Math.floor(options.limit ?? 25)));
  const hash = hashQuery(ast, options);
  const cur = options.cursor ? decodeCursor(options.cursor, hash) : null;
  // One read of the folder rows and their counters: the accounts present, the Trash/Junk folders
  // that hold mail (usually none or few, so the scope clause is cheap) and whether any label exists
  const folderRows = stmt(
    db,
    "SELECT id, account, path, role, cached_count, labelled, unread_count, flagged_count, attachment_count FROM folders",
  ).all() as (CountedFolder & { labelled: number })[];
  const excludedFolderIds = folderRows
    .filter((f) => (f.role === "trash" || f.role === "junk") && f.cached_count > 0)
    .map((f) => f.id);
  const labels = folderRows.some((f) => f.labelled > 0);
  const now = options.now ?? new Date();
  const sql = compileToSql(ast, now, { excludedFolderIds, labels });
  let where = sql.where;
  const params: (string | number)[] = [...sql.params];
  let fts =
    sql.ftsRest && sql.ftsBound !== null
      ? { expr: sql.ftsBound, table: sql.ftsTable, ...sql.ftsRest }
      : undefined;
  let addr = sql.addr && !options.threads ? sql.addr : undefined;
  // A condition on the scope, AND-ed to the where and to its FTS- and address-driven forms alike
  const restrict = (clause: string, values: readonly (string | number)[]) => {
    where = `(${where}) AND ${clause}`;
    params.push(...values);
    if (fts) fts = { ...fts, where: `(${fts.where}) AND ${clause}`, params: [...fts.params, ...values] };
    if (addr)
      addr = {
        ...addr,
        where: `(${addr.where}) AND ${clause}`,
        params: [...addr.params, ...values],
        join: true,
      };
  };
  const present = [...new Set(folderRows.map((f) => f.account))].sort();
  // An accounts filter that names every account present filters nothing: leave it out. Otherwise
  // the unary + keeps SQLite from driving the query by the account's thread index, which then
  // sorts the whole account; every index that serves a filter or the date order carries the
  // account, so the test stays inside the index.
  if (options.accounts?.length && !present.every((a) => options.accounts?.includes(a)))
    restrict(`+m.account IN (${options.accounts.map(() => "?").join(", ")})`, options.accounts);
  const allMail = options.allMailAccounts ?? [];
  const allMailScope = allMail.length > 0 && !mentionsIn(ast);
  if (allMailScope)
    restrict(
      `(m.account NOT IN (${allMail.map(() => "?").join(", ")}) OR m.folder_id IN (SELECT id FROM folders WHERE role = 'all'))`,
      allMail,
    );

  // Counting and paging read only the narrow messages table; display fields come from
  // message_meta for the page's rows alone
  const inScope = options.accounts?.length ? present.filter((a) => options.accounts?.includes(a)) : present;
  const single = inScope.length === 1 ? (inScope[0] as string) : null;
  // (the All Mail scope is a condition the FTS match alone does not carry)
  const ftsOnly = FTS_ONLY.test(sql.where) && !allMailScope;
  const q: Plan = { where, params, single, threads: !!options.threads, fts, addr, dateFloor: sql.dateFloor };
  // A text term AND-ed with after:/newer_than: over a short stretch of time: every match is in
  // the date index's range, which is cheaper to walk than the text's hits are to look up
  let boundHits: number | undefined;
  const hitsOf = (expr: string) => {
    boundHits ??= ftsCount(db, expr, sql.ftsTable);
    return boundHits;
  };
  // (other text queries with a date floor read FTS5 from the floor's id up: see countMatches)
  const ftsFloor = !!fts && sql.dateFloor !== null && !options.threads;
  if (sql.dateFloor !== null && sql.ftsBound !== null && !ftsOnly && !ftsFloor)
    q.dateIndex = dateWalkPays(db, sql.dateFloor, hitsOf(sql.ftsBound));
  // The count without reading the matches where the query's shape allows (./folder-counts.ts):
  // from the folder counters, or, for one FTS match over the only account, from FTS5 (less the
  // Trash/Junk rows it matches when those folders hold mail)
  const onlyAccount = single !== null && present.length === 1 && !options.threads && !allMailScope;
  let counts = options.threads || allMailScope ? null : countFromFolders(folderRows, ast, inScope, labels);
  // Text alone (the Trash/Junk scope and the accounts aside): the matches are about the FTS hits,
  // and the page is the newest of them (FTS5 in rowid order, see pageOrder)
  const scoped = excludedFolderIds.length > 0 && !mentionsIn(ast);
  const core =
    scoped && sql.ftsBound !== null ? compileToSql(ast, now, { excludedFolderIds: [], labels }) : sql;
  const textOnly = sql.ftsBound !== null && FTS_ONLY.test(core.where);
  if (!counts && onlyAccount && ftsOnly)
    counts = { [single]: ftsCount(db, sql.params[0] as string, sql.ftsTable) };
  else if (!counts && onlyAccount && scoped && textOnly) {
    const expr = core.params[0] as string;
    const hits = ftsCount(db, expr, core.ftsTable);
    const excluded = folderRows.filter((f) => excludedFolderIds.includes(f.id));
    const inExcluded = () => ftsHitsIn(db, expr, core.ftsTable, hits, excluded);
    const key = `fts-in ${core.ftsTable} ${excluded.map((f) => f.id).join(",")} ${expr}`;
    counts = { [single]: hits === 0 ? 0 : hits - rememberedCount(db, key, inExcluded) };
  }
  // Text terms AND-ed with filters, with few FTS hits: one statement that evaluates the query once
  // for both count and page beats a count and a page query that each repeat the FTS match
  const bound =
    !counts && !textOnly && !ftsFloor && !options.threads && sql.ftsBound !== null && !options.countOnly
      ? hitsOf(sql.ftsBound)
      : null;
  let found: { account_counts: Record<string, number>; count: number; hits: Hit[] | null };
  if (bound !== null && bound <= FEW_HITS) found = allMatches(db, q, cur, limit);
  else found = { ...totals(counts ?? countMatches(db, q)), hits: null };
  const { account_counts, count } = found;
  if (options.countOnly || count === 0) return { rows: [], count, next_cursor: null, account_counts };
  const hits =
    found.hits ?? pageMatches(db, q, cur, limit, pageOrder(db, q, count, limit, textOnly, boundHits));
  const more = hits.length > limit;
  const slice = hits.slice(0, limit);
  const words = leaves(ast).flatMap((l) => (l.kind === "text" ? [l.value] : []));
  // One statement for the page's rows, their body text when snippets are asked for, and only the
  // columns the shape shows (./row-shape.ts): a statement per row (and per snippet) and the unused
  // wide columns took half a page's time
  const rows = readPageRows(db, slice, shape, {
    threads: !!options.threads,
    snippets: options.snippets ? { words } : null,
  });
  const last = slice[slice.length - 1];
  const next_cursor =
    more && last ? encodeCursor({ v: 2, h: hash, d: last.internal_date, i: last.id }) : null;
  return { rows, count, next_cursor, account_counts };
}
