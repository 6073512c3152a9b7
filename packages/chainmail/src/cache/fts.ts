import type { CacheDb } from "./schema.js";

/**
 * FTS5 keeps its index as a set of b-tree segments: every committed write adds one and automerge
 * folds them together four at a time. After bulk writes (an initial sync; a body backfill, which
 * also re-indexes every row it fills and leaves a tombstone for its old entry) the index sits in a
 * dozen or more segments, and every term look-up visits each of them: at 100,000 messages with 17
 * segments, word and address queries took 2-3x as long as on one merged segment.
 *
 * Merging rewrites the whole index (about 1.4 s at 100,000 messages with bodies on an idle core),
 * so it waits until the segment count reaches MAX_SEGMENTS. With automerge folding four into one,
 * that takes a few dozen write transactions since the previous merge: a bulk load merges a few
 * times on the way, and a mailbox receiving mail one message at a time every few dozen messages.
 */
const MAX_SEGMENTS = 8;
/** Pages per merge step: a step takes a few milliseconds (500 took up to 60), then the event loop gets a turn. */
const STEP_PAGES = 100;

/** Segments in the FTS index (each has at least one row in %_idx, one per leaf page). */
const segments = (db: CacheDb) =>
  (db.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;

/** True when the FTS index has enough segments that merging them pays off. */
export function ftsNeedsMerge(db: CacheDb): boolean {
  return segments(db) >= MAX_SEGMENTS;
}

/**
 * Merges the FTS index into one segment (and drops tombstones) when `ftsNeedsMerge` says so, in
 * bounded steps that yield to the event loop between them. Returns whether it merged.
 * `force` merges whenever there is more than one segment.
 */
export async function compactFts(db: CacheDb, options: { force?: boolean } = {}): Promise<boolean> {
  if (options.force ? segments(db) < 2 : !ftsNeedsMerge(db)) return false;
  // A negative page count merges segments of every level, as 'optimize' does, but a step at a
  // time; a step that changes fewer than two rows means there was nothing left to merge
  const step = db.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)");
  const changes = db.prepare("SELECT total_changes() AS n").pluck();
  for (;;) {
    const before = changes.get() as number;
    step.run(-STEP_PAGES);
    if ((changes.get() as number) - before < 2) return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
