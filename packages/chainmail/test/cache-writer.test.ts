// The header writer's thread (src/cache/writer.ts): a first sync's batches written on its own
// connection give the rows the daemon's thread writes; the daemon's other writers take turns with
// it without holding the event loop; close() waits for it. Real Dovecot, real cache files; the
// worker is the built dist/cache/writer-worker.js (`npm test` builds first).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache, searchCache, syncFolder } from "../src/cache/index.js";
import { writeInSlices } from "../src/cache/slices.js";
import { keptSubjectCount } from "../src/cache/subject-counts.js";
import { ensureFolder, headerRow } from "../src/cache/store.js";
import {
  headerWriter,
  holdWriterTransactions,
  WRITER_IDLE_MS,
  writerBatches,
  writerThreads,
  writerWalBytes,
} from "../src/cache/writer.js";
import { BACKSTOP_PAGES, WRITER_BACKSTOP_PAGES, backgroundCheckpoints } from "../src/cache/checkpoint.js";
import { parseQuery } from "../src/query/index.js";
import { generateCorpus } from "../src/testing/corpus.js";
import { mailboxMessage } from "../src/testing/mailbox.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";
import { type CacheEnv, USER, startCacheEnv } from "./support/cache-env.js";
import { lockTaken } from "./support/write-lock.js";

const A = "personal";
const NOW = new Date(Date.UTC(2026, 0, 15));
let env: CacheEnv;
let dir: string;
let written = 0;

beforeAll(async () => {
  env = await startCacheEnv();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-writer-"));
  // The corpus (encoded subjects, HTML-only mail, attachments, threads) and 600 generated messages
  const corpus = generateCorpus({ threads: 3, fillers: 6, hugeBytes: 1024 });
  written = corpus.length + 600;
  await env.dovecot.appendMessages(
    USER,
    "INBOX",
    [
      ...corpus.map((m) => m.raw),
      ...Array.from({ length: 600 }, (_, i) => mailboxMessage(i, 600, { now: NOW }).raw),
    ].map((raw) => ({ raw })),
  );
});
afterAll(async () => {
  await env.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every row a header write makes, in a form two caches can be compared by. */
function dump(db: CacheDb) {
  const all = (sql: string) => db.prepare(sql).all();
  return {
    messages: all("SELECT * FROM messages ORDER BY id"),
    meta: all("SELECT * FROM message_meta ORDER BY id"),
    addresses: all("SELECT * FROM message_addresses ORDER BY address, field, id"),
    counts: all("SELECT * FROM address_counts ORDER BY address, field, folder_id"),
    folders: all(
      "SELECT path, uidvalidity, uidnext, server_count, complete, cached_count, with_body, unread_count, flagged_count, attachment_count FROM folders ORDER BY path",
    ),
    searches: ["budget", "subject:invoice", "from:example.com", "has:attachment", "is:unread", ""].map((q) =>
      searchCache(db, parseQuery(q), { limit: 5000 }).rows.map((r) => r.uid),
    ),
    integrity: db.pragma("integrity_check", { simple: true }),
  };
}

/** Each subject word's kept count (src/cache/subject-counts.ts) beside the count its walk gives. */
function subjectCounts(db: CacheDb) {
  const walked = db.prepare("SELECT term, doc FROM vocab_subjects_rows ORDER BY term").all() as {
    term: string;
    doc: number;
  }[];
  return {
    walked,
    kept: walked.map(({ term }) => ({ term, doc: keptSubjectCount(db, term) })),
  };
}

async function syncInto(file: string, writer: boolean) {
  const was = process.env.CHAINMAIL_HEADER_WRITER;
  process.env.CHAINMAIL_HEADER_WRITER = writer ? "1" : "0";
  const db = openCache(file);
  try {
    const c = await env.client();
    const r = await syncFolder(db, c, A, "INBOX", { batchSize: 250, now: () => NOW.getTime() });
    await c.logout();
    return { db, r };
  } finally {
    process.env.CHAINMAIL_HEADER_WRITER = was;
  }
}

describe("the header writer's thread", () => {
  it("writes a first sync's batches with the rows the daemon's thread writes", async () => {
    const here = await syncInto(path.join(dir, "here.db"), false);
    const there = await syncInto(path.join(dir, "there.db"), true);
    expect(writerBatches(here.db)).toBe(0);
    // In batches of 250: one transaction each on the writer's connection
    expect(writerBatches(there.db)).toBe(Math.ceil(written / 250));
    expect(there.r).toEqual(here.r);
    const a = dump(here.db);
    const b = dump(there.db);
    expect(b.messages.length).toBe(written);
    expect(b.integrity).toBe("ok");
    expect(b).toEqual(a);
    // the kept subject word counts, which the worker's connection keeps in the same batch write
    const counts = subjectCounts(there.db);
    expect(counts.walked.length).toBeGreaterThan(50);
    expect(counts.kept).toEqual(counts.walked);
    expect(subjectCounts(here.db)).toEqual(counts);
    here.db.close();
    there.db.close();
  });

  it("lets a write of the daemon's thread wait for its turn without holding the event loop", async () => {
    holdWriterTransactions(150);
    const file = path.join(dir, "turns.db");
    const db = openCache(file);
    try {
      const folder = ensureFolder(db, A, "INBOX", "inbox");
      const writer = headerWriter(db);
      expect(writer).not.toBeNull();
      const rows = Array.from({ length: 50 }, (_, i) =>
        headerRow(folder, syncedMailboxMessage(i, 50, i + 1, NOW).msg),
      );
      const batch = (await writer?.prepare(folder.id, rows))?.commit();
      // The worker's transaction has the write lock (and holds it 150 ms)
      await lockTaken(file);
      let ticked = false;
      setTimeout(() => {
        ticked = true;
      }, 5);
      const seen: { ticked: boolean; cached: number }[] = [];
      // A write of this thread meanwhile (the backfill's, the watch's, eviction's go the same way):
      // waiting in SQLite's busy handler, it would start before the timer could fire
      await writeInSlices(db, [1], {
        begin: () =>
          seen.push({
            ticked,
            // the worker's batch, committed before this transaction began
            cached: (db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n,
          }),
        write: () => {
          db.prepare("UPDATE folders SET last_sync = 1 WHERE id = ?").run(folder.id);
        },
      });
      await batch;
      expect(seen).toEqual([{ ticked: true, cached: 50 }]);
    } finally {
      holdWriterTransactions(0);
      db.close();
    }
  });

  it("leaves a sync of a few messages in one batch on the daemon's thread (no thread started for them)", async () => {
    await (await env.client()).mailboxCreate("Few");
    await env.dovecot.appendMessages(
      USER,
      "Few",
      Array.from({ length: 5 }, (_, i) => ({ raw: mailboxMessage(i, 5, { now: NOW }).raw })),
    );
    const db = openCache(path.join(dir, "few.db"));
    try {
      const threads = writerThreads();
      const c = await env.client();
      const r = await syncFolder(db, c, A, "Few", { now: () => NOW.getTime() });
      await c.logout();
      expect(r.added).toBe(5);
      expect(writerBatches(db)).toBe(0);
      expect(writerThreads()).toBeLessThanOrEqual(threads);
    } finally {
      db.close();
    }
  });

  it("writes no batch after a progress callback closed the connection, as the daemon's thread does not", async () => {
    await (await env.client()).mailboxCreate("Cut");
    await env.dovecot.appendMessages(
      USER,
      "Cut",
      Array.from({ length: 9 }, (_, i) => ({ raw: mailboxMessage(i, 9, { now: NOW }).raw })),
    );
    // Each batch's transaction takes 100 ms: the next FETCH is answered long before it commits
    holdWriterTransactions(100);
    const db = openCache(path.join(dir, "cut.db"));
    try {
      const c = await env.client();
      await expect(
        syncFolder(db, c, A, "Cut", {
          batchSize: 3,
          onBatch: () => c.close(),
        }),
      ).rejects.toThrow(/closed/);
      expect((db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n).toBe(3);
      expect(writerBatches(db)).toBe(1);
    } finally {
      holdWriterTransactions(0);
      db.close();
    }
  });

  it("close() waits for the writer's transaction and its connection, and nothing writes after", async () => {
    holdWriterTransactions(150);
    const file = path.join(dir, "closing.db");
    const db = openCache(file);
    const folder = ensureFolder(db, A, "INBOX", "inbox");
    const rows = Array.from({ length: 40 }, (_, i) =>
      headerRow(folder, syncedMailboxMessage(i, 40, i + 1, NOW).msg),
    );
    const writer = headerWriter(db);
    holdWriterTransactions(0);
    const first = (await writer?.prepare(folder.id, rows.slice(0, 20)))?.commit();
    await lockTaken(file);
    // The first batch is in its transaction; a second is handed over, then the cache closes
    const second = (await writer?.prepare(folder.id, rows.slice(20)))?.commit();
    const outcomes = Promise.allSettled([first, second]);
    db.close();
    const [a, b] = await outcomes;
    // The daemon's connection closed last: SQLite removes the WAL with the last connection
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const check = openCache(file);
    const n = (check.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
    // Whole batches only: the one in its transaction when close() came, not the one after it
    expect(a?.status).toBe("fulfilled");
    expect(b?.status).toBe("rejected");
    expect(n).toBe(20);
    expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    check.close();
  });

  it("keeps the WAL under its bound while its commits leave the copying to the checkpoint worker", async () => {
    // The writer's commits do not checkpoint, and the checkpoint worker's passive checkpoints run
    // while the next batch is written (at most one per 100 ms), so the log never starts over by
    // itself: the writer restarts it once the file passes its bound (here 256 KiB)
    writerWalBytes(256 * 1024);
    const file = path.join(dir, "wal-bound.db");
    const db = openCache(file);
    const folder = ensureFolder(db, A, "INBOX", "inbox");
    const n = 1200;
    const rows = Array.from({ length: n }, (_, i) =>
      headerRow(folder, syncedMailboxMessage(i, n, i + 1, NOW).msg),
    );
    const walSize = () => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);
    try {
      const writer = headerWriter(db);
      writerWalBytes();
      let largest = 0;
      let largestBatch = 0;
      let before = walSize();
      // Pipelined as the sync hands batches over: the next one is prepared while one is written
      let writing: Promise<void> | null = null;
      for (let i = 0; i < n; i += 50) {
        const batch = await writer?.prepare(folder.id, rows.slice(i, i + 50));
        if (writing) await writing;
        const size = walSize();
        largest = Math.max(largest, size);
        largestBatch = Math.max(largestBatch, size - before);
        before = size;
        writing = batch?.commit() ?? null;
      }
      await writing;
      largest = Math.max(largest, walSize());
      expect(writerBatches(db)).toBe(n / 50);
      expect((db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n).toBe(n);
      // The checkpoint worker copied (what the restarts left was the rest)
      expect(backgroundCheckpoints(db)).toBeGreaterThan(0);
      // Without the restarts it held every batch (n / 50 of them); with them, the bound and a
      // batch or two beyond it
      expect(largestBatch).toBeGreaterThan(0);
      expect(largest).toBeLessThanOrEqual(256 * 1024 + 3 * largestBatch);
      expect(largest).toBeLessThan((n / 50 / 3) * largestBatch);
    } finally {
      writerWalBytes();
      db.close();
    }
    const check = openCache(file);
    expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    check.close();
  });

  it("ends its thread once idle, and a later first sync starts another", async () => {
    const file = path.join(dir, "idle.db");
    const db = openCache(file);
    const folder = ensureFolder(db, A, "INBOX", "inbox");
    const rows = Array.from({ length: 40 }, (_, i) =>
      headerRow(folder, syncedMailboxMessage(i, 40, i + 1, NOW).msg),
    );
    // (the threads of the caches the tests before closed end meanwhile)
    const settle = async (n: number, ms: number) => {
      const until = Date.now() + ms;
      while (writerThreads() > n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    };
    await settle(0, 2_000);
    const before = writerThreads();
    expect(before).toBe(0);
    const backstop = () => db.pragma("wal_autocheckpoint", { simple: true });
    expect(backstop()).toBe(BACKSTOP_PAGES);
    await (await headerWriter(db)?.prepare(folder.id, rows.slice(0, 20)))?.commit();
    expect(writerBatches(db)).toBe(1);
    expect(writerThreads()).toBe(before + 1);
    // While it runs, the daemon's commits leave the batches' WAL to the checkpoint worker too
    expect(backstop()).toBe(WRITER_BACKSTOP_PAGES);
    // Idle: the thread ends (its heap and its connection's memory with it)
    await settle(before, WRITER_IDLE_MS + 5_000);
    expect(writerThreads()).toBe(before);
    expect(backstop()).toBe(BACKSTOP_PAGES);
    // The next batch goes to a new thread, not back to the daemon's
    await (await headerWriter(db)?.prepare(folder.id, rows.slice(20)))?.commit();
    expect(writerBatches(db)).toBe(1);
    expect(writerThreads()).toBe(before + 1);
    expect((db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n).toBe(40);
    db.close();
    await settle(before, 2_000);
    expect(writerThreads()).toBe(before);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });
});
