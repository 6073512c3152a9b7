import { LOWER_PRIORITY_JS } from "./background-thread.js";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import { beforeClose } from "./before-close.js";

/**
 * WAL checkpoints off the daemon's thread. SQLite checkpoints in the commit that takes the WAL
 * past `wal_autocheckpoint` pages (1,000 by default): it copies those pages into the database
 * file and, with `synchronous = NORMAL`, syncs the WAL and the database file, all inside the
 * commit. On a busy disk that commit took 20-60 ms (mostly waiting for the syncs, 3-9 ms of CPU),
 * and a search waits for it. A worker thread with its own connection runs `wal_checkpoint(PASSIVE)`
 * instead, at most one every CHECKPOINT_EVERY_MS while the cache writes (`checkpointSoon`): a passive
 * checkpoint takes no lock a writer needs, so the daemon keeps writing and answering meanwhile.
 * The daemon's connection still checkpoints at BACKSTOP_PAGES, in case the worker falls behind (a
 * checkpoint copies only frames committed before it starts, and the WAL starts over only once it
 * has all been copied while nothing writes) or is gone.
 */
export const CHECKPOINT_EVERY_MS = 100;
export const BACKSTOP_PAGES = 4000;
/**
 * What SQLite cuts the WAL file back to when the log starts over (`journal_size_limit`). The WAL
 * only ever grows: during a backfill the writes outrun the checkpoints and it reached 19-21 MiB at
 * 100,000 messages (the backstop's 16 MiB and more), kept on disk long after. 4 MiB is a thousand
 * pages, what a few busy commits between two checkpoints fill.
 */
export const WAL_LIMIT_BYTES = 4 * 1024 * 1024;
/**
 * How long a TRUNCATE checkpoint (`truncateWal`) waits in the worker for readers and a writer to
 * finish. It holds the writer's lock meanwhile, and the daemon's writes wait for that lock (on
 * timers, ./busy.ts), so it is short: a search reads for a few ms; when it is busy the WAL is left as it is.
 */
export const TRUNCATE_WAIT_MS = 50;
/**
 * How long `close()` waits for the worker to close its connection (it may be in a checkpoint):
 * the daemon's connection must close last, since the last connection to close removes the WAL and
 * the shared-memory file; a caller that removes the directory after close() raced with the worker.
 */
const CLOSE_WAIT_MS = 2_000;

// CommonJS, as `eval` workers are; the connection opens on the first request
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
${LOWER_PRIORITY_JS}
const Database = require(workerData.sqlite);
let db = null;
parentPort.on("message", (m) => {
  if (m === "close") {
    try {
      db?.close();
    } finally {
      const closed = new Int32Array(workerData.closed);
      Atomics.store(closed, 0, 1);
      Atomics.notify(closed, 0);
      parentPort.close();
    }
    return;
  }
  let error = null;
  try {
    db ??= new Database(workerData.file, { fileMustExist: true });
    if (m === "truncate") {
      // The copying first, passive (no lock a writer needs): TRUNCATE holds the writer's lock while
      // it copies and syncs, and a write of the daemon's thread waits for it (on timers, ./busy.ts;
      // a loaded disk's sync takes seconds); it is left the last frames and the cut
      db.pragma("wal_checkpoint(PASSIVE)");
      db.pragma("busy_timeout = " + workerData.truncateWaitMs);
      try {
        db.pragma("wal_checkpoint(TRUNCATE)");
      } finally {
        db.pragma("busy_timeout = 0");
      }
    } else db.pragma("wal_checkpoint(PASSIVE)");
  } catch (e) {
    error = String(e);
  }
  parentPort.postMessage(error);
});
`;

interface Checkpointer {
  file: string;
  worker: Worker | null;
  /** A checkpoint is running in the worker. */
  busy: boolean;
  /** The cache wrote since the last checkpoint began. */
  pending: boolean;
  /** Callers of `truncateWal` waiting for the next TRUNCATE checkpoint (run before any PASSIVE one). */
  truncate: (() => void)[];
  /** Those the running checkpoint answers, when it is a TRUNCATE one. */
  truncating: (() => void)[];
  timer: NodeJS.Timeout | null;
  /** Set to 1 by the worker once its connection is closed (shared, so close() can wait on it). */
  closed: Int32Array;
  last: number;
  failed: boolean;
  done: number;
}

const checkpointers = new WeakMap<Database.Database, Checkpointer>();

/**
 * Moves this connection's WAL checkpoints to a worker thread (a file cache only; `:memory:` has no
 * WAL). The worker starts on the first `checkpointSoon` and ends with `db.close()`.
 */
export function checkpointInBackground(db: Database.Database, file: string): void {
  if (file === ":memory:" || db.memory) return;
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
  const cp: Checkpointer = {
    file,
    worker: null,
    busy: false,
    pending: false,
    truncate: [],
    truncating: [],
    timer: null,
    closed: new Int32Array(new SharedArrayBuffer(4)),
    last: 0,
    failed: false,
    done: 0,
  };
  checkpointers.set(db, cp);
  beforeClose(db, () => {
    // Blocks at most CLOSE_WAIT_MS, once, when the cache closes (the daemon's stop)
    if (stop(cp)) Atomics.wait(cp.closed, 0, 0, CLOSE_WAIT_MS);
  });
}

/** Ends the checkpoints; true when a worker was told to close its connection. */
function stop(cp: Checkpointer): boolean {
  cp.failed = true;
  for (const done of [...cp.truncating.splice(0), ...cp.truncate.splice(0)]) done();
  if (cp.timer) clearTimeout(cp.timer);
  cp.timer = null;
  const worker = cp.worker;
  cp.worker = null;
  worker?.postMessage("close");
  return worker !== null;
}

/**
 * Tells the checkpointer the cache wrote: a checkpoint follows at once, or CHECKPOINT_EVERY_MS
 * after the previous one began when that is later (one more after a running one, if the cache
 * wrote meanwhile, so the WAL is copied up to its end and can start over).
 */
export function checkpointSoon(db: Database.Database): void {
  const cp = checkpointers.get(db);
  if (!cp || cp.failed) return;
  cp.pending = true;
  if (!cp.busy && !cp.timer) schedule(db, cp);
}

function schedule(db: Database.Database, cp: Checkpointer): void {
  const wait = CHECKPOINT_EVERY_MS - (performance.now() - cp.last);
  if (wait <= 0) {
    start(db, cp);
    return;
  }
  cp.timer = setTimeout(() => {
    cp.timer = null;
    start(db, cp);
  }, wait);
  cp.timer.unref();
}

/**
 * A TRUNCATE checkpoint in the worker: the WAL copied into the database file and the WAL file cut
 * to nothing, for when the cache has settled after a sync (the daemon's pass) and will write
 * little for a while. Resolves once it ran (or could not: readers or a writer busy for
 * TRUNCATE_WAIT_MS, no worker, a `:memory:` cache); a failure leaves the WAL as it was, which the
 * next log restart cuts back to WAL_LIMIT_BYTES.
 */
export function truncateWal(db: Database.Database): Promise<void> {
  const cp = checkpointers.get(db);
  if (!cp || cp.failed) return Promise.resolve();
  return new Promise((resolve) => {
    cp.truncate.push(resolve);
    cp.pending = true;
    if (!cp.busy && !cp.timer) start(db, cp);
  });
}

function start(db: Database.Database, cp: Checkpointer): void {
  if (cp.failed || !cp.pending) return;
  if (!cp.worker) {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        file: cp.file,
        sqlite: createRequire(import.meta.url).resolve("better-sqlite3"),
        truncateWaitMs: TRUNCATE_WAIT_MS,
        closed: cp.closed.buffer,
      },
    });
    worker.unref();
    worker.on("message", (error: string | null) => {
      if (cp.worker !== worker) return;
      cp.busy = false;
      for (const done of cp.truncating.splice(0)) done();
      // A worker that cannot checkpoint leaves it to SQLite's own, in the commits, as before
      if (error !== null) giveUp(db, cp);
      else {
        cp.done++;
        if (cp.pending) schedule(db, cp);
      }
    });
    worker.on("error", () => {
      if (cp.worker === worker) giveUp(db, cp);
    });
    cp.worker = worker;
  }
  cp.pending = false;
  cp.busy = true;
  cp.last = performance.now();
  cp.truncating = cp.truncate.splice(0);
  cp.worker.postMessage(cp.truncating.length > 0 ? "truncate" : "checkpoint");
}

function giveUp(db: Database.Database, cp: Checkpointer): void {
  stop(cp);
  if (db.open) db.pragma("wal_autocheckpoint = 1000");
}

/**
 * The daemon connection's backstop while the header writer's thread runs (./writer.ts): that
 * thread's commits leave the copying to this worker, which copies a batch while the next one is
 * written, so a write of the daemon's thread between two batches would find some 30 MiB (at a
 * million messages) not yet copied and copy it in its commit, with the event loop held. The writer
 * keeps the WAL under WRITER_WAL_BYTES (64 MiB) and a batch more itself; this is the backstop
 * should it fail to (128 MiB).
 */
export const WRITER_BACKSTOP_PAGES = 32_768;

/**
 * Raises the daemon connection's backstop while the header writer runs (`wide`), and puts it back
 * after (SQLite's 1,000 if the worker failed meanwhile).
 */
export function writerBackstop(db: Database.Database, wide: boolean): void {
  const cp = checkpointers.get(db);
  if (!cp || !db.open) return;
  const pages = cp.failed ? 1000 : wide ? WRITER_BACKSTOP_PAGES : BACKSTOP_PAGES;
  db.pragma(`wal_autocheckpoint = ${pages}`);
}

/** Checkpoints the worker has made for this connection (for tests and benchmarks). */
export function backgroundCheckpoints(db: Database.Database): number {
  return checkpointers.get(db)?.done ?? 0;
}
