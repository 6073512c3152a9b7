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
/**
 * Rows read per statement: a folder's rows are read in slices with the event loop free between
 * them, so reading a large folder's (100,000 rows: 150-300 ms on a loaded core) never holds up
 * the daemon's other requests for longer than one slice.
 */
const SLICE = 5_000;

interface Kept {
  folderId: number;
  uidValidity: string;
  /** The folder row's counters when read: a `refresh` reads the rows again only when these moved. */
  stamp: string;
  uids: Uint32Array;
  seconds: Float64Array;
}

export interface FolderRow {
  id: number;
  uidvalidity: string | null;
  cached_count: number;
  uidnext: number | null;
  last_sync: number | null;
}

/** Per cache.db, per account and folder path, in least recently used order (a Map keeps insertion order). */
const kept = new WeakMap<CacheDb, Map<string, Kept>>();

const FOLDER_SQL =
  "SELECT id, uidvalidity, cached_count, uidnext, last_sync FROM folders WHERE account = ? AND path = ? /* arrivals */";
// By the (folder_id, uid) unique index, one slice after another. internal_date holds whole seconds
// in ms (a trigger refuses any other: cache/arrival-id.ts), so its order is the arrival second's
// order and equal values are one second, ordered by UID.
const ROWS_SQL =
  "SELECT uid, internal_date FROM messages WHERE folder_id = ? AND uid > ? ORDER BY uid LIMIT ? /* arrivals */";

export const folderRow = (db: CacheDb, account: string, path: string) =>
  stmt(db, FOLDER_SQL).get(account, path) as FolderRow | undefined;

/**
 * The folder's rows newest first by (arrival second, UID), read in slices. Null when the folder's
 * UIDVALIDITY (or the folder) changed while they were read: a slice read after the change would
 * hold rows of other messages under the same UIDs (the sync clears the folder's rows and records
 * the new UIDVALIDITY in one transaction, so a check after the last slice catches it).
 */
export async function readArrivals(
  db: CacheDb,
  account: string,
  path: string,
  folder: FolderRow,
  /** Rows per slice (tests read in small slices). */
  slice = SLICE,
  /** Called between slices (tests change the folder there). */
  between?: () => void,
): Promise<{ uids: Uint32Array; seconds: Float64Array } | null> {
  const uidList: number[] = [];
  const secondList: number[] = [];
  for (let after = -1; ; ) {
    const rows = stmt(db, ROWS_SQL).raw(true).all(folder.id, after, slice) as Array<[number, number]>;
    for (const [uid, ms] of rows) {
      uidList.push(uid);
      secondList.push(Math.floor(ms / 1000));
    }
    if (rows.length < slice) break;
    after = (rows[rows.length - 1] as [number, number])[0];
    await new Promise((resolve) => setImmediate(resolve));
    between?.();
  }
  const now = folderRow(db, account, path);
  if (!now || now.id !== folder.id || now.uidvalidity !== folder.uidvalidity) return null;
  // UID order is mostly arrival order already: sorting the positions from the highest UID down is
  // close to linear (the engine's merge sort finds the runs).
  const order = Array.from({ length: uidList.length }, (_, i) => uidList.length - 1 - i);
  order.sort(
    (a, b) =>
      (secondList[b] as number) - (secondList[a] as number) ||
      (uidList[b] as number) - (uidList[a] as number),
  );
  const uids = new Uint32Array(order.length);
  const seconds = new Float64Array(order.length);
  order.forEach((at, i) => {
    uids[i] = uidList[at] as number;
    seconds[i] = secondList[at] as number;
  });
  return { uids, seconds };
}

/**
 * The folder's cached arrivals when the cache holds it under `uidValidity` (the one the server
 * reported on selecting it), else null: a folder not cached, cached under another UIDVALIDITY
 * (its rows name other messages), with no rows, or too large to keep. `refresh`: the caller met
 * many matches the answer lacked, so the rows are read again if the folder's rows changed since.
 */
export async function cachedArrivals(
  db: CacheDb,
  account: string,
  path: string,
  uidValidity: string,
  refresh = false,
): Promise<KnownArrivals | null> {
  let map = kept.get(db);
  if (!map) {
    map = new Map();
    kept.set(db, map);
  }
  const key = `${account}\u0000${path}`;
  const folder = folderRow(db, account, path);
  if (
    !folder ||
    folder.uidvalidity !== uidValidity ||
    folder.cached_count === 0 ||
    folder.cached_count > FOLDER_MAX
  ) {
    map.delete(key);
    return null;
  }
  const stamp = `${folder.cached_count}:${folder.uidnext}:${folder.last_sync}`;
  const had = map.get(key);
  let entry =
    had && had.folderId === folder.id && had.uidValidity === uidValidity && (!refresh || had.stamp === stamp)
      ? had
      : undefined;
  if (!entry) {
    const read = await readArrivals(db, account, path, folder);
    if (!read || read.uids.length === 0) return null;
    entry = { folderId: folder.id, uidValidity, stamp, ...read };
  }
  // (most recently used last; whatever another search kept meanwhile is replaced)
  map.delete(key);
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
