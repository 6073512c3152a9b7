// The arrival times the cache holds for one folder's UIDs, for the server path's first search in a
// folder (query/imap-run.ts, byKnownArrival): the server says which messages match and how many,
// and the cache only says in which order they arrived. IMAP makes a message's INTERNALDATE
// immutable for its UID within one UIDVALIDITY (RFC 3501 2.3.1.1 and 2.3.3, RFC 9051), and the
// sync stores the server's INTERNALDATE (whole seconds) and UIDVALIDITY and clears a folder's rows
// in the same transaction that records a new UIDVALIDITY (cache/sync.ts). So a row of the folder
// under the UIDVALIDITY the server reports now is the server's own arrival time of that UID,
// however old the row: ordering matches by (arrival, UID) is exactly SORT (ARRIVAL)'s order
// (RFC 5256 breaks ties by sequence number, which follows UID order within a folder). The one
// exception is arrival-id.ts's spill: a message stored when 524,288 cached messages had already
// arrived in its second is stored a second late, and would be ordered so.
//
// For the same reason a folder's arrivals, once read, stay true for as long as its UIDVALIDITY
// does: they are kept in memory (reading and ordering 12,000 rows costs about as much as the
// server's SORT it spares). A kept copy can only lack rows (mail synced since) or hold rows of
// messages expunged since, and neither changes an answer: the server's SEARCH decides what
// matches; a few matches the copy lacks have their INTERNALDATE fetched by the caller, and more
// make it ask again with `refresh`.
import { type CacheDb, stmt } from "./schema.js";

/** One folder's cached messages, newest first by (arrival second, UID): SORT (ARRIVAL) reversed. */
export interface KnownArrivals {
  uids: ArrayLike<number>;
  /** Arrival (INTERNALDATE) in whole seconds, parallel to `uids`. */
  seconds: ArrayLike<number>;
  /** How many rows the cache holds for the folder now (some may be of messages expunged since). */
  cached: number;
}

/** A folder with more cached messages than this is not kept in memory: the server sorts it. */
const FOLDER_MAX = 500_000;
/** At most this many messages' arrivals are kept over all folders (12 bytes each), least recently used dropped. */
const KEPT_MAX = 1_000_000;

interface Kept {
  folderId: number;
  uidValidity: string;
  /** The folder row's counters when read: a `refresh` reads the rows again only when these moved. */
  stamp: string;
  uids: Uint32Array;
  seconds: Float64Array;
}

/** Per cache.db, per account and folder path, in least recently used order (a Map keeps insertion order). */
const kept = new WeakMap<CacheDb, Map<string, Kept>>();

const FOLDER_SQL =
  "SELECT id, uidvalidity, cached_count, uidnext, last_sync FROM folders WHERE account = ? AND path = ? /* arrivals */";
// internal_date holds whole seconds in ms (a trigger refuses any other: cache/arrival-id.ts), so
// its order is the arrival second's order and equal values are one second, ordered by UID.
const ROWS_SQL =
  "SELECT uid, internal_date FROM messages WHERE folder_id = ? ORDER BY internal_date DESC, uid DESC /* arrivals */";

/**
 * The folder's cached arrivals when the cache holds it under `uidValidity` (the one the server
 * reported on selecting it), else null: a folder not cached, cached under another UIDVALIDITY
 * (its rows name other messages), with no rows, or too large to keep. `refresh`: the caller met
 * many matches the answer lacked, so the rows are read again if the folder's rows changed since.
 */
export function cachedArrivals(
  db: CacheDb,
  account: string,
  path: string,
  uidValidity: string,
  refresh = false,
): KnownArrivals | null {
  let map = kept.get(db);
  if (!map) {
    map = new Map();
    kept.set(db, map);
  }
  const key = `${account}\u0000${path}`;
  const folder = stmt(db, FOLDER_SQL).get(account, path) as
    | {
        id: number;
        uidvalidity: string | null;
        cached_count: number;
        uidnext: number | null;
        last_sync: number | null;
      }
    | undefined;
  const had = map.get(key);
  map.delete(key);
  if (
    !folder ||
    folder.uidvalidity !== uidValidity ||
    folder.cached_count === 0 ||
    folder.cached_count > FOLDER_MAX
  )
    return null;
  const stamp = `${folder.cached_count}:${folder.uidnext}:${folder.last_sync}`;
  let entry =
    had && had.folderId === folder.id && had.uidValidity === uidValidity && (!refresh || had.stamp === stamp)
      ? had
      : undefined;
  if (!entry) {
    // Raw rows (arrays, not objects), copied into typed arrays: 12 bytes a message kept.
    const rows = stmt(db, ROWS_SQL).raw(true).all(folder.id) as Array<[number, number]>;
    if (rows.length === 0) return null;
    const uids = new Uint32Array(rows.length);
    const seconds = new Float64Array(rows.length);
    rows.forEach((r, i) => {
      uids[i] = r[0];
      seconds[i] = Math.floor(r[1] / 1000);
    });
    entry = { folderId: folder.id, uidValidity, stamp, uids, seconds };
  }
  map.set(key, entry);
  let total = 0;
  for (const e of map.values()) total += e.uids.length;
  for (const [k, e] of map) {
    if (total <= KEPT_MAX || k === key) break;
    map.delete(k);
    total -= e.uids.length;
  }
  return { uids: entry.uids, seconds: entry.seconds, cached: folder.cached_count };
}
