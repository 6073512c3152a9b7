/**
 * A first sync's header write at a million messages, without syncing a million
 * (`npm run bench:writer-scale`, not run by CI): copies a large cache (BENCH_CACHE, read only: the
 * copy is written; `BENCH_SCALE_KEEP_CACHE=DIR npm run bench:scale` keeps one) to BENCH_DIR, adds a new folder and
 * writes BENCH_MESSAGES (default 100,000) fetched headers into it through the header writer's
 * thread (./../cache/writer.ts), the way the sync hands them over (a batch of 1,000 prepared while
 * the previous one is written). The headers are BENCH_HEADERS (the file `BENCH_HEADERS=FILE npm run
 * bench:header-write` keeps), each round with new UIDs and Message-IDs.
 * Prints wall headers/s, CPU per message of each thread (/proc/self/task/<tid>/schedstat: this
 * thread, the header writer's, the checkpoint worker's), the WAL file's largest size (polled every
 * 20 ms) and the process's VmHWM. Needs the build (`dist/cache/writer-worker.js`).
 */
import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import { openCache } from "../cache/schema.js";
import { ensureFolder, headerRow } from "../cache/store.js";
import { type PreparedBatch, headerWriter, writerBatches } from "../cache/writer.js";
import type { SyncedMessage } from "../imap/raw-fetch.js";
import { line, load } from "./harness.js";

const SOURCE = process.env.BENCH_CACHE ?? "";
const HEADERS = process.env.BENCH_HEADERS ?? "";
const DIR = process.env.BENCH_DIR ?? "/tmp/chainmail-writer-scale";
const N = Number(process.env.BENCH_MESSAGES ?? 100_000);
const BATCH = 1000;

/** Run time (ns) of each thread of this process. */
function threadTimes(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync("/proc/self/task")) {
    try {
      const ns = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      out.set(tid, ns);
    } catch {
      // (a thread that ended meanwhile)
    }
  }
  return out;
}

function vmHwm(): string {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return m ? `${Math.round(Number(m[1]) / 1024)} MB` : "?";
}

async function main() {
  if (!SOURCE || !HEADERS || !fs.existsSync(SOURCE) || !fs.existsSync(HEADERS)) {
    line(
      "bench:writer-scale needs BENCH_CACHE (a large cache.db: `BENCH_SCALE_KEEP_CACHE=DIR npm run bench:scale` keeps one in DIR) and BENCH_HEADERS (fetched headers: `BENCH_HEADERS=FILE npm run bench:header-write` keeps them in FILE)",
    );
    process.exitCode = 2;
    return;
  }
  const msgs = v8.deserialize(fs.readFileSync(HEADERS)) as SyncedMessage[];
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const file = path.join(DIR, "cache.db");
  fs.copyFileSync(SOURCE, file);
  const db = openCache(file);
  const account = (db.prepare("SELECT account FROM folders LIMIT 1").pluck().get() as string) ?? "bench";
  const folder = ensureFolder(db, account, `writer-scale-${Date.now()}`, null);
  const cached = (db.prepare("SELECT count(*) FROM messages").pluck().get() as number) ?? 0;
  line(
    `header writer at scale: ${N} messages into a copy of ${SOURCE} (${cached} cached); ${load()}; CHAINMAIL_HEADER_WRITER=${process.env.CHAINMAIL_HEADER_WRITER ?? "(on)"}`,
  );
  const writer = headerWriter(db);
  if (!writer) throw new Error("no header writer (build first: dist/cache/writer-worker.js)");

  // The n-th message: the n mod 20,000-th fetched one, with its own UID and Message-ID
  const message = (n: number): SyncedMessage => {
    const m = msgs[n % msgs.length] as SyncedMessage;
    const round = Math.floor(n / msgs.length);
    if (round === 0) return { ...m, uid: n + 1 };
    const env = m.envelope
      ? { ...m.envelope, messageId: `<r${round}.${m.envelope.messageId ?? n}>` }
      : m.envelope;
    return { ...m, uid: n + 1, envelope: env };
  };

  const wal = `${file}-wal`;
  let walMax = 0;
  const poll = setInterval(() => {
    try {
      walMax = Math.max(walMax, fs.statSync(wal).size);
    } catch {
      // (no WAL file at this moment)
    }
  }, 20);
  const before = threadTimes();
  const mainTid = String(process.pid);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let writing: Promise<void> | null = null;
  // Newest first, as the sync fetches
  for (let hi = N; hi > 0; hi -= BATCH) {
    const items: SyncedMessage[] = [];
    for (let n = Math.max(0, hi - BATCH); n < hi; n++) items.push(message(n));
    const batch: PreparedBatch = await writer.prepare(folder.id, items, (m) => headerRow(folder, m));
    if (writing) await writing;
    writing = batch.commit();
  }
  if (writing) await writing;
  const wall = (performance.now() - t0) / 1000;
  const c1 = process.cpuUsage(c0);
  const after = threadTimes();
  clearInterval(poll);
  walMax = Math.max(walMax, fs.existsSync(wal) ? fs.statSync(wal).size : 0);
  const us = (ns: number) => (ns / 1000 / N).toFixed(1);
  line(`batches ${writerBatches(db)}; wall ${wall.toFixed(1)} s, ${Math.round(N / wall)} headers/s`);
  line(`process CPU ${((c1.user + c1.system) / N).toFixed(1)} µs/message`);
  const grown = [...after]
    .map(([tid, ns]) => ({
      tid,
      ns: ns - (before.get(tid) ?? 0),
      comm: fs.existsSync(`/proc/self/task/${tid}/comm`)
        ? fs.readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim()
        : "?",
    }))
    .filter((t) => t.ns / 1000 / N >= 1)
    .sort((a, b) => b.ns - a.ns);
  for (const t of grown)
    line(`thread ${t.tid}${t.tid === mainTid ? " (main)" : ""} ${t.comm}: ${us(t.ns)} µs/message`);
  line(`WAL file largest ${(walMax / 1048576).toFixed(1)} MiB; VmHWM ${vmHwm()}; ${load()}`);
  db.close();
  fs.rmSync(DIR, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
