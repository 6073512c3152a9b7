// The header writer's thread (./writer.ts): its own connection to cache.db, writing the batches of a
// first sync in one transaction each (hundreds to a thousand messages) through the same batch write
// the daemon's thread uses (`headerBatch` in ./store.ts), then the FTS merges they call for, while
// the daemon's thread parses the next FETCH and answers searches (WAL: its reads see the last
// commit); and the merging a body backfill calls for (`MergeJob`, ./fts.ts `ftsUpkeep`). It runs
// below the daemon's thread (./background-thread.ts). Built as its own entry (tsup.config.ts):
// dist/cache/writer-worker.js.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import fs, { statSync } from "node:fs";
import os from "node:os";
import { BACKGROUND_NICE, lowerThreadPriority } from "./background-thread.js";
import { WAL_LIMIT_BYTES } from "./checkpoint.js";
import { mergeFtsStep } from "./fts.js";
import { configureConnection } from "./schema.js";
import { type HeaderRow, headerBatch } from "./store.js";
import type { MergeJob, WriterData, WriterJob, WriterReply } from "./writer.js";

/** How long `restartLongWal` sleeps between two tries while the checkpoint worker copies. */
const RESTART_RETRY_MS = 5;

// Below the daemon's thread, which answers searches meanwhile (./background-thread.ts)
lowerThreadPriority(fs, os, BACKGROUND_NICE);

const data = workerData as WriterData;
const port = parentPort;
if (!port) throw new Error("the header writer runs as a worker thread");
const replies = data.replies;
const stop = new Int32Array(data.stop);
const closed = new Int32Array(data.closed);

let db: Database.Database | null = null;
/** The pieces of the batches being handed over, by batch (./writer.ts, POST_ROWS). */
const parts = new Map<number, HeaderRow[][]>();

function open(): Database.Database {
  const c = new Database(data.file, { fileMustExist: true });
  // The daemon's settings (the counter triggers need recursive_triggers), a smaller page cache
  configureConnection(c, data.cacheSize);
  // It waits for the daemon's other writes (which take turns with it: ./writer.ts) and the REINDEX
  // worker's (./repack.ts), on its own thread, so a long wait holds nothing up
  c.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
  // Statement journals in memory (./slices.ts): nothing of this connection lives in `temp`
  c.pragma("temp_store = MEMORY");
  // No checkpoint in its commits: the checkpoint worker (./checkpoint.ts) copies the WAL on the
  // other core after each batch, and this thread restarts the log only once it passes
  // WRITER_WAL_BYTES (`restartLongWal`). At SQLite's default (1,000 pages) a batch at a million
  // messages (some 30 MiB of WAL) checkpointed in nearly every commit, here: a fifth of this
  // thread's time (perf), while the checkpoint worker found nothing left to copy
  c.pragma("wal_autocheckpoint = 0");
  c.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
  return c;
}

function write(folderId: number, rows: HeaderRow[]): void {
  db ??= open();
  const conn = db;
  const batch = headerBatch(conn, folderId);
  // IMMEDIATE: the write lock first (waiting for it here), so no commit of another connection can
  // come between this transaction's first read and its first write
  conn
    .transaction((rows: HeaderRow[]) => {
      if (data.holdMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, data.holdMs);
      batch.begin(rows);
      for (const row of rows) batch.write(row);
      batch.end();
    })
    .immediate(rows);
  // The merging FTS5's automerge would have done (off: ./fts.ts), each step its own transaction
  while (Atomics.load(stop, 0) === 0 && mergeFtsStep(conn)) {
    // (the steps run back to back: nothing on this thread waits for them)
  }
  if (Atomics.load(stop, 0) === 0) restartLongWal(conn);
}

/**
 * The WAL starts over only when a write transaction begins with every frame copied and no reader
 * in it, and the checkpoint worker's passive checkpoint (started when the daemon hears of a batch)
 * runs while this thread writes the next one: without this the WAL would grow for the whole sync
 * (2.4 GiB for 100,000 headers at a million, measured). So once the WAL file passes
 * WRITER_WAL_BYTES this thread copies what the worker has not (RESTART: also waits for readers
 * to leave the log, so the next transaction starts it over; journal_size_limit then cuts the file).
 * It holds the write lock meanwhile, while the daemon's writers wait for their turn anyway (the
 * batch is not yet acknowledged). Busy longer than `restartWaitMs` (1 s; a REINDEX, a long read) or
 * the cache closing: the next batch tries again.
 */
function restartLongWal(conn: Database.Database): void {
  let size = 0;
  try {
    size = statSync(`${data.file}-wal`).size;
  } catch {
    return;
  }
  if (size < data.walBytes) return;
  // SQLite answers busy at once, without the busy handler, while another connection checkpoints
  // (the worker, most of the time here): so this waits in steps for it, up to the limit
  const until = performance.now() + data.restartWaitMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  conn.pragma(`busy_timeout = ${data.restartWaitMs}`);
  try {
    for (;;) {
      const r = conn.pragma("wal_checkpoint(RESTART)") as { busy: number }[];
      if (r[0]?.busy !== 1 || performance.now() >= until || Atomics.load(stop, 0) !== 0) break;
      Atomics.wait(pause, 0, 0, RESTART_RETRY_MS);
    }
  } finally {
    conn.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
  }
}

/**
 * Merge steps of `job.merge` pages, each its own transaction, until nothing is left to merge or
 * `job.ms` passed (the daemon's writers, waiting for their turn, then get it). Whether merging
 * is left.
 */
function merge(job: MergeJob): boolean {
  db ??= open();
  const conn = db;
  const until = performance.now() + job.ms;
  let more = false;
  while (Atomics.load(stop, 0) === 0 && mergeFtsStep(conn, job.merge)) {
    if (performance.now() < until) continue;
    more = true;
    break;
  }
  if (Atomics.load(stop, 0) === 0) restartLongWal(conn);
  return more;
}

port.on("message", (m: WriterJob | MergeJob | "close") => {
  if (m === "close") {
    try {
      db?.close();
    } finally {
      Atomics.store(closed, 0, 1);
      Atomics.notify(closed, 0);
      replies.close();
      port.close();
    }
    return;
  }
  if ("merge" in m) {
    let reply: WriterReply;
    if (Atomics.load(stop, 0) !== 0) reply = { id: m.id, error: "the writer was stopped (the cache closed)" };
    else {
      try {
        reply = { id: m.id, error: null, more: merge(m) };
      } catch (e) {
        reply = { id: m.id, error: e instanceof Error ? e.message : String(e), code: sqliteCode(e) };
      }
    }
    replies.postMessage(reply);
    return;
  }
  const got = parts.get(m.id) ?? [];
  got.push(m.rows);
  parts.set(m.id, got);
  if (!m.last) return;
  parts.delete(m.id);
  if (m.cancel) return;
  const rows = got.length === 1 ? (got[0] as HeaderRow[]) : got.flat();
  let reply: WriterReply;
  if (Atomics.load(stop, 0) !== 0)
    reply = { id: m.id, error: "the writer was stopped (the cache closed, or a batch failed)" };
  else {
    try {
      write(m.folderId, rows);
      reply = { id: m.id, error: null };
    } catch (e) {
      reply = { id: m.id, error: e instanceof Error ? e.message : String(e), code: sqliteCode(e) };
    }
  }
  replies.postMessage(reply);
});

/** SQLite's code of a failed write (SQLITE_BUSY, SQLITE_FULL...), so the daemon names the cache, not the server. */
function sqliteCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
