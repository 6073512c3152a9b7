// How searchCache counts and pages: the SQL for each plan and the rules that choose between them.
import { idFloorOf, internalDateOfSql } from "./arrival-id.js";
import { rememberedCount } from "./count-memo.js";
import { vocabCount } from "./fts-vocab.js";
import type { AddrDriver, FtsTable } from "../query/index.js";
import { type CacheDb, stmt } from "./schema.js";

export interface CursorBody {
  v: 2;
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

export const FTS_ONLY = /^m\.id IN \(SELECT rowid FROM (messages_fts|subjects_fts) WHERE \1 MATCH \?\)$/;

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
  /**
   * Read the matches off the date index's range (`dateWalkPays`) instead of looking each FTS hit
   * up by rowid, SQLite's own choice for a text term AND-ed with after:/newer_than:.
   */
  dateIndex?: boolean;
  /** The where as `expr` matched by FTS5 AND `where` (compileToSql's ftsRest), when it has that form. */
  fts?: { expr: string; table: FtsTable; where: string; params: (string | number)[] };
  /** The arrival time (ms) every match is at or after (compileToSql's dateFloor), or null. */
  dateFloor?: number | null;
  /** A whole address AND the rest (compileToSql's addr): count and page read the address index. */
  addr?: AddrDriver;
}

/** `messages m`, pointed at the date index when the plan says so. */
const messagesFor = (q: Plan) => `messages m${q.dateIndex ? " INDEXED BY messages_newest" : ""}`;

/**
 * Steps of the date index worth one look-up of an FTS hit by rowid. Measured at 100,000 messages
 * (test/support/populate.ts), a 30-day range of 2,739 rows walked with the 2,319 hits of
 * `project` as a membership test in 0.34 ms, where looking the hits up took 0.92. Whole searches:
 * `newer_than:30d project` 1.52 -> 0.92 ms, `newer_than:7d project` 1.34 -> 0.56; where the range
 * is too long to pay, counting it up to the cap costs `newer_than:1y` / `5y project` 0.1 ms (0.2
 * with count_only). At 4 the probe cost twice that.
 */
export const DATE_STEPS_PER_LOOKUP = 2;

/**
 * Whether walking the date index from `floor` costs less than looking up `hits` FTS hits. It
 * counts the range only up to where the walk would stop paying, so asking costs at most what the
 * walk would.
 */
export function dateWalkPays(db: CacheDb, floor: number, hits: number): boolean {
  const cap = DATE_STEPS_PER_LOOKUP * hits;
  const n = (
    stmt(
      db,
      "SELECT count(*) AS n FROM (SELECT 1 FROM messages INDEXED BY messages_newest WHERE internal_date >= ? LIMIT ?)",
    ).get(floor, cap) as { n: number }
  ).n;
  return n < cap;
}

export interface Hit {
  id: number;
  internal_date: number;
  thread_count?: number;
}

/**
 * How many rows the FTS5 expression matches: one word from FTS5's term statistics (./fts-vocab.ts);
 * remembered until the cache changes (./count-memo.ts).
 */
export const ftsCount = (db: CacheDb, expr: string, table: FtsTable) =>
  rememberedCount(
    db,
    `fts ${table} ${expr}`,
    () =>
      vocabCount(db, expr, table) ??
      (stmt(db, `SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(expr) as { n: number }).n,
  );

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
 * Matches (or threads) per account (`walkCount`), remembered until the cache changes
 * (./count-memo.ts): the key is everything the count's SQL is made of.
 */
export function countMatches(db: CacheDb, q: Plan): Record<string, number> {
  const key = JSON.stringify([
    "plan",
    q.where,
    q.params,
    q.single,
    q.threads,
    q.dateIndex ?? false,
    q.fts ?? null,
    q.dateFloor ?? null,
    q.addr ?? null,
  ]);
  // (a copy: the remembered object is shared by every search that asks)
  return { ...rememberedCount(db, key, () => walkCount(db, q)) };
}

/**
 * Matches (or threads) per account; one account in scope needs no GROUP BY. `+m.account` keeps
 * SQLite from grouping by walking the account's thread index (every row, in account order)
 * instead of counting the filter's own index and grouping the few accounts in a temp table.
 */
function walkCount(db: CacheDb, q: Plan): Record<string, number> {
  // A whole address alone (the Trash/Junk scope aside) over one account, or with has:attachment:
  // its per-folder counts
  if (q.addr && !q.addr.join && !q.addr.bounded && !q.threads && !fromFloor(q) && q.single !== null)
    return {
      [q.single]: (
        stmt(
          db,
          `SELECT coalesce(sum(a.${q.addr.attached ? "attached" : "n"}), 0) AS n FROM address_counts a WHERE a.address = ? AND a.field = ? AND (${q.addr.where})`,
        ).get(q.addr.address, q.addr.field, ...q.addr.params) as { n: number }
      ).n,
    };
  const what = q.threads ? "count(DISTINCT m.thread_key)" : "count(*)";
  // Text after a date floor: only the hits from the floor's id up are read (ids follow arrival)
  const src =
    q.addr && !q.threads
      ? // (per account: the message row says which)
        addrSource(q, q.single === null ? { ...q.addr, join: true } : q.addr)
      : q.fts && fromFloor(q) && !q.threads
        ? ftsSource(q, q.fts)
        : { sql: `${messagesFor(q)} WHERE ${q.where}`, params: q.params };
  if (q.single !== null)
    return {
      [q.single]: (stmt(db, `SELECT ${what} AS n FROM ${src.sql}`).get(...src.params) as { n: number }).n,
    };
  const rows = stmt(db, `SELECT m.account, ${what} AS n FROM ${src.sql} GROUP BY +m.account`).all(
    ...src.params,
  ) as { account: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.account, r.n]));
}

const fromFloor = (q: Plan) => q.dateFloor !== null && q.dateFloor !== undefined;

/**
 * The matches read from FTS5, each hit's row looked up by id and tested against the rest of the
 * query; from the date floor's id up when the query has one. `before` bounds the ids from above.
 */
function ftsSource(q: Plan, fts: NonNullable<Plan["fts"]>, before?: number) {
  const params: (string | number)[] = [fts.expr];
  let sql = `${fts.table} f CROSS JOIN messages m ON m.id = f.rowid WHERE f.${fts.table} MATCH ?`;
  if (fromFloor(q)) {
    sql += " AND f.rowid >= ?";
    params.push(idFloorOf(q.dateFloor as number));
  }
  if (before !== undefined) {
    sql += " AND f.rowid < ?";
    params.push(before);
  }
  sql += ` AND (${fts.where})`;
  params.push(...fts.params);
  return { sql, params };
}

/**
 * `has:attachment` for the address index's row `a`: the row's entry in the attachment index
 * (partial, has_attachment = 1), found by its key (internal_date, id) with the date read off the
 * id. At 1,000,000 messages `has:attachment from:` a sender of 21,239 messages (3,528 with
 * attachments) counted in 18-22 ms reading each message row for its flag (most not in SQLite's
 * page cache), in 8-8.7 ms probing the far smaller index (p50 in process, load 5-6).
 */
const ATTACHED = `EXISTS (SELECT 1 FROM messages x INDEXED BY messages_attach
  WHERE x.internal_date = ${internalDateOfSql("a.id")} AND x.id = a.id AND x.has_attachment = 1)`;

/**
 * The matches read from the address index's range for the address, newest first by id (ids follow
 * arrival), the rest tested on the index row (the folder, `has:attachment` by ATTACHED) or, with
 * `join`, on the message row; from the date floor's id up when the query has one. `before` bounds
 * the ids from above.
 */
function addrSource(q: Plan, addr: AddrDriver, before?: number) {
  const params: (string | number)[] = [addr.address, addr.field];
  let sql = `message_addresses a${addr.join ? " CROSS JOIN messages m ON m.id = a.id" : ""} WHERE a.address = ? AND a.field = ?`;
  if (fromFloor(q)) {
    sql += " AND a.id >= ?";
    params.push(idFloorOf(q.dateFloor as number));
  }
  if (before !== undefined) {
    sql += " AND a.id < ?";
    params.push(before);
  }
  if (addr.attached) sql += ` AND ${ATTACHED}`;
  sql += ` AND (${addr.where})`;
  params.push(...addr.params);
  return { sql, params };
}

/** A page read from the address index newest first, the rest tested per row. */
function addrPage(db: CacheDb, q: Plan, addr: AddrDriver, cur: CursorBody | null, limit: number): Hit[] {
  const src = addrSource(q, { ...addr, join: true }, cur?.i);
  return stmt(db, `SELECT a.id, m.internal_date FROM ${src.sql} ORDER BY a.id DESC LIMIT ?`).all(
    ...src.params,
    limit + 1,
  ) as Hit[];
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
    `WITH hits AS MATERIALIZED (SELECT m.id, m.internal_date, m.account FROM ${messagesFor(q)} WHERE ${q.where})
     SELECT NULL AS id, NULL AS internal_date, account, count(*) AS n FROM hits GROUP BY account
     UNION ALL SELECT * FROM (${page} ORDER BY internal_date DESC, id DESC LIMIT ?)`,
  ).all(...params) as (Hit & { account: string | null; n: number | null })[];
  const counts: Record<string, number> = {};
  for (const r of rows) if (r.id === null) counts[r.account as string] = r.n as number;
  const hits = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id, internal_date: r.internal_date }));
  return { ...totals(counts), hits };
}

/**
 * How a page is read: `fts`, from FTS5 in rowid order, which is arrival order (./arrival-id.ts),
 * testing the rest of the query per hit and stopping after the page; `walk`, down a date index
 * testing each row; `sort`, every match looked up and sorted.
 */
export type PageOrder = "fts" | "walk" | "sort";

/**
 * The FTS-driven page reads about (limit + 1) * hits / count hits, each one row look-up, where
 * sorting looks up every match after evaluating the whole text match: it pays once
 * (limit + 1) * hits <= count^2. A text-only query (count about hits) always pays, and so does one
 * with a date floor, where the hits read are at most those after the floor.
 */
export function pageOrder(
  db: CacheDb,
  q: Plan,
  count: number,
  limit: number,
  textOnly: boolean,
  hits: number | undefined,
): PageOrder {
  if (q.fts && !q.threads) {
    if (textOnly || fromFloor(q)) return "fts";
    if (hits !== undefined && (limit + 1) * hits <= count * count) return "fts";
  }
  // (threads: walking with FTS membership as the test, about 8 steps per look-up)
  return newestFirst(db, count, limit, textOnly ? 8 : 1) ? "walk" : "sort";
}

/** A page read from FTS5 newest first (rowid DESC), the rest of the query tested per hit. */
function ftsPage(
  db: CacheDb,
  q: Plan,
  fts: NonNullable<Plan["fts"]>,
  cur: CursorBody | null,
  limit: number,
): Hit[] {
  // (with ids in arrival order, "before the cursor's row" is an id bound)
  const src = ftsSource(q, fts, cur?.i);
  return stmt(db, `SELECT m.id, m.internal_date FROM ${src.sql} ORDER BY f.rowid DESC LIMIT ?`).all(
    ...src.params,
    limit + 1,
  ) as Hit[];
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
  order: PageOrder,
): Hit[] {
  if (q.addr && !q.threads) return addrPage(db, q, q.addr, cur, limit);
  if (order === "fts" && q.fts) return ftsPage(db, q, q.fts, cur, limit);
  const walk = order === "walk";
  const params = [...q.params];
  // (the date index's range is already newest first)
  const byDate = walk || !!q.dateIndex;
  let page = q.threads
    ? `SELECT * FROM (SELECT m.id, m.internal_date, row_number() OVER (PARTITION BY m.account, m.thread_key ORDER BY m.internal_date DESC, m.id DESC) AS rn,
         count(*) OVER (PARTITION BY m.account, m.thread_key) AS thread_count FROM ${messagesFor(q)} WHERE ${q.where}) p WHERE rn = 1`
    : // (the where in parentheses: an OR at its top must not take the cursor's AND as its operand)
      `SELECT m.id, m.internal_date FROM messages m ${byDate && q.where.includes("_fts MATCH") ? "INDEXED BY messages_newest " : ""}WHERE (${q.where})`;
  const alias = q.threads ? "p" : "m";
  if (cur) {
    page += ` AND (${alias}.internal_date < ? OR (${alias}.internal_date = ? AND ${alias}.id < ?))`;
    params.push(cur.d, cur.d, cur.i);
  }
  page += ` ORDER BY ${q.threads || byDate ? "" : "+"}${alias}.internal_date DESC, ${alias}.id DESC LIMIT ?`;
  params.push(limit + 1);
  return stmt(db, page).all(...params) as Hit[];
}
