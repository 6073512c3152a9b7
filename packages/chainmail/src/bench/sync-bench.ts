/**
 * The sync benchmark (`npm run bench:sync`): N mailbox-sized messages (src/testing/mailbox.ts) in a
 * throwaway Dovecot's Maildir, then the initial header sync and the body backfill, the daemon's own
 * code over a local IMAP, timed and with this process's CPU time per message (the figure to judge a
 * change by on a shared machine: wall time also counts Dovecot and the other engineers' work).
 * BENCH_MESSAGES (default 10,000) sets the size; run it under `node --cpu-prof` to see where the
 * time goes. `BENCH_PRIME=1` lets Dovecot read every message once first, so the sync's wall time
 * shows chainmail rather than Dovecot's first parse of each file. BENCH_PROFILE=DIR writes a CPU
 * profile of each phase there. CHAINMAIL_HEADER_WRITER=0 writes the headers on the daemon's thread
 * (../cache/writer.ts), for a run of the old path beside the new.
 */
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import { monitorEventLoopDelay } from "node:perf_hooks";
import os from "node:os";
import path from "node:path";
import { ImapFlow } from "imapflow";
import { type CacheDb, backfillBodies, compactFts, openCache, syncFolder } from "../cache/index.js";
import { startDovecot } from "../testing/dovecot.js";
import { writeMaildir } from "./maildir.js";
import { writerBatches } from "../cache/writer.js";

const N = Number(process.env.BENCH_MESSAGES ?? 10_000);
const load = () =>
  `load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`;
const line = (s: string) => process.stdout.write(`${s}\n`);

const ftsSegments = (db: CacheDb) =>
  (db.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;
const PROFILE_DIR = process.env.BENCH_PROFILE;

/**
 * Wall seconds and this process's CPU seconds of `f`; with BENCH_PROFILE=DIR also a CPU profile of
 * just this phase (DIR/<name>.cpuprofile, for Chrome DevTools or speedscope).
 */
async function measure<T>(
  name: string,
  f: () => Promise<T>,
): Promise<{ value: T; wall: number; cpu: number; lag: string }> {
  const session = PROFILE_DIR ? new Session() : null;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  // How long the event loop was held up: a search the daemon answers meanwhile waits that long
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const c = process.cpuUsage();
  const t = performance.now();
  const value = await f();
  const used = process.cpuUsage(c);
  delay.disable();
  const lag = `event loop delay p95 ${(delay.percentile(95) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(0)} ms`;
  if (session && PROFILE_DIR) {
    const { profile } = await session.post("Profiler.stop");
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
    fs.writeFileSync(path.join(PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
  return { value, wall: (performance.now() - t) / 1000, cpu: (used.user + used.system) / 1e6, lag };
}

async function main() {
  const dv = await startDovecot({ users: [{ name: "bench", password: "bench-pw" }] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-sync-bench-"));
  const imap = () =>
    new ImapFlow({
      host: dv.host,
      port: dv.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: "bench", pass: "bench-pw" },
      logger: false,
    });
  try {
    line(`chainmail sync benchmark: ${N} messages; ${load()} on ${os.cpus().length} cores`);
    const first = imap();
    await first.connect();
    await first.mailboxOpen("INBOX");
    await first.logout();
    const maildir = path.join(dv.dir, "home", "bench", "Maildir");
    const now = new Date(new Date().toISOString().slice(0, 10));
    writeMaildir(path.join(maildir, "cur"), fs.statSync(maildir), 0, N, N, now);
    dv.doveadm(["force-resync", "-u", "bench", "INBOX"]);
    if (process.env.BENCH_PRIME === "1") {
      const p = await measure("prime", async () =>
        dv.doveadm(["fetch", "-u", "bench", "imap.envelope imap.bodystructure", "mailbox", "INBOX", "all"]),
      );
      line(`dovecot priming (doveadm fetch): ${p.wall.toFixed(1)} s`);
    }
    const db = openCache(path.join(dir, "cache.db"));
    const client = imap();
    await client.connect();
    const s = await measure("sync", () => syncFolder(db, client, "bench", "INBOX", { role: "inbox" }));
    line(
      `  FTS segments after the header sync: ${ftsSegments(db)}; batches written by the header writer's thread: ${writerBatches(db)}`,
    );
    line(
      `header sync: ${s.value.added} in ${s.wall.toFixed(2)} s = ${Math.round(s.value.added / s.wall)} headers/s; chainmail CPU ${((s.cpu * 1e6) / N).toFixed(0)} µs/message; ${s.lag} (${load()})`,
    );
    const b = await measure("backfill", async () => {
      let fetched = 0;
      for (;;) {
        const r = await backfillBodies(db, client, "bench", "INBOX", {
          dailyBudgetBytes: 10 * 1024 ** 3,
          compact: false,
        });
        fetched += r.fetched;
        if (r.remaining === 0 || r.fetched === 0) break;
      }
      line(`  FTS segments before the final merge: ${ftsSegments(db)}`);
      await compactFts(db);
      return fetched;
    });
    line(
      `body backfill: ${b.value} in ${b.wall.toFixed(2)} s = ${Math.round(b.value / b.wall)} bodies/s; chainmail CPU ${((b.cpu * 1e6) / N).toFixed(0)} µs/message; ${b.lag} (${load()})`,
    );

    await client.logout();
    db.close();
  } finally {
    await dv.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
