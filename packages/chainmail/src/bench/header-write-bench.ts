/**
 * Where the header sync's write CPU goes (`npm run bench:header-write`): N mailbox-sized messages
 * (src/testing/mailbox.ts) fetched once from a throwaway Dovecot with the sync's own lean FETCH,
 * then written into fresh cache files by the sync's own write path (`writeInSlices` over
 * `upsertMessage`, `runFtsWrites` and the closing `compactFts`) with parts of it switched off, one
 * variant after another in this process. Prints this process's CPU time per message for each
 * (the checkpoint worker's thread included). BENCH_MESSAGES (default 20,000) sets the size;
 * BENCH_HEADERS=FILE keeps the fetched messages there between runs (v8 serialization);
 * BENCH_VARIANTS=0,3,12 runs only those; BENCH_TXN=K writes transactions of K messages each instead
 * of writeInSlices' timed ones, so variants compare at the same transaction size (a timed slice
 * takes more messages when they cost less, and fewer commits cost less again: the parts of the
 * write do not add up otherwise). CPU time on a loaded machine varies by 10% or so from run to run.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { RawFetch, type SyncedMessage, headerItems } from "../imap/raw-fetch.js";
import { checkpointSoon } from "../cache/checkpoint.js";
import { compactFts, ftsUpkeep } from "../cache/fts.js";
import { type CacheDb, openCache } from "../cache/schema.js";
import { writeInSlices } from "../cache/slices.js";
import {
  type CachedRow,
  type FtsWrite,
  cachedRows,
  ensureFolder,
  runFtsWrites,
  upsertMessage,
} from "../cache/store.js";
import { startDovecot } from "../testing/dovecot.js";
import { benchImap, line, load } from "./harness.js";
import { writeMaildir } from "./maildir.js";

/** BENCH_TXN=K: transactions of K messages each instead of writeInSlices' timed ones. */
const FIXED = Number(process.env.BENCH_TXN ?? 0);
const N = Number(process.env.BENCH_MESSAGES ?? 20_000);

async function fetchAll(): Promise<SyncedMessage[]> {
  const file = process.env.BENCH_HEADERS;
  if (file && fs.existsSync(file)) {
    const msgs = v8.deserialize(fs.readFileSync(file)) as SyncedMessage[];
    if (msgs.length === N) return msgs;
  }
  const dv = await startDovecot({ users: [{ name: "bench", password: "bench-pw" }] });
  try {
    const client = benchImap(dv);
    await client.connect();
    await client.mailboxOpen("INBOX");
    const maildir = path.join(dv.dir, "home", "bench", "Maildir");
    writeMaildir(
      path.join(maildir, "cur"),
      fs.statSync(maildir),
      0,
      N,
      N,
      new Date(new Date().toISOString().slice(0, 10)),
    );
    dv.doveadm(["force-resync", "-u", "bench", "INBOX"]);
    await client.mailboxClose();
    const lock = await client.getMailboxLock("INBOX", { readOnly: true });
    const out: SyncedMessage[] = [];
    try {
      const raw = RawFetch.open(client);
      if (!raw) throw new Error("the lean FETCH cannot read this connection");
      // Newest batch first, as the sync fetches them
      for (let hi = N; hi > 0; hi -= 1000)
        out.push(...(await raw.fetch(`${Math.max(1, hi - 999)}:${hi}`, headerItems(client, false))));
      raw.close();
    } finally {
      lock.release();
    }
    await client.logout();
    if (file) fs.writeFileSync(file, v8.serialize(out));
    return out;
  } finally {
    await dv.stop();
  }
}

interface Variant {
  name: string;
  /** SQL run on the fresh cache before the write. */
  sql?: string;
  /** What the batch's end writes: the word index, the subjects' index, the address rows. */
  fts?: boolean;
  subject?: boolean;
  addresses?: boolean;
  sliceMs?: number;
}

async function writeAll(
  msgs: SyncedMessage[],
  v: Variant,
): Promise<{ cpu: number; wall: number; compact: number; commits: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-write-bench-"));
  const db: CacheDb = openCache(path.join(dir, "cache.db"));
  try {
    const folder = ensureFolder(db, "bench", "INBOX", "inbox");
    if (v.sql) db.exec(v.sql);
    let commits = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < msgs.length; i += 1000) {
      const batch = msgs.slice(i, i + 1000);
      let cached = new Map<number, CachedRow>();
      const fts: FtsWrite[] = [];
      const hooks = {
        begin: (from: number, to: number) => {
          let lo = Number.POSITIVE_INFINITY;
          let hi = 0;
          for (let k = from; k < to; k++) {
            const uid = (batch[k] as SyncedMessage).uid;
            if (uid < lo) lo = uid;
            if (uid > hi) hi = uid;
          }
          cached = cachedRows(db, folder.id, lo, hi);
        },
        write: (m: SyncedMessage) => {
          upsertMessage(db, folder, m, cached.get(m.uid) ?? null, fts);
        },
        end: () => {
          commits++;
          for (const w of fts) {
            if (v.fts === false) w.write = () => undefined;
            if (v.subject === false) w.subject = undefined;
            if (v.addresses === false) w.addresses = undefined;
          }
          runFtsWrites(fts);
        },
      };
      if (FIXED) {
        // Transactions of FIXED messages each, as writeInSlices runs them otherwise
        // Statement journals in memory, as writeInSlices keeps them (src/cache/slices.ts)
        db.pragma("temp_store = MEMORY");
        for (let k = 0; k < batch.length; k += FIXED) {
          db.transaction(() => {
            hooks.begin(k, Math.min(k + FIXED, batch.length));
            for (const m of batch.slice(k, k + FIXED)) hooks.write(m);
            hooks.end();
          })();
          checkpointSoon(db);
          await ftsUpkeep(db);
        }
      } else await writeInSlices(db, batch, hooks, v.sliceMs);
    }
    const t1 = performance.now();
    const c1 = process.cpuUsage(c0);
    await compactFts(db);
    const c2 = process.cpuUsage(c0);
    return {
      cpu: (c1.user + c1.system) / msgs.length,
      wall: (t1 - t0) / 1000,
      compact: (c2.user + c2.system - c1.user - c1.system) / msgs.length,
      commits,
    };
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const DROP_COUNTERS = "DROP TRIGGER messages_count_ins;";
const DROP_ARRIVAL = "DROP TRIGGER messages_arrival_ins;";
const DROP_INDEXES = (names: string[]) => names.map((n) => `DROP INDEX ${n};`).join("\n");

const VARIANTS: Variant[] = [
  { name: "as the sync writes" },
  { name: "no messages_fts rows", fts: false },
  { name: "no subjects_fts rows", subject: false },
  { name: "no address rows/counts", addresses: false },
  { name: "no folder counter trigger", sql: DROP_COUNTERS },
  { name: "no arrival-id trigger", sql: DROP_ARRIVAL },
  { name: "no messages_newest", sql: DROP_INDEXES(["messages_newest"]) },
  {
    name: "no unread/flagged/attach",
    sql: DROP_INDEXES(["messages_unread", "messages_flagged", "messages_attach"]),
  },
  { name: "no messages_size", sql: DROP_INDEXES(["messages_size"]) },
  { name: "no messages_thread", sql: DROP_INDEXES(["messages_thread"]) },
  { name: "no messages_body", sql: DROP_INDEXES(["messages_body"]) },
  { name: "no message_meta_msgid", sql: DROP_INDEXES(["message_meta_msgid"]) },
  {
    name: "nothing but the two rows",
    fts: false,
    subject: false,
    addresses: false,
    sql: `${DROP_COUNTERS}${DROP_ARRIVAL}${DROP_INDEXES(["messages_newest", "messages_unread", "messages_flagged", "messages_attach", "messages_size", "messages_thread", "messages_body", "message_meta_msgid"])}`,
  },
  { name: "no insert trigger on messages", sql: DROP_COUNTERS + DROP_ARRIVAL },
  { name: "no FTS rows (neither index)", fts: false, subject: false },
  { name: "slices of 16 ms", sliceMs: 16 },
  { name: "slices of 64 ms", sliceMs: 64 },
];

async function main() {
  const msgs = await fetchAll();
  const only = process.env.BENCH_VARIANTS?.split(",").map(Number);
  line(`header write benchmark: ${msgs.length} messages; ${load()} on ${os.cpus().length} cores`);
  line("variant | CPU µs/message (write) | + final merge | transactions | wall s");
  for (const [k, v] of VARIANTS.entries()) {
    if (only && !only.includes(k)) continue;
    const r = await writeAll(msgs, v);
    line(
      `${k} ${v.name} | ${r.cpu.toFixed(0)} | ${r.compact.toFixed(0)} | ${r.commits} | ${r.wall.toFixed(1)} (${load()})`,
    );
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
