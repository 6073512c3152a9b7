// Every write of the daemon's thread to cache.db goes through `writeWhenFree`: the sync's and the
// watch's statements and slices, flag changes, expunges, the body backfill, FTS merges, eviction,
// and the operator's `cache rebuild` and `cache evict`. Another connection may hold the write lock
// for long: another program with the file open (an sqlite3 shell in a transaction, a backup), the
// checkpoint worker's TRUNCATE, a REINDEX or a batch of our own workers on a loaded machine.
//
// better-sqlite3 waits for a busy lock synchronously (busy_timeout): the daemon answered nothing
// meanwhile (no search, no get_message, no send), and past 5 s the write failed with SQLite's
// "database is locked" and the pass or the watch's sync with it. Here each attempt runs with
// SQLite's busy wait off, and the waiting is done between attempts, on timers, with the event loop
// free; past the limit the caller hears `CacheBusyError`. A write is one IMMEDIATE transaction or
// one statement, so an attempt that meets the lock fails before it has written anything (at BEGIN
// IMMEDIATE), and one that fails later rolls back whole: tried again, it writes all or nothing.
import { setTimeout as sleep } from "node:timers/promises";
import type { CacheDb } from "./schema.js";
import { writeTurn } from "./writer.js";

/** How long a write waits for cache.db's write lock before it is given up (`CacheBusyError`). */
export const CACHE_WRITE_WAIT_MS = 30_000;
/** The longest pause between two attempts (they start at 5 ms and double). */
const MAX_PAUSE_MS = 250;

/**
 * cache.db's write lock stayed taken for `waitedMs`: the write was not done. Its `code` is
 * SQLite's, so a pass's or a call's error names the cache as busy (CONFLICT: ../imap/connection.ts).
 */
export class CacheBusyError extends Error {
  readonly code = "SQLITE_BUSY";
  constructor(readonly waitedMs: number) {
    super(`cache.db was busy: another connection held its write lock for ${Math.round(waitedMs / 1000)} s`);
    this.name = "CacheBusyError";
  }
}

/** Whether `err` is SQLite's busy lock (or `CacheBusyError`, which carries its code). */
export const isBusy = (err: unknown): boolean =>
  typeof (err as { code?: unknown })?.code === "string" &&
  (err as { code: string }).code.startsWith("SQLITE_BUSY");

const waits = new WeakMap<CacheDb, number>();
/** Connections whose owner is stopping (`endWaits`). */
const ending = new WeakSet<CacheDb>();

/**
 * Makes `db` the daemon's connection: SQLite's busy wait off for good, so nothing on this thread
 * waits inside SQLite (its reads never need the write lock in WAL mode; its writes go through
 * `writeWhenFree`), and its writes wait up to `waitMs` for the lock.
 */
export function waitOnTimers(db: CacheDb, waitMs: number = CACHE_WRITE_WAIT_MS): void {
  db.pragma("busy_timeout = 0");
  waits.set(db, waitMs);
}

/**
 * The connection's owner is stopping (the daemon's stop, after which it closes the connection): a
 * write waiting for the lock gives up at its next attempt, as one past the wait does, instead of
 * holding the stop up for as long as another program keeps the lock.
 */
export function endWaits(db: CacheDb): void {
  ending.add(db);
}

/**
 * Runs `write` (one IMMEDIATE transaction, or one statement) once the write lock is free: at once
 * when it is (synchronously, before the first await, when the header writer has no batch), else
 * again after pauses, up to `limitMs` (the connection's, `waitOnTimers`, else CACHE_WRITE_WAIT_MS).
 * A `write` that fails otherwise fails as it is.
 */
export async function writeWhenFree<T>(db: CacheDb, write: () => T, limitMs?: number): Promise<T> {
  const limit = limitMs ?? waits.get(db) ?? CACHE_WRITE_WAIT_MS;
  const started = performance.now();
  for (let pause = 5; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    // (the header writer's batches: their turn is given, not polled for)
    const turn = writeTurn(db);
    if (turn) await turn;
    const waitMs = db.pragma("busy_timeout", { simple: true }) as number;
    if (waitMs !== 0) db.pragma("busy_timeout = 0");
    try {
      return write();
    } catch (err) {
      if (!isBusy(err)) throw err;
    } finally {
      if (waitMs !== 0) db.pragma(`busy_timeout = ${waitMs}`);
    }
    const waited = performance.now() - started;
    if (waited >= limit || ending.has(db)) throw new CacheBusyError(waited);
    await sleep(Math.min(pause, limit - waited));
    if (ending.has(db) || !db.open) throw new CacheBusyError(performance.now() - started);
  }
}
