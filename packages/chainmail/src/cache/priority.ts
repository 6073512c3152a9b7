/**
 * Requests first, background sync second. The daemon answers searches on the thread that also
 * syncs and backfills the cache, and on a 2-core machine the sync's other parties (the mail
 * server sending its FETCH, the checkpoint worker) compete with the caller's processes for the
 * cores too. The sync already works in slices of a few milliseconds (`writeInSlices`,
 * `turnEvery`); between two slices it now also waits while requests keep arriving, so an agent
 * searching while new mail is synced meets an idle daemon more often than a busy one.
 *
 * The wait is bounded: a sync never stops, it slows down while requests come back to back (each
 * wait ends after MAX_WAIT_MS, and a slice follows), and runs at full speed as soon as they stop.
 */

/** A request this recent holds the next background slice back. */
export const GRACE_MS = 2;
/** The longest one background turn waits for requests to pause. */
export const MAX_WAIT_MS = 8;

let lastRequest = Number.NEGATIVE_INFINITY;

/** Says a request arrived or was answered: background turns wait until GRACE_MS have passed since. */
export function requestSeen(now = performance.now()): void {
  lastRequest = now;
}

/** When the last request arrived or was answered (performance.now() time). */
export const lastRequestAt = (): number => lastRequest;

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A turn of the event loop for background work: one setImmediate (so pending I/O, a request
 * among it, runs first), then, while a request arrived or was answered within GRACE_MS, short
 * sleeps until it has not, for at most MAX_WAIT_MS in all (`limits` changes both, for tests).
 */
export async function backgroundTurn(limits: { graceMs?: number; maxWaitMs?: number } = {}): Promise<void> {
  const { graceMs = GRACE_MS, maxWaitMs = MAX_WAIT_MS } = limits;
  const started = performance.now();
  await immediate();
  for (;;) {
    const now = performance.now();
    const quietFor = now - lastRequest;
    const waited = now - started;
    if (quietFor >= graceMs || waited >= maxWaitMs) return;
    await sleep(Math.max(1, Math.min(graceMs - quietFor, maxWaitMs - waited)));
  }
}
