import { checkpointSoon } from "./checkpoint.js";
import { ftsUpkeep } from "./fts.js";
import { backgroundTurn } from "./priority.js";
import type { CacheDb } from "./schema.js";
import { writeWhenFree } from "./busy.js";

/**
 * Longest a cache write transaction runs before it commits and lets the event loop turn: the
 * daemon answers searches on the same thread, and a batch of 1,000 headers (or 200 bodies) written
 * in one go held them up for 100 ms and more. Each commit adds an FTS segment, which `ftsUpkeep`
 * folds in between the transactions.
 */
export const WRITE_SLICE_MS = 4;

/*
 * Statement journals in memory. A statement that may fail after writing part of its rows (an
 * INSERT whose triggers write or can RAISE, a foreign key, a multi-row INSERT ... SELECT) keeps the
 * original of each page it changes in a statement journal, and SQLite spills a journal past 64 KiB
 * into a temporary file it creates, writes and deletes again for that statement: the header sync's
 * batch statements (a transaction's address rows and counts) did so in nearly every transaction,
 * 13% of the header write's CPU samples (perf). With `temp_store = MEMORY` when a write transaction
 * starts, SQLite keeps that transaction's statement journals in memory (the pager takes the setting
 * at the transaction's first write). A transaction here is a few milliseconds of writes, so its
 * journals stay small; the connection's setting is put back after it, so a statement that rewrites
 * a whole folder elsewhere (a UIDVALIDITY change, a migration) still spills to a file rather than
 * holding hundreds of megabytes in memory. 20,000 generated headers written alone
 * (`npm run bench:header-write`): about 180 -> 120-135 us of CPU per message.
 */

/**
 * Writes `items` in transactions of about `sliceMs` each, in order, yielding to the event loop
 * between them. In each transaction `begin` runs first, then `write` for each item, then `end`
 * (the transaction's FTS writes go there); `done` runs right after the last commit.
 * A transaction's size comes from how long the previous one took per item, `end` and the commit
 * included (FTS rows cost more than the rest and are written in `end`). Each transaction is
 * whole: a crash leaves a prefix of the items written. `begin` starts each attempt afresh: one that
 * meets cache.db's write lock runs again once it is free, and one the lock stays taken for past the
 * wait (`CacheBusyError`, ./busy.ts) ends the call with the items before it written. After each transaction (after `done` for
 * the last) the FTS index is merged where it needs it (`ftsUpkeep`, in steps of its own), since
 * FTS5's automerge, which merged inside the commits, is off.
 */
export async function writeInSlices<T>(
  db: CacheDb,
  items: readonly T[],
  hooks: {
    /** Told the items `[from, to)` the transaction writes. */
    begin?: (from: number, to: number) => void;
    write: (item: T) => void;
    end?: () => void;
    done?: () => void;
    /**
     * How much work an item is (default 1 each): a transaction takes items up to the weight the
     * previous one showed fits in `sliceMs`. Bodies differ in length a thousandfold, and by count a
     * transaction after one of short bodies held the event loop for 50-100 ms over long ones.
     */
    weight?: (item: T) => number;
    /** The merging after each transaction mostly off this thread (`ftsUpkeep`'s `offThread`). */
    offThreadMerges?: boolean;
  },
  sliceMs = WRITE_SLICE_MS,
): Promise<void> {
  const weight = hooks.weight ?? (() => 1);
  const tempStore = db.pragma("temp_store", { simple: true }) as number;
  let size = 8;
  for (let i = 0; i < items.length; ) {
    let started = 0;
    let taken = 0;
    // Its turn with the header writer's thread (./writer.ts), and the write lock, waited for on
    // timers (./busy.ts), not in SQLite's busy handler with the event loop held. An attempt that
    // meets the lock wrote nothing and moved nothing: the items of the one that commits are taken
    const stop = await writeWhenFree(db, () => {
      started = performance.now();
      // Statement journals in memory for this transaction (see above)
      // (exec, not a kept statement: SQLite applies this pragma when it compiles it, not when it runs)
      db.exec("PRAGMA temp_store = MEMORY");
      try {
        const end = db
          .transaction(() => {
            let to = i + 1;
            taken = weight(items[i] as T);
            while (to < items.length && taken < size) taken += weight(items[to++] as T);
            if (taken > size && to - i > 1) taken -= weight(items[--to] as T);
            hooks.begin?.(i, to);
            for (let k = i; k < to; k++) hooks.write(items[k] as T);
            hooks.end?.();
            return to;
            // IMMEDIATE: no other connection's commit can fall between the first read and first
            // write, and a lock taken fails the BEGIN, before anything ran
          })
          .immediate();
        // Right after the last commit, before any other callback or promise continuation: a
        // caller that stops its FETCHes from here (a progress callback) sees no later response
        // processed first
        if (end === items.length) hooks.done?.();
        return end;
      } finally {
        db.exec(`PRAGMA temp_store = ${tempStore}`);
      }
    });
    i = stop;
    checkpointSoon(db);
    const perUnit = (performance.now() - started) / Math.max(taken, 1e-9);
    size = Math.max(1, Math.min(10_000 * (hooks.weight ? 10_000 : 1), sliceMs / Math.max(perUnit, 1e-9)));
    // A background turn (requests first, ./priority.ts), then any merging, each step after a
    // turn of its own
    if (i < items.length) await ftsUpkeep(db, { offThread: hooks.offThreadMerges });
  }
  if (items.length === 0) hooks.done?.();
  else await ftsUpkeep(db, { offThread: hooks.offThreadMerges });
}

/** The part of a connection `turnEvery` pauses: imapflow's socket (not in its typings). */
type Pausable = { pause(): unknown; resume(): unknown };

function socketOf(client: object | undefined): Pausable | undefined {
  // imapflow keeps its net/tls socket as `socket` (false before connect); it is not typed
  const s = (client as { socket?: unknown } | undefined)?.socket;
  return s && typeof (s as Pausable).pause === "function" ? (s as Pausable) : undefined;
}

/**
 * A checkpoint for a loop over a FETCH's messages: resolves at once until `sliceMs` have passed
 * since the last turn of the event loop, then after a background turn (one turn of the loop, and
 * longer while requests keep arriving: ./priority.ts). While it waits, the connection's socket
 * is paused: libuv reads a socket up to 32 times per turn of the loop and imapflow parses each
 * read before the next, so a fast server's FETCH held the daemon's searches up 80-160 ms at a
 * time (imapflow's own yield every 10 responses counts per read, so it rarely comes). Paused,
 * the loop turns after the current read; the FETCH continues where it was.
 */
export function turnEvery(client?: object, sliceMs = WRITE_SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    const socket = socketOf(client);
    socket?.pause();
    return backgroundTurn().then(() => {
      socket?.resume();
      since = performance.now();
    });
  };
}
