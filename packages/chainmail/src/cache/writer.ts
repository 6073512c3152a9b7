// The header writer: a worker thread with its own connection to cache.db (./writer-worker.ts) that
// writes the header batches of a first sync (or of a folder whose UIDVALIDITY changed: batches no
// event hears of) in one transaction per FETCH batch, up to a thousand messages, while the daemon's
// thread parses the next FETCH and answers searches. On the daemon's thread a header write is done
// in transactions of ~4 ms (about 35 messages, ./slices.ts), and a transaction's cost is mostly
// its commit: 148 µs of CPU a message at 35 a transaction, 96-103 at 500-1,000
// (`npm run bench:header-write`, BENCH_TXN).
//
// Taking turns. A write of the daemon's connection during a worker transaction would meet its
// lock (and be tried again on timers: ./busy.ts). Every writer on the daemon's thread therefore
// waits for its turn first (`writeTurn`, resolved at once when the worker has nothing to write,
// and taken by `writeWhenFree`, the one way that thread writes): the sync's and the backfill's
// slices, the FTS merges, eviction, the sync's own statements; and the REINDEX worker's start. A batch is
// handed to the worker only while nobody waits for a turn, and one at a time, so a turn comes
// within one worker transaction (about 100 ms at 1,000 messages). The daemon's transactions are
// IMMEDIATE as well, so a commit of the worker can never fall between a transaction's first read
// and its first write (SQLITE_BUSY_SNAPSHOT).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from "node:worker_threads";
import { checkpointSoon, writerBackstop } from "./checkpoint.js";
import { backgroundTurn } from "./priority.js";
import type { CacheDb } from "./schema.js";
import type { HeaderRow } from "./store.js";
import { beforeClose } from "./before-close.js";

/** As `WRITE_SLICE_MS` (./slices.ts, which imports this): the longest stretch between two turns. */
const WRITE_SLICE_MS = 4;
/** Longest `close()` waits for the worker to finish its transaction and close its connection. */
export const WRITER_CLOSE_WAIT_MS = 10_000;
/**
 * The worker's page cache (KiB, as `cache_size` takes a negative count) and its young generation
 * (MB): the daemon's RSS counts both (issue 34: at most 400 MB; the scale run at 100,000 measured
 * VmHWM 368 MB with 32 MiB and V8's default, against 307 MB without the worker). A young
 * generation of 16 MB instead of 8 took the header sync at 100,000 from 8,339-8,391 to 8,660-8,806
 * headers/s (fewer scavenges of the rows each batch's copy makes) for some 8 MB of VmHWM; 32 MB gave
 * 8,747-8,857 for 30 MB more (2026-12-07, BENCHMARKS.md).
 */
const WRITER_CACHE_KIB = 8 * 1024;
const WRITER_YOUNG_MB = 16;
/**
 * How long the worker stays without a batch before it is ended (the next first sync starts another,
 * in some 30 ms): an idle worker kept its heap and its connection's memory, and the scale run at a
 * million measured the daemon's RSS 150 MB higher through the body backfill that follows the header
 * sync (VmHWM 434 MB against 362 without the worker).
 */
export const WRITER_IDLE_MS = 2_000;
/**
 * Below this many messages (in one FETCH batch) a sync writes on the daemon's thread: they fit a
 * few 4 ms slices there, and starting a worker thread for them (some 30 ms and its heap) costs more
 * than it saves (a new folder's first few messages, an incremental sync no event hears of).
 */
export const WRITER_MIN_MESSAGES = 200;
/**
 * The worker's commits do not checkpoint: the checkpoint worker (./checkpoint.ts) copies the WAL
 * on the other core after each batch, and the writer restarts the log itself
 * (`wal_checkpoint(RESTART)`, copying what the checkpoint worker has not) only once the WAL file
 * passes this size, so a first sync's WAL stays under it plus one batch's transaction (some 30 MiB
 * at a million messages). At a million a restart came every 2-3 batches and took 130-390 ms of
 * the writer's time, mostly waiting for the checkpoint worker's pass and the syncs.
 */
export const WRITER_WAL_BYTES = 64 * 1024 * 1024;
/** How long that restart waits for the checkpoint worker, readers and another writer. */
const WRITER_RESTART_WAIT_MS = 1_000;
/** How long the worker waits for the write lock (another account's REINDEX can hold it seconds). */
const WRITER_BUSY_MS = 60_000;
/**
 * Rows per message to the worker, with a turn of the event loop between two: postMessage copies
 * (structured clone) on this thread, 6-17 ms for 1,000 rows on a loaded core (v8.serialize).
 */
export const POST_ROWS = 100;

/** What the worker is started with (./writer-worker.ts). */
export interface WriterData {
  file: string;
  cacheSize: number;
  busyTimeoutMs: number;
  /** Set to 1 by `close()`: the worker writes no further batch and stops merging. */
  stop: SharedArrayBuffer;
  /** Set to 1 by the worker once its connection is closed. */
  closed: SharedArrayBuffer;
  /** Tests: how long each transaction holds the write lock before it writes. */
  holdMs: number;
  /** The WAL file's size past which the worker restarts the log (WRITER_WAL_BYTES). */
  walBytes: number;
  /** How long that restart waits for the checkpoint worker, readers and other writers. */
  restartWaitMs: number;
  /** Where the worker acknowledges batches: `close()` reads what is there after it waited. */
  replies: MessagePort;
}
/**
 * A piece of a batch for the worker: the rows' values (`headerRow`), not imapflow's objects. The
 * batch is written once its `last` piece arrived.
 */
export interface WriterJob {
  id: number;
  folderId: number;
  rows: HeaderRow[];
  last: boolean;
  /** The batch is dropped instead (its caller gave up before the last piece). */
  cancel?: boolean;
}
/**
 * FTS5 merge steps of `pages` each (`mergeFtsStep`) for up to MERGE_JOB_MS, instead of a batch
 * (`mergeOffThread`).
 */
export interface MergeJob {
  id: number;
  merge: number;
  ms: number;
}
export interface WriterReply {
  id: number;
  error: string | null;
  /** SQLite's code of the error (SQLITE_BUSY...), when SQLite raised it. */
  code?: string | undefined;
  /** A merge job stopped at its time with merging left to do. */
  more?: boolean;
}

interface Writer {
  worker: Worker;
  /** Batches (and merge jobs) handed to the worker and not yet acknowledged. */
  pending: Map<number, { resolve: (more: boolean) => void; reject: (e: Error) => void; merge?: boolean }>;
  nextId: number;
  /** Writers on this thread waiting for the worker to be idle (`writeTurn`). */
  waiters: (() => void)[];
  /** Waiters were let go in this turn of the event loop: the next batch waits for a later one. */
  released: boolean;
  stop: Int32Array;
  closed: Int32Array;
  /** The worker failed: writes stay on the daemon's thread. */
  failed: boolean;
  /** Batches the worker committed (tests and benchmarks). */
  batches: number;
  /** The worker's thread ended. */
  exited: boolean;
  /** Callers between `prepare()`'s start and their batch being pending (not idle meanwhile). */
  preparing: number;
  /** Ends an idle worker (`WRITER_IDLE_MS`); null while a batch is out. */
  idle: NodeJS.Timeout | null;
  /** Ended for being idle, not for a failure: the connection may start another. */
  retired: boolean;
  replies: MessagePort;
}

const writers = new WeakMap<CacheDb, Writer>();
/** Worker threads started and not yet ended, of every connection (tests). */
let threads = 0;
/** Connections whose writer cannot run (`:memory:`, no built worker, failed): not tried again. */
const without = new WeakSet<CacheDb>();
let holdMs = 0;
let walBytes = WRITER_WAL_BYTES;

/**
 * Where the built worker is: beside the chunk or bin in dist that runs this, or dist/ when running
 * from the sources (the tests: `npm test` builds first, turbo.json).
 */
function workerPath(): string | null {
  for (const rel of [
    "./cache/writer-worker.js",
    "../cache/writer-worker.js",
    "./writer-worker.js",
    "../../dist/cache/writer-worker.js",
  ]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  return null;
}

/** Whether first syncs write through the worker: on, unless CHAINMAIL_HEADER_WRITER=0 (A/B runs). */
const enabled = () => process.env.CHAINMAIL_HEADER_WRITER !== "0";

function start(db: CacheDb): Writer | null {
  if (db.memory || without.has(db) || !enabled()) return null;
  const path = workerPath();
  if (!path) {
    without.add(db);
    return null;
  }
  const stop = new SharedArrayBuffer(4);
  const closed = new SharedArrayBuffer(4);
  const { port1: replies, port2 } = new MessageChannel();
  const data: WriterData = {
    file: db.name,
    cacheSize: -WRITER_CACHE_KIB,
    busyTimeoutMs: WRITER_BUSY_MS,
    stop,
    closed,
    holdMs,
    walBytes,
    restartWaitMs: WRITER_RESTART_WAIT_MS,
    replies: port2,
  };
  const worker = new Worker(path, {
    workerData: data,
    transferList: [port2],
    resourceLimits: { maxYoungGenerationSizeMb: WRITER_YOUNG_MB },
  });
  worker.unref();
  replies.unref();
  const w: Writer = {
    worker,
    pending: new Map(),
    nextId: 1,
    waiters: [],
    released: false,
    stop: new Int32Array(stop),
    closed: new Int32Array(closed),
    failed: false,
    batches: 0,
    exited: false,
    preparing: 0,
    idle: null,
    retired: false,
    replies,
  };
  const acknowledged = (m: WriterReply) => {
    const job = w.pending.get(m.id);
    if (!job) return;
    w.pending.delete(m.id);
    keepAlive(w);
    // (a merge job is no batch)
    if (m.error === null) {
      if (!job.merge) w.batches++;
    }
    // A worker that failed a batch is not trusted with the next: writes go back to this thread
    else abandon(w);
    if (db.open) checkpointSoon(db);
    // The waiters first: their writes run before the batch's caller can hand over the next one
    if (w.pending.size === 0) {
      release(w);
      if (!w.failed) retireWhenIdle(db, w);
    }
    if (m.error === null) job.resolve(m.more === true);
    else
      job.reject(
        Object.assign(
          new Error(`${job.merge ? "merging the search index" : "writing headers to the cache"}: ${m.error}`),
          m.code === undefined ? {} : { code: m.code },
        ),
      );
  };
  replies.on("message", acknowledged);
  const fail = (err: Error) => {
    w.failed = true;
    // (a worker ended for being idle is no failure: the next first sync starts another)
    if (!w.retired) without.add(db);
    for (const job of w.pending.values()) job.reject(err);
    w.pending.clear();
    keepAlive(w);
    release(w);
  };
  worker.on("error", fail);
  threads++;
  // This connection's commits between two batches leave the copying to the checkpoint worker too
  writerBackstop(db, true);
  worker.on("exit", (code) => {
    threads--;
    w.exited = true;
    // (unless a later worker of this connection runs already: this one was retired when idle)
    const current = writers.get(db);
    if (!current || current === w) writerBackstop(db, false);
    fail(new Error(`the cache's header writer ended (exit code ${code})`));
  });
  writers.set(db, w);
  beforeClose(db, () => {
    if (w.idle) clearTimeout(w.idle);
    // Blocks once, when the cache closes (the daemon's stop): the worker finishes the transaction
    // it is in, writes nothing after (`stop`), and closes its connection before this one
    if (!w.exited) {
      abandon(w);
      Atomics.wait(w.closed, 0, 0, WRITER_CLOSE_WAIT_MS);
    }
    // What the worker said while this thread waited: a batch it committed resolves as committed
    for (let m = receiveMessageOnPort(replies); m; m = receiveMessageOnPort(replies))
      acknowledged(m.message as WriterReply);
    replies.close();
    w.failed = true;
    for (const job of w.pending.values()) job.reject(new Error("the cache was closed"));
    w.pending.clear();
    release(w);
  });
  return w;
}

/**
 * The replies' port keeps the process alive while a batch is with the worker (its caller awaits
 * it), and not otherwise (the worker itself never does, as the checkpoint worker).
 */
function keepAlive(w: Writer): void {
  if (w.pending.size > 0) w.replies.ref();
  else w.replies.unref();
}

/**
 * Ends the worker once it had no batch for WRITER_IDLE_MS: it closes its connection and its thread
 * exits, and the connection's next first sync starts a new one (`headerWriter`).
 */
function retireWhenIdle(db: CacheDb, w: Writer): void {
  if (w.idle) clearTimeout(w.idle);
  w.idle = setTimeout(() => {
    w.idle = null;
    if (w.pending.size > 0 || w.preparing > 0 || w.failed) return;
    w.retired = true;
    if (writers.get(db) === w) writers.delete(db);
    abandon(w);
  }, WRITER_IDLE_MS);
  w.idle.unref();
}

/** Tells the worker to write no more and close its connection (once). */
function abandon(w: Writer): void {
  if (Atomics.load(w.stop, 0) !== 0) return;
  w.failed = true;
  Atomics.store(w.stop, 0, 1);
  w.worker.postMessage("close");
}

function release(w: Writer): void {
  if (w.waiters.length === 0) return;
  w.released = true;
  for (const go of w.waiters.splice(0)) go();
  setImmediate(() => {
    w.released = false;
  });
}

/**
 * Resolves when this thread may write `db`: at once (undefined, nothing to await) when the header
 * writer has no batch, else once it acknowledged its batches. Write synchronously right after it
 * (the next batch is handed over only after the turn's microtasks ran).
 */
export function writeTurn(db: CacheDb): Promise<void> | undefined {
  const w = writers.get(db);
  if (!w || w.pending.size === 0) return undefined;
  return new Promise((resolve) => w.waiters.push(resolve));
}

/** The header writer of a connection, started on first use; null when its writes stay on this thread. */
export interface HeaderWriter {
  /**
   * Hands one batch of a folder's rows to the worker but its last piece, in pieces of POST_ROWS
   * (each made by `toRow` from `items` just before it is copied), with a background turn every
   * few milliseconds, while the worker may still write the batch before. `commit()` sends the last piece: the worker writes the batch in one transaction on
   * its connection, then the FTS merges it calls for, and the promise resolves once committed or
   * rejects with the worker's error (the batch then is not written: the transaction rolled back;
   * the worker writes no batch after one that failed). `cancel()` drops it. Batches are written
   * in the order handed over.
   */
  prepare<T = HeaderRow>(
    folderId: number,
    items: readonly T[],
    toRow?: (item: T) => HeaderRow,
  ): Promise<PreparedBatch>;
}

export interface PreparedBatch {
  commit(): Promise<void>;
  cancel(): void;
}

export function headerWriter(db: CacheDb): HeaderWriter | null {
  let w = writers.get(db) ?? null;
  if (w?.failed) return null;
  w ??= start(db);
  if (!w) return null;
  const writer = w;
  return {
    async prepare<T>(folderId: number, items: readonly T[], toRow?: (item: T) => HeaderRow) {
      // (not idle while it waits its turn: see retireWhenIdle)
      writer.preparing++;
      if (writer.idle) clearTimeout(writer.idle);
      writer.idle = null;
      try {
        // Writers waiting for a turn go first (they were let go in this turn of the loop)
        while (writer.released || writer.waiters.length > 0) {
          if (writer.waiters.length > 0 && writer.pending.size === 0) release(writer);
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        writer.preparing--;
      }
      if (writer.failed) throw new Error("the cache's header writer is closed");
      const id = writer.nextId++;
      const committed = new Promise<void>((resolve, reject) => {
        writer.pending.set(id, { resolve: () => resolve(), reject });
      });
      keepAlive(writer);
      // (a rejection nobody awaits yet, the writer failing meanwhile, is seen by commit's caller)
      committed.catch(() => undefined);
      const piece = (from: number) =>
        items.slice(from, from + POST_ROWS).map((item) => (toRow ? toRow(item) : (item as HeaderRow)));
      const post = (rows: HeaderRow[], last: boolean, cancel = false) => {
        const job: WriterJob = { id, folderId, rows, last, cancel };
        writer.worker.postMessage(job);
      };
      // Each piece's rows made and copied at once: they die young, where a batch of them kept
      // until it was handed over made the daemon's thread spend a fifth of its time collecting
      let since = performance.now();
      const lastFrom = Math.max(0, Math.ceil(items.length / POST_ROWS) - 1) * POST_ROWS;
      for (let i = 0; i < lastFrom; i += POST_ROWS) {
        // (a failed or closed writer has rejected the batch already)
        if (!writer.pending.has(id)) break;
        post(piece(i), false);
        if (performance.now() - since >= WRITE_SLICE_MS) {
          await backgroundTurn();
          since = performance.now();
        }
      }
      const lastRows = piece(lastFrom);
      return {
        commit: () => {
          if (writer.pending.has(id)) post(lastRows, true);
          return committed;
        },
        cancel: () => {
          const job = writer.pending.get(id);
          if (!job) return;
          post([], true, true);
          writer.pending.delete(id);
          keepAlive(writer);
          job.resolve(false);
          if (writer.pending.size === 0) {
            release(writer);
            if (!writer.failed) retireWhenIdle(db, writer);
          }
        },
      };
    },
  };
}

/** How long one merge job of `mergeOffThread` merges before the daemon's writers get a turn. */
export const MERGE_JOB_MS = 50;

/**
 * FTS5 merge steps of `pages` (`mergeFtsStep`: UPKEEP_PAGES, or negative for a full merge's) on
 * the header writer's thread for up to MERGE_JOB_MS, started for it when none runs: the body
 * backfill's merging (./fts.ts, `ftsUpkeep` and `compactFts`) was a third of the daemon thread's
 * time during a backfill, in steps a search waited behind; there the event loop stays free and
 * the thread runs below it (./background-thread.ts). Resolves with whether merging is left (the
 * job stopped at its time), or null at once when there is no such thread for this connection
 * (`:memory:`, switched off, failed): the caller merges on this thread. The daemon's writers wait
 * for the job as for a batch (`writeTurn`).
 */
export function mergeOffThread(db: CacheDb, pages: number): Promise<boolean> | null {
  let w = writers.get(db) ?? null;
  if (w?.failed) return null;
  w ??= start(db);
  if (!w || w.failed) return null;
  const writer = w;
  if (writer.idle) clearTimeout(writer.idle);
  writer.idle = null;
  const id = writer.nextId++;
  const done = new Promise<boolean>((resolve, reject) => {
    writer.pending.set(id, { resolve, reject, merge: true });
  });
  keepAlive(writer);
  const job: MergeJob = { id, merge: pages, ms: MERGE_JOB_MS };
  writer.worker.postMessage(job);
  return done;
}

/** Whether the header writer's thread of `db` runs (and takes jobs) now. */
export function writerRunning(db: CacheDb): boolean {
  const w = writers.get(db);
  return w !== undefined && !w.failed;
}

/** The header writers' threads running now, of every connection (tests). */
export const writerThreads = (): number => threads;

/** Batches the header writer of `db` committed (tests and benchmarks). */
export const writerBatches = (db: CacheDb): number => writers.get(db)?.batches ?? 0;

/** Tests: each worker transaction started from now on holds the write lock `ms` first. */
export function holdWriterTransactions(ms: number): void {
  holdMs = ms;
}

/** Tests: workers started from now on restart the WAL past `bytes` (WRITER_WAL_BYTES by default). */
export function writerWalBytes(bytes: number = WRITER_WAL_BYTES): void {
  walBytes = bytes;
}

/** `writeTurn` for a write that may await anyway: waits only when the header writer is busy. */
export async function takeTurn(db: CacheDb): Promise<void> {
  const t = writeTurn(db);
  if (t) await t;
}
