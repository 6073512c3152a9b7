/**
 * Exact match counts without reading the matches, for the query shapes the folder counters (cache
 * migration 4 and addFlagCounters, kept by triggers in the same transaction as every row change) or
 * FTS5 alone can answer. Anything else returns null and is counted by SQL.
 */
import { type FolderRole, type FtsTable, type QueryNode, bindQuery, folderInScope } from "../query/index.js";
import { type CacheDb, stmt } from "./schema.js";

export interface CountedFolder {
  id: number;
  account: string;
  path: string;
  role: FolderRole | null;
  cached_count: number;
  unread_count: number;
  flagged_count: number;
  attachment_count: number;
}

/** How many of the folder's messages match what is left of the query once its folder is bound. */
function folderCount(f: CountedFolder, rest: QueryNode): number | null {
  switch (rest.kind) {
    case "none":
      return 0;
    case "all":
      return f.cached_count;
    case "has_attachment":
      return f.attachment_count;
    case "is":
      if (rest.flag === "unread") return f.unread_count;
      if (rest.flag === "read") return f.cached_count - f.unread_count;
      if (rest.flag === "flagged") return f.flagged_count;
      return null;
    default:
      return null;
  }
}

/**
 * Per-account counts from the folder rows, when every folder's part of the query is nothing,
 * everything, or one of is:unread, is:read, is:flagged, has:attachment (so `in:`, `account:` and
 * the Trash/Junk rule are decided per folder, as the SQL decides them). `labels`: some message has
 * labels, so `in:` may match a label and cannot be decided per folder.
 */
export function countFromFolders(
  folders: CountedFolder[],
  ast: QueryNode,
  accounts: readonly string[],
  labels: boolean,
): Record<string, number> | null {
  const counts: Record<string, number> = {};
  for (const f of folders) {
    if (!accounts.includes(f.account)) continue;
    const n = folderInScope(ast, f)
      ? folderCount(f, bindQuery(ast, { account: f.account, folder: f, labels }))
      : 0;
    if (n === null) return null;
    counts[f.account] = (counts[f.account] ?? 0) + n;
  }
  return counts;
}

/**
 * How many rows of these folders (the ones the Trash/Junk rule leaves out) an FTS match has, of
 * `hits` in all: a query that is one FTS match over the only account counts as FTS5's count less
 * these. The cheaper side is read: the folders' rows tested against the match (usually few), or
 * each hit looked up (`+` keeps SQLite from reading the folders' rows instead).
 */
export function ftsHitsIn(
  db: CacheDb,
  expr: string,
  table: FtsTable,
  hits: number,
  folders: CountedFolder[],
): number {
  const rows = folders.reduce((n, f) => n + f.cached_count, 0);
  const ids = folders.map((f) => f.id);
  const folderTest = `${rows <= hits ? "" : "+"}m.folder_id IN (${ids.map(() => "?").join(", ")})`;
  return (
    stmt(
      db,
      `SELECT count(*) AS n FROM messages m WHERE ${folderTest}
       AND m.id IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ?)`,
    ).get(...ids, expr) as { n: number }
  ).n;
}
