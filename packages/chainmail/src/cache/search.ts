import { createHash } from "node:crypto";
import { type AttachmentInfo, type QueryNode, compileToSql, formatQuery, leaves } from "../query/index.js";
import { type CacheDb, stmt } from "./schema.js";

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
  /** With `threads`: how many matching messages the thread has. */
  thread_count?: number;
  /** With `snippets`: up to 200 characters of body around the first matching word, or null. */
  snippet?: string | null;
}

export interface SearchCacheResult {
  rows: CacheRow[];
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

interface CursorBody {
  v: 1;
  h: string;
  d: number;
  i: number;
}

function decodeCursor(cursor: string, hash: string): CursorBody {
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as CursorBody;
  } catch {
    throw new CursorError("The cursor is not one search returned");
  }
  if (
    body?.v !== 1 ||
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

const FLAG_COLS = ["seen", "flagged", "answered", "draft", "deleted"] as const;

/** A window of the body around the first query word found in it, at most 200 characters. */
export function makeSnippet(body: string, words: string[]): string {
  const text = body.replace(/\s+/g, " ").trim();
  if (text.length <= 200) return text;
  const lower = text.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  let start = at < 0 ? 0 : Math.max(0, at - 60);
  // Do not cut a surrogate pair in half
  if (start > 0 && /[\uDC00-\uDFFF]/.test(text[start] ?? "")) start++;
  let out = text.slice(start, start + 200);
  if (/[\uD800-\uDBFF]$/.test(out)) out = out.slice(0, -1);
  return out;
}

/**
 * Many matches: walking the date index and testing each row finds a page after about
 * limit * total / count rows; few matches: looking each match up and sorting is cheaper.
 */
function newestFirst(db: CacheDb, count: number, limit: number): boolean {
  const total = (stmt(db, "SELECT count(*) AS n FROM messages").get() as { n: number }).n;
  return count > 0 && count * count > (limit + 1) * total * 4;
}

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
  const limit = Math.min(200, Math.max(1, Math.floor(options.limit ?? 25)));
  const hash = hashQuery(ast, options);
  const cur = options.cursor ? decodeCursor(options.cursor, hash) : null;
  // Trash/Junk folders that actually hold mail: usually none or few, so the scope clause is cheap
  const excludedFolderIds = (
    stmt(
      db,
      "SELECT f.id FROM folders f WHERE f.role IN ('trash', 'junk') AND EXISTS (SELECT 1 FROM messages m WHERE m.folder_id = f.id)",
    ).all() as { id: number }[]
  ).map((r) => r.id);
  const sql = compileToSql(ast, options.now ?? new Date(), { excludedFolderIds });
  let where = sql.where;
  const params: (string | number)[] = [...sql.params];
  if (options.accounts?.length) {
    where = `(${where}) AND m.account IN (${options.accounts.map(() => "?").join(", ")})`;
    params.push(...options.accounts);
  }

  // Counting and paging read only the narrow messages table; display fields come from
  // message_meta for the page's rows alone
  // One account in scope (the usual case) needs no GROUP BY; a query that is one FTS match
  // over one account is counted by FTS5 alone, without visiting a message row
  const present = (stmt(db, "SELECT DISTINCT account FROM folders").all() as { account: string }[]).map(
    (r) => r.account,
  );
  const inScope = options.accounts?.length ? present.filter((a) => options.accounts?.includes(a)) : present;
  const single = inScope.length === 1 ? (inScope[0] as string) : null;
  const onlyFts =
    single !== null &&
    present.length === 1 &&
    !options.threads &&
    /^m\.id IN \(SELECT rowid FROM messages_fts WHERE messages_fts MATCH \?\)$/.test(sql.where);
  let countRows: { account: string; n: number }[];
  if (onlyFts) {
    countRows = [
      {
        account: single,
        n: (
          stmt(db, "SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?").get(
            ...sql.params,
          ) as { n: number }
        ).n,
      },
    ];
  } else if (single !== null) {
    const what = options.threads ? "count(DISTINCT m.thread_key)" : "count(*)";
    countRows = [
      {
        account: single,
        n: (stmt(db, `SELECT ${what} AS n FROM messages m WHERE ${where}`).get(...params) as { n: number }).n,
      },
    ];
  } else {
    const what = options.threads ? "count(DISTINCT m.thread_key)" : "count(*)";
    countRows = stmt(
      db,
      `SELECT m.account, ${what} AS n FROM messages m WHERE ${where} GROUP BY m.account`,
    ).all(...params) as { account: string; n: number }[];
  }
  countRows = countRows.filter((r) => r.n > 0);
  const account_counts: Record<string, number> = {};
  let count = 0;
  for (const r of countRows) {
    account_counts[r.account] = r.n;
    count += r.n;
  }
  if (options.countOnly || count === 0) return { rows: [], count, next_cursor: null, account_counts };

  const pageParams = [...params];
  let page = options.threads
    ? `SELECT * FROM (SELECT m.id, m.internal_date, row_number() OVER (PARTITION BY m.account, m.thread_key ORDER BY m.internal_date DESC, m.id DESC) AS rn,
         count(*) OVER (PARTITION BY m.account, m.thread_key) AS thread_count FROM messages m WHERE ${where}) p WHERE rn = 1`
    : `SELECT m.id, m.internal_date FROM messages m ${newestFirst(db, count, limit) ? "INDEXED BY messages_newest " : ""}WHERE ${where}`;
  const alias = options.threads ? "p" : "m";
  if (cur) {
    page += ` AND (${alias}.internal_date < ? OR (${alias}.internal_date = ? AND ${alias}.id < ?))`;
    pageParams.push(cur.d, cur.d, cur.i);
  }
  page += ` ORDER BY ${alias}.internal_date DESC, ${alias}.id DESC LIMIT ?`;
  pageParams.push(limit + 1);
  const hits = stmt(db, page).all(...pageParams) as {
    id: number;
    internal_date: number;
    thread_count?: number;
  }[];
  const more = hits.length > limit;
  const slice = hits.slice(0, limit);
  const words = leaves(ast).flatMap((l) => (l.kind === "text" ? [l.value] : []));
  const bodyStmt = stmt(db, "SELECT text FROM bodies WHERE message_rowid = ?");
  const detail = stmt(
    db,
    `SELECT m.*, x.*, f.path AS folder_path, f.uidvalidity AS folder_uidvalidity FROM messages m JOIN message_meta x ON x.id = m.id
     JOIN folders f ON f.id = m.folder_id WHERE m.id = ?`,
  );

  const rows = slice.map((hit): CacheRow => {
    const r = detail.get(hit.id) as Record<string, unknown>;
    const from = JSON.parse(r.from_json as string) as Address[];
    const row: CacheRow = {
      account: r.account as string,
      folder: r.folder_path as string,
      uid: r.uid as number,
      uidvalidity: r.folder_uidvalidity as string,
      message_id: (r.message_id as string | null) ?? null,
      thread_key: r.thread_key as string,
      date: new Date((r.date as number | null) ?? (r.internal_date as number)).toISOString(),
      received: new Date(r.internal_date as number).toISOString(),
      from: from[0] ?? null,
      to: JSON.parse(r.to_json as string) as Address[],
      cc: JSON.parse(r.cc_json as string) as Address[],
      subject: r.subject as string,
      flags: FLAG_COLS.filter((c) => r[c] === 1),
      keywords: JSON.parse(r.keywords_json as string) as string[],
      labels: JSON.parse(r.labels_json as string) as string[],
      size: r.size as number,
      has_attachment: r.has_attachment === 1,
      attachments: JSON.parse(r.attachments_json as string) as AttachmentInfo[],
    };
    if (options.threads) row.thread_count = hit.thread_count as number;
    if (options.snippets) {
      const b = bodyStmt.get(hit.id) as { text: string } | undefined;
      row.snippet = b ? makeSnippet(b.text, words) : null;
    }
    return row;
  });
  const last = slice[slice.length - 1];
  const next_cursor =
    more && last ? encodeCursor({ v: 1, h: hash, d: last.internal_date, i: last.id }) : null;
  return { rows, count, next_cursor, account_counts };
}
