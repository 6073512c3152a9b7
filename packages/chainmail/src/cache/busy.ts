// An operator's write to cache.db (`cache rebuild`'s drop, `cache evict`) when another connection
// may hold the write lock for long: a REINDEX or a checkpoint of our own workers on a loaded
// machine, or another program with the file open (an sqlite3 shell in a transaction, a backup).
//
// better-sqlite3 waits for a busy lock synchronously (busy_timeout, 5 s): the daemon answered
// nothing meanwhile, and past the 5 s the operator's command failed with SQLite's "database is
// locked" (a CI run saw it: the rebuild's drop then rejected with nobody listening). Here each
// attempt asks SQLite not to wait at all, and the waiting is done between attempts, on timers,
// with the event loop free; past the limit the caller hears `CacheBusyError`, and the attempt's
// transaction rolled back, so nothing is half written.
import { setTimeout as sleep } from "node:timers/promises";
import type { CacheDb } from "./schema.js";
import { writeTurn } from "./writer.js";

/** How long an operator's write waits for cache.db's write lock before it is refused. */
export const OPERATOR_WRITE_WAIT_MS = 30_000;
/** The longest pause between two attempts (they start at 5 ms and double). */
const MAX_PAUSE_MS = 250;

/** cache.db's write lock stayed taken for `waitedMs`: the write was not done. */
export class CacheBusyError extends Error {
  constructor(readonly waitedMs: number) {
    super(`cache.db's write lock stayed taken by another connection for ${Math.round(waitedMs / 1000)} s`);
    this.name = "CacheBusyError";
  }
}

const isBusy = (err: unknown): boolean =>
  typeof (err as { code?: unknown })?.code === "string" &&
  (err as { code: string }).code.startsWith("SQLITE_BUSY");

/**
 * Runs `write` (one transaction, or statements that each commit alone) once the write lock is
 * free: at once when it is (synchronously, before the first await, when the header writer has no
 * batch), else again after pauses, up to `limitMs`. A `write` that fails otherwise fails as it is.
 */
export async function writeWhenFree<T>(
  db: CacheDb,
  write: () => T,
  limitMs: number = OPERATOR_WRITE_WAIT_MS,
): Promise<T> {
  const started = performance.now();
  for (let pause = 5; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    // (the header writer's batches: their turn is given, not polled for)
    const turn = writeTurn(db);
    if (turn) await turn;
    const waitMs = db.pragma("busy_timeout", { simple: true }) as number;
    db.pragma("busy_timeout = 0");
    try {
      return write();
    } catch (err) {
      if (!isBusy(err)) throw err;
    } finally {
      db.pragma(`busy_timeout = ${waitMs}`);
    }
    const waited = performance.now() - started;
    if (waited >= limitMs) throw new CacheBusyError(waited);
    await sleep(Math.min(pause, limitMs - waited));
  }
}
