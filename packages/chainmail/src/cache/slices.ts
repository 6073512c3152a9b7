import type { CacheDb } from "./schema.js";

/**
 * Longest a cache write transaction runs before it commits and lets the event loop turn: the
 * daemon answers searches on the same thread, and a batch of 1,000 headers (or 200 bodies) written
 * in one go held them up for 100 ms and more. Each commit adds an FTS segment, which automerge
 * folds in later; a few milliseconds per transaction keeps that merging small.
 */
export const WRITE_SLICE_MS = 8;

/**
 * Writes `items` in transactions of at most about `sliceMs` each, in order, yielding to the event
 * loop between them. In each transaction `begin` runs first, then `write` for each item, then `end`
 * (the transaction's FTS writes go there). Each transaction is whole: a crash leaves a prefix of
 * the items written.
 */
export async function writeInSlices<T>(
  db: CacheDb,
  items: readonly T[],
  hooks: { begin?: () => void; write: (item: T) => void; end?: () => void },
  sliceMs = WRITE_SLICE_MS,
): Promise<void> {
  for (let i = 0; i < items.length; ) {
    const started = performance.now();
    db.transaction(() => {
      hooks.begin?.();
      do hooks.write(items[i++] as T);
      while (i < items.length && performance.now() - started < sliceMs);
      hooks.end?.();
    })();
    if (i < items.length) await new Promise((resolve) => setImmediate(resolve));
  }
}
