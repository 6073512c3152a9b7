// The header writer's thread (./writer.ts): its own connection to cache.db, writing the batches of a
// first sync in one transaction each (hundreds to a thousand messages) through the same batch write
// the daemon's thread uses (`headerBatch` in ./store.ts), then the FTS merges they call for, while
// the daemon's thread parses the next FETCH and answers searches (WAL: its reads see the last
// commit). Built as its own entry (tsup.config.ts): dist/cache/writer-worker.js.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { WAL_LIMIT_BYTES } from "./checkpoint.js";
import { mergeFtsStep } from "./fts.js";
import { configureConnection } from "./schema.js";
import { type HeaderRow, headerBatch } from "./store.js";
import type { WriterData, WriterJob, WriterReply } from "./writer.js";

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
  // Its commits checkpoint (SQLite's default, 1,000 pages), on this thread: a batch of 1,000
  // headers adds some 3,600 pages to the WAL (3.6 a message at 150 a transaction, ../README.md),
  // and should the checkpoint worker fall behind, the WAL would pass the daemon connection's
  // backstop (./checkpoint.ts), whose next commit copies it all with the event loop held
  // (reasoned: no such commit was caught in a profile, the long pauses there were collections)
  c.pragma("wal_autocheckpoint = 1000");
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
}

port.on("message", (m: WriterJob | "close") => {
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
      reply = { id: m.id, error: e instanceof Error ? e.message : String(e) };
    }
  }
  replies.postMessage(reply);
});
