// How searchCache counts and pages: the SQL for each plan and the rules that choose between them.
import { type CacheDb, stmt } from "./schema.js";

export interface CursorBody {
  v: 1;
  h: string;
  d: number;
  i: number;
}

/**
 * Many matches: walking the date index and testing each row finds a page after about
 * limit * total / count rows; few matches: looking each match up and sorting costs about count
 * row look-ups. `stepsPerLookup` is how many walk steps cost one look-up: measured at 100,000
 * messages, about 8 when the test is membership in the FTS match list (the crossover is then near
 * 600 matches), about 1 when each step must read the row.
 */
export function newestFirst(db: CacheDb, count: number, limit: number, stepsPerLookup: number): boolean {
  // The folder counters, not count(*): that walks an index of every message on each search
  const total = (stmt(db, "SELECT coalesce(sum(cached_count), 0) AS n FROM folders").get() as { n: number })
    .n;
  return count > 0 && count * count * stepsPerLookup > (limit + 1) * total;
}

export const FTS_ONLY = /^m\.id IN \(SELECT rowid FROM messages_fts WHERE messages_fts MATCH \?\)$/;

/**
 * Up to this many FTS hits, `allMatches` answers count and page in one pass. Above it, when most
 * hits match, holding them all costs more than a count plus a walk of the date index.
 */
export const FEW_HITS = 5000;

export interface Plan {
  where: string;
  params: (string | number)[];
  /** The only account in scope, or null when there are several. */
  single: string | null;
  threads: boolean;
}

export interface Hit {
  id: number;
  internal_date: number;
  thread_count?: number;
}

export const ftsCount = (db: CacheDb, expr: string) =>
  (stmt(db, "SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?").get(expr) as { n: number })
    .n;

export function totals(counts: Record<string, number>) {
  const account_counts: Record<string, number> = {};
  let count = 0;
  for (const [account, n] of Object.entries(counts)) {
    if (n <= 0) continue;
    account_counts[account] = n;
    count += n;
  }
  return { account_counts, count };
}

/**
 * Matches (or threads) per account; one account in scope needs no GROUP BY. `+m.account` keeps
 * SQLite from grouping by walking the account's thread index (every row, in account order)
 * instead of counting the filter's own index and grouping the few accounts in a temp table.
 */
export function countMatches(db: CacheDb, q: Plan): Record<string, number> {
  const what = q.threads ? "count(DISTINCT m.thread_key)" : "count(*)";
  if (q.single !== null)
    return {
      [q.single]: (
        stmt(db, `SELECT ${what} AS n FROM messages m WHERE ${q.where}`).get(...q.params) as {
          n: number;
        }
      ).n,
    };
  const rows = stmt(
    db,
    `SELECT m.account, ${what} AS n FROM messages m WHERE ${q.where} GROUP BY +m.account`,
  ).all(...q.params) as { account: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.account, r.n]));
}

/**
 * Count and page in one statement (few matches expected): the query runs once into a
 * materialized table that both the per-account counts and the page read. Count rows come first
 * and have a null id.
 */
export function allMatches(db: CacheDb, q: Plan, cur: CursorBody | null, limit: number) {
  const params = [...q.params];
  let page = "SELECT id, internal_date, NULL, NULL FROM hits";
  if (cur) {
    page += " WHERE internal_date < ? OR (internal_date = ? AND id < ?)";
    params.push(cur.d, cur.d, cur.i);
  }
  params.push(limit + 1);
  const rows = stmt(
    db,
    `WITH hits AS MATERIALIZED (SELECT m.id, m.internal_date, m.account FROM messages m WHERE ${q.where})
     SELECT NULL AS id, NULL AS internal_date, account, count(*) AS n FROM hits GROUP BY account
     UNION ALL SELECT * FROM (${page} ORDER BY internal_date DESC, id DESC LIMIT ?)`,
  ).all(...params) as (Hit & { account: string | null; n: number | null })[];
  const counts: Record<string, number> = {};
  for (const r of rows) if (r.id === null) counts[r.account as string] = r.n as number;
  const hits = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id, internal_date: r.internal_date }));
  return { ...totals(counts), hits };
}

/**
 * One page (limit + 1 rows, to tell whether more follow) after the cursor. The plan is chosen
 * here, not left to SQLite, which has no statistics. To walk newest first, a query with an FTS
 * match is pointed at the date index (SQLite would look up and sort every FTS hit); other queries
 * get a date-ordered index of SQLite's choice (the partial ones for flags). Not to walk, `+` keeps
 * the ORDER BY from being served by an index, so SQLite picks the index that finds the matches
 * and sorts them (larger:2K otherwise walked 4,600 rows for 26).
 */
export function pageMatches(
  db: CacheDb,
  q: Plan,
  cur: CursorBody | null,
  limit: number,
  walk: boolean,
): Hit[] {
  const params = [...q.params];
  let page = q.threads
    ? `SELECT * FROM (SELECT m.id, m.internal_date, row_number() OVER (PARTITION BY m.account, m.thread_key ORDER BY m.internal_date DESC, m.id DESC) AS rn,
         count(*) OVER (PARTITION BY m.account, m.thread_key) AS thread_count FROM messages m WHERE ${q.where}) p WHERE rn = 1`
    : `SELECT m.id, m.internal_date FROM messages m ${walk && q.where.includes("messages_fts") ? "INDEXED BY messages_newest " : ""}WHERE ${q.where}`;
  const alias = q.threads ? "p" : "m";
  if (cur) {
    page += ` AND (${alias}.internal_date < ? OR (${alias}.internal_date = ? AND ${alias}.id < ?))`;
    params.push(cur.d, cur.d, cur.i);
  }
  page += ` ORDER BY ${q.threads || walk ? "" : "+"}${alias}.internal_date DESC, ${alias}.id DESC LIMIT ?`;
  params.push(limit + 1);
  return stmt(db, page).all(...params) as Hit[];
}
