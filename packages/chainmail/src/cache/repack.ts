// Indexes rebuilt full after a bulk load (issue 34: cache.db at most a fifth of the Maildir).
//
// A first sync writes the headers newest batch first, each batch's rows in ascending order, so
// every batch is inserted just before the previous one: the b-tree pages where it lands are split
// again and again and left part empty. The body backfill moves each row of `messages_body` from
// state 0 to 1 the same way. At 100,000 messages the indexes of `messages` and `message_meta` and
// the address tables (WITHOUT ROWID: their rows are their primary key's b-tree) held 7.3 MiB of
// unused space (dbstat, kept cache of the scale run); REINDEX rebuilds each from a sorted pass,
// every page full. The rowid tables cannot be rebuilt that way (only VACUUM rewrites them, 2.3 s at
// 100,000 with the daemon answering nothing), so they stay as written.
//
// After a bulk load the date-ordered indexes stay full: new mail is the newest and lands at their
// right edge, where SQLite appends. The others (thread key, Message-ID, size, addresses) take later
// mail in the middle and settle back towards the usual two-thirds full over many inserts.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { checkpointSoon } from "./checkpoint.js";
import { releaseFreePages } from "./fts.js";
import { backgroundTurn } from "./priority.js";
import { takeTurn } from "./writer.js";
import type { CacheDb } from "./schema.js";
import { beforeClose } from "./before-close.js";

/**
 * Messages a pass must add for its indexes to be rebuilt: a first sync or a large catch-up. Below
 * that the split pages are few and not worth rewriting every index.
 */
export const REPACK_MIN_ADDED = 10_000;

/**
 * A cache holding more messages than this keeps its pages as written. Each REINDEX holds the
 * write lock until it is done, and a write of the daemon's own connection meanwhile (the watch's
 * new mail, another account's pass) waits for it synchronously, the daemon answering nothing: the
 * address table's rebuild took 0.6 s at 100,000 messages on a loaded core and grows with the
 * cache (about 1.5 s here). Above it the unused space is a smaller share of a cache that large
 * (at 1,000,000 messages cache.db measured 19.4% of the Maildir without the rebuild).
 */
export const REPACK_MAX_MESSAGES = 250_000;

/** The tables written per message whose b-trees REINDEX rebuilds, and their indexes. */
function repackTargets(db: CacheDb): string[] {
  return db
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('messages', 'message_meta')
       UNION ALL SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('message_addresses', 'address_counts')
       ORDER BY name`,
    )
    .pluck()
    .all() as string[];
}

const reindex = (name: string) => `REINDEX "${name.replaceAll('"', '""')}"`;

// A REINDEX is one statement (0.6 s for the address table at 100,000 messages on a loaded core, ten
// times that at a million): run on the daemon's thread, no search would be answered meanwhile. A
// worker with its own connection writes the new b-trees while the daemon's connection goes on
// reading the committed ones (WAL: readers never wait for the writer). CommonJS, as `eval` workers
// are. It says when it starts each one and when it is done.
//
// The cache's close() stops it and waits for its connection to close (flags[STOP], flags[CLOSED]),
// as it waits for the checkpoint worker: the daemon's connection must close last, since the last
// connection to close removes the WAL and the shared-memory file, and a worker still writing after
// close() would race with whatever follows (a restart, the directory removed).
const STOP = 0;
const CLOSED = 1;
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.sqlite);
const flags = new Int32Array(workerData.flags);
let db = null;
try {
  db = new Database(workerData.file, { fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  for (const sql of workerData.statements) {
    if (Atomics.load(flags, ${STOP}) === 1) throw new Error("stopped: the cache is closing");
    parentPort.postMessage({ started: sql });
    db.exec(sql);
  }
  parentPort.postMessage({ error: null });
} catch (e) {
  parentPort.postMessage({ error: String(e) });
} finally {
  try {
    db?.close();
  } finally {
    Atomics.store(flags, ${CLOSED}, 1);
    Atomics.notify(flags, ${CLOSED});
  }
}
`;
/**
 * How long the cache's close() waits for a running rebuild to finish its statement and close its
 * connection (as long as for the checkpoint worker): a REINDEX cannot be interrupted, and one takes
 * 0.6-1.5 s at the sizes rebuilt (REPACK_MAX_MESSAGES).
 */
const CLOSE_WAIT_MS = 2_000;

/** The flags of each rebuild running on a connection, for its close() to stop and wait for. */
const running = new WeakMap<CacheDb, Set<Int32Array>>();

/** Makes db.close() stop the connection's running rebuilds and wait (bounded) for them; once. */
function waitOnClose(db: CacheDb): Set<Int32Array> {
  const known = running.get(db);
  if (known) return known;
  const live = new Set<Int32Array>();
  running.set(db, live);
  beforeClose(db, () => {
    for (const flags of live) Atomics.store(flags, STOP, 1);
    // Blocks at most CLOSE_WAIT_MS in all, once, when the cache closes (the daemon's stop)
    const until = performance.now() + CLOSE_WAIT_MS;
    for (const flags of live) {
      const left = until - performance.now();
      if (left > 0) Atomics.wait(flags, CLOSED, 0, left);
    }
  });
  return live;
}

function inWorker(db: CacheDb, statements: string[], onStart?: (sql: string) => void): Promise<void> {
  const flags = new Int32Array(new SharedArrayBuffer(8));
  const live = waitOnClose(db);
  live.add(flags);
  return new Promise<void>((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        file: db.name,
        statements,
        sqlite: createRequire(import.meta.url).resolve("better-sqlite3"),
        flags: flags.buffer,
      },
    });
    worker.on("message", (m: { started?: string; error?: string | null }) => {
      if (m.started !== undefined) onStart?.(m.started);
      else if (m.error === null) resolve();
      else reject(new Error(`rebuilding the cache's indexes: ${m.error}`));
    });
    worker.on("error", reject);
    // (after its last message this changes nothing: a settled promise stays as it is)
    worker.on("exit", (code) => reject(new Error(`the index rebuild's worker ended (exit code ${code})`)));
  }).finally(() => live.delete(flags));
}

/**
 * Rebuilds every index of `messages` and `message_meta` and the two address tables, in a worker
 * thread for a cache file (`:memory:` on this thread, each after a background turn), then gives
 * the freed pages back to the file system (a cache created with incremental auto-vacuum; an older
 * one keeps them for its next writes). A write of this connection meanwhile waits for the
 * statement the worker is running (on timers, ./busy.ts). Nothing is rebuilt in a cache of more than
 * REPACK_MAX_MESSAGES messages. Returns what it rebuilt; `onStart` hears of each
 * statement as it starts (tests).
 */
export async function repackIndexes(
  db: CacheDb,
  onStart?: (sql: string) => void,
  maxMessages = REPACK_MAX_MESSAGES,
): Promise<string[]> {
  const held = (db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
  if (held > maxMessages) return [];
  const names = repackTargets(db);
  const statements = names.map(reindex);
  if (db.memory) {
    for (const sql of statements) {
      await backgroundTurn();
      onStart?.(sql);
      db.exec(sql);
    }
  } else {
    // Not while the header writer's thread writes (./writer.ts): a batch handed to it meanwhile
    // waits for the REINDEX on that thread, and this thread's writes wait for both
    await takeTurn(db);
    await inWorker(db, statements, onStart);
    checkpointSoon(db);
  }
  await releaseFreePages(db);
  return names;
}
