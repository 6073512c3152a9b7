// The arrival times the cache holds for one folder's UIDs, for the server path's first search in a
// folder (query/imap-run.ts, byKnownArrival): the server says which messages match and how many,
// and the cache only says in which order they arrived. IMAP makes a message's INTERNALDATE
// immutable for its UID within one UIDVALIDITY (RFC 3501 2.3.1.1 and 2.3.3, RFC 9051), and the
// sync stores the server's INTERNALDATE (whole seconds) and UIDVALIDITY and clears a folder's rows
// in the same transaction that records a new UIDVALIDITY (cache/sync.ts). So a row of the folder
// under the UIDVALIDITY the server reports now is the server's own arrival time of that UID,
// however old the row: ordering matches by (arrival, UID) is exactly SORT (ARRIVAL)'s order
// (RFC 5256 breaks ties by sequence number, which follows UID order within a folder).
import { type CacheDb, stmt } from "./schema.js";

/** One folder's cached messages, newest first by (arrival second, UID): SORT (ARRIVAL) reversed. */
export interface KnownArrivals {
  uids: number[];
  /** Arrival (INTERNALDATE) in whole seconds, parallel to `uids`. */
  seconds: number[];
  /** How many rows the cache holds for the folder (some may be expunged on the server since). */
  cached: number;
}

const FOLDER_SQL =
  "SELECT id, uidvalidity, cached_count FROM folders WHERE account = ? AND path = ? /* arrivals */";
const ROWS_SQL = "SELECT uid, internal_date FROM messages WHERE folder_id = ? /* arrivals */";

/**
 * The folder's cached arrivals when the cache holds it under `uidValidity` (the one the server
 * reported on selecting it), else null: a folder not cached, cached under another UIDVALIDITY
 * (its rows name other messages), or with no rows.
 */
export function cachedArrivals(
  db: CacheDb,
  account: string,
  path: string,
  uidValidity: string,
): KnownArrivals | null {
  const folder = stmt(db, FOLDER_SQL).get(account, path) as
    | { id: number; uidvalidity: string | null; cached_count: number }
    | undefined;
  if (!folder || folder.uidvalidity === null || folder.uidvalidity !== uidValidity) return null;
  if (folder.cached_count === 0) return null;
  // Raw rows (arrays, not objects): 12,000 of them are read on a folder's first search. Sorted
  // here rather than by SQLite: no index orders a folder's rows by (internal_date, uid).
  const rows = stmt(db, ROWS_SQL).raw(true).all(folder.id) as Array<[number, number]>;
  if (rows.length === 0) return null;
  const seconds = rows.map((r) => Math.floor(r[1] / 1000));
  const order = Array.from(rows.keys());
  order.sort((a, b) => (seconds[b] as number) - (seconds[a] as number) || rows[b]![0] - rows[a]![0]);
  return {
    uids: order.map((i) => rows[i]![0]),
    seconds: order.map((i) => seconds[i] as number),
    cached: rows.length,
  };
}
