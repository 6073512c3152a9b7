/**
 * The user's benchmark (`npm run bench`): N mailbox-sized messages (src/testing/mailbox.ts; default
 * 100,000, about 1.6 GiB) in a throwaway Dovecot's Maildir, then
 *   - initial header sync (headers/s) and body backfill, the daemon's own code over a local IMAP,
 *   - per query, p50/p95 of `search` (limit 25, and count_only) through `chainmail mcp` over stdio
 *     (the built bin, which calls the daemon over its socket), through the socket alone, and
 *     in-process (the daemon's dispatch), beside `notmuch search` over the same Maildir,
 *   - get_message, get_thread and set_flags through MCP,
 *   - per query, beside it, the same search answered by Dovecot (`source: "server"`, through MCP:
 *     chainmail without its cache), for the ratio to Dovecot,
 *   - search p95 while the daemon syncs new mail,
 * with met / not met per target and the load average on every line (the machine may be shared).
 * Build first (npm run build here and in ../chainmail-mcp). BENCH_MESSAGES, BENCH_RUNS,
 * BENCH_NOTMUCH_RUNS and BENCH_DOVECOT_RUNS change the size and repetitions.
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { backfillBodies, compactFts, openCache, syncFolder } from "../cache/index.js";
import { DaemonClient } from "../client/index.js";
import { dispatch } from "../daemon/methods.js";
import { startDovecot } from "../testing/dovecot.js";
import { mailboxSender } from "../testing/mailbox.js";
import {
  benchHome,
  benchImap,
  countsWalkedEachTime,
  cpuMsOf,
  inProcessContext,
  line,
  load,
  met,
  ms,
  pct,
  startDaemon,
  startMcp,
  timed,
} from "./harness.js";
import { writeMaildir } from "./maildir.js";

const N = Number(process.env.BENCH_MESSAGES ?? 100_000);
// 200 calls per query and column: a p95 of 60 was the third-worst call, which one scheduler
// hiccup decided (is:flagged's moved from 5.6 to 11 ms between two quiet runs)
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
/** Rounds of every query on every path before the search table is timed. */
const WARMUP_ROUNDS = 25;
const NM_RUNS = Number(process.env.BENCH_NOTMUCH_RUNS ?? 7);
// Dovecot answers body text by reading every message file: a few runs (seconds each at 100,000)
const DV_RUNS = Number(process.env.BENCH_DOVECOT_RUNS ?? 1);
// The mail ends today: the daemon's newer_than: counts from the real clock
const NOW = new Date(new Date().toISOString().slice(0, 10));
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const T = { p50: 3, p95: 6, notmuch: 10, socket: 0.5, sync: 10_000, backfill100k: 90, duringSync: 20 };

const QUERIES: Array<[string, string | null]> = [
  ["invoice", "invoice"],
  ["budget deadline", "budget and deadline"],
  ['"meeting report"', '"meeting report"'],
  [`from:${mailboxSender(20)}`, `from:${mailboxSender(20)}`],
  [`is:unread from:${mailboxSender(30)}`, `tag:unread and from:${mailboxSender(30)}`],
  ["is:unread in:inbox", "tag:unread and tag:inbox"],
  ["is:flagged", "tag:flagged"],
  ["has:attachment", "tag:attachment"],
  ["larger:1M", null],
  ["newer_than:30d project", `date:${day(NOW.getTime() - 30 * 86_400_000)}.. and project`],
  ["{invoice budget} -report", "(invoice or budget) and not report"],
  ["subject:meeting", "subject:meeting"],
];

async function main() {
  const started = performance.now();
  const counting = countsWalkedEachTime();
  const dv = await startDovecot({ users: [{ name: "bench", password: "bench-pw" }] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-bench-"));
  let daemon: ChildProcess | undefined;
  const imap = () => benchImap(dv);
  try {
    line(`chainmail benchmark: ${N} messages; ${load()} on ${os.cpus().length} cores; ${counting}`);
    const first = imap();
    await first.connect();
    await first.mailboxOpen("INBOX");
    await first.logout();
    const maildir = path.join(dv.dir, "home", "bench", "Maildir");
    const owner = fs.statSync(maildir);
    const cur = path.join(maildir, "cur");
    let t = performance.now();
    writeMaildir(cur, owner, 0, N, N, NOW);
    const mib = execFileSync("du", ["-sm", cur], { encoding: "utf8" }).split("\t")[0];
    line(`maildir: ${mib} MiB in ${((performance.now() - t) / 1000).toFixed(1)} s (${load()})`);
    dv.doveadm(["force-resync", "-u", "bench", "INBOX"]);

    const home = benchHome(dir, dv, 10737418240);

    // The daemon's sync and backfill code, timed in this process on the daemon's cache.db
    const db = openCache(home.cacheFile);
    const client = imap();
    await client.connect();
    t = performance.now();
    const sync = await syncFolder(db, client, "bench", "INBOX", { role: "inbox" });
    const syncS = (performance.now() - t) / 1000;
    const rate = sync.added / syncS;
    line(
      `header sync: ${sync.added} in ${syncS.toFixed(1)} s = ${Math.round(rate)} headers/s (target ${T.sync}: ${met(rate >= T.sync)}) (${load()})`,
    );
    t = performance.now();
    for (;;) {
      const r = await backfillBodies(db, client, "bench", "INBOX", {
        dailyBudgetBytes: 10 * 1024 ** 3,
        compact: false,
      });
      if (r.remaining === 0 || r.fetched === 0) break;
    }
    await compactFts(db);
    const backfillS = (performance.now() - t) / 1000;
    const backfillTarget = (T.backfill100k * N) / 100_000;
    line(
      `body backfill: ${backfillS.toFixed(1)} s (target ${backfillTarget.toFixed(0)} s at this size: ${met(backfillS <= backfillTarget)}) (${load()})`,
    );
    await client.logout();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();

    const nmConf = path.join(dir, "notmuch-config");
    fs.writeFileSync(
      nmConf,
      `[database]\npath=${maildir}\n[new]\ntags=unread;inbox;\nignore=/^dovecot/;/^subscriptions/;/^maildirfolder/\n[maildir]\nsynchronize_flags=true\n`,
    );
    const nmEnv = { ...process.env, NOTMUCH_CONFIG: nmConf };
    t = performance.now();
    const nmNew = spawnSync("notmuch", ["new", "--quiet"], { env: nmEnv, encoding: "utf8" });
    const notmuch = nmNew.status === 0;
    line(
      notmuch
        ? `notmuch new: ${((performance.now() - t) / 1000).toFixed(1)} s (${load()})`
        : `notmuch new failed: ${nmNew.stderr}`,
    );

    daemon = await startDaemon(dir, home);
    const sock = new DaemonClient({ socketPath: home.socketPath, client: "mcp" });
    const inProcess = inProcessContext(dir, home);
    const ctx = inProcess.ctx;
    const mcp = await startMcp(dir);
    const tool = mcp.tool;
    const daemonPid = daemon.pid ?? -1;
    const cpu = { mcp: 0, daemonViaMcp: 0, daemonViaSocket: 0, inProcess: 0, calls: 0 };

    // Every path warm before anything is timed: the MCP server and the daemon are fresh processes
    // whose code V8 compiles and optimizes over the first few hundred calls, and the first query
    // timed took that cost alone (invoice's MCP layer 1.4 ms where the others' was 0.9)
    for (let round = 0; round < WARMUP_ROUNDS; round++)
      for (const [q] of QUERIES) {
        const params = { query: q, accounts: ["bench"], limit: 25 };
        await tool("search", params);
        await tool("search", { ...params, count_only: true });
        await sock.call("search", params);
        await dispatch(ctx, { client: "mcp" }, "search", params);
      }

    line("");
    line(
      `search (${load()}); targets through MCP: p50 <= ${T.p50} ms, p95 <= ${T.p95} ms, >= ${T.notmuch}x notmuch, socket <= +${T.socket} ms over in-process`,
    );
    line(
      "query | matches (notmuch) | MCP p50/p95 | count_only MCP p50/p95 | socket p50 | in-process p50 | notmuch p50 | notmuch/MCP | Dovecot p50 | Dovecot/MCP | verdict",
    );
    // The latency targets and the notmuch ratio, judged apart
    const misses: string[] = [];
    const ratioMisses: string[] = [];
    const socketOver: number[] = [];
    const nmRatios: number[] = [];
    const dvRatios: number[] = [];
    let firstRef = "";
    for (const [q, nm] of QUERIES) {
      const params = { query: q, accounts: ["bench"], limit: 25 };
      const res = await tool("search", params);
      const count = res.count as number;
      if (!firstRef) firstRef = ((res.rows as { ref: string }[])[0]?.ref as string) ?? "";
      if (res.source !== "cache") line(`  (${q} answered from ${String(res.source)})`);
      const m0 = cpuMsOf(mcp.pid);
      let d0 = cpuMsOf(daemonPid);
      const mcpT = await timed(RUNS, () => tool("search", params));
      cpu.mcp += cpuMsOf(mcp.pid) - m0;
      cpu.daemonViaMcp += cpuMsOf(daemonPid) - d0;
      const mcpC = await timed(RUNS, () => tool("search", { ...params, count_only: true }));
      d0 = cpuMsOf(daemonPid);
      const sockT = await timed(RUNS, () => sock.call("search", params));
      cpu.daemonViaSocket += cpuMsOf(daemonPid) - d0;
      const c0 = process.cpuUsage();
      const inT = await timed(RUNS, () => dispatch(ctx, { client: "mcp" }, "search", params));
      const c1 = process.cpuUsage(c0);
      cpu.inProcess += (c1.user + c1.system) / 1000;
      cpu.calls += RUNS + 3; // timed() warms with 3 calls first
      let nmCell = "n/a";
      let ratioCell = "n/a";
      let nmCount = "";
      let ratioOk = true;
      if (nm && notmuch) {
        nmCount = ` (${spawnSync("notmuch", ["count", nm], { env: nmEnv, encoding: "utf8" }).stdout.trim()})`;
        const nmT = await timed(NM_RUNS, async () =>
          spawnSync("notmuch", ["search", "--output=messages", "--limit=25", nm], { env: nmEnv }),
        );
        const ratio = pct(nmT, 50) / pct(mcpT, 50);
        nmCell = ms(pct(nmT, 50));
        ratioCell = `${ratio.toFixed(1)}x`;
        nmRatios.push(ratio);
        ratioOk = ratio >= T.notmuch;
      }
      let dvCell = "n/a";
      let dvRatio = "n/a";
      if (DV_RUNS > 0) {
        const dvT = await timed(DV_RUNS, () => tool("search", { ...params, source: "server" }), 0);
        dvCell = ms(pct(dvT, 50));
        dvRatios.push(pct(dvT, 50) / pct(mcpT, 50));
        dvRatio = `${(dvRatios[dvRatios.length - 1] as number).toFixed(1)}x`;
      }
      const over = pct(sockT, 50) - pct(inT, 50);
      socketOver.push(over);
      const ok =
        pct(mcpT, 50) <= T.p50 && pct(mcpT, 95) <= T.p95 && pct(mcpC, 50) <= T.p50 && pct(mcpC, 95) <= T.p95;
      if (!ok) misses.push(q);
      if (!ratioOk) ratioMisses.push(q);
      line(
        `${q} | ${count}${nmCount} | ${ms(pct(mcpT, 50))} / ${ms(pct(mcpT, 95))} | ${ms(pct(mcpC, 50))} / ${ms(pct(mcpC, 95))} | ${ms(pct(sockT, 50))} | ${ms(pct(inT, 50))} | ${nmCell} | ${ratioCell} | ${dvCell} | ${dvRatio} | ${met(ok)}${ratioOk ? "" : ", notmuch ratio NOT MET"}`,
      );
    }
    // Each hop in CPU per call (src/bench/hop-bench.ts has the same in a small run): what the MCP
    // process and the daemon's socket add, whatever else the machine runs
    line(
      `CPU per search of 25 rows, all queries: MCP process ${(cpu.mcp / cpu.calls).toFixed(3)} ms, the daemon ${(cpu.daemonViaMcp / cpu.calls).toFixed(3)} ms through MCP and ${(cpu.daemonViaSocket / cpu.calls).toFixed(3)} ms through its socket alone, in process ${(cpu.inProcess / cpu.calls).toFixed(3)} ms`,
    );

    line("");
    line(`other tools through MCP (${load()}):`);
    const thread = await tool("get_thread", { ref: firstRef });
    for (const [name, args] of [
      ["get_message", { refs: [firstRef] }],
      ["get_thread", { ref: firstRef }],
      ["set_flags", { refs: [firstRef], add: ["$bench"] }],
      ["cache_status", {}],
    ] as const) {
      const tt = await timed(Math.min(RUNS, 30), () => tool(name, args));
      line(`  ${name}: p50 ${ms(pct(tt, 50))} ms, p95 ${ms(pct(tt, 95))} ms`);
    }
    line(`  (get_thread answered from ${String(thread.source)})`);

    // New mail arrives and the daemon syncs it (headers and bodies) while searches run
    const extra = Math.max(100, Math.floor(N / 20));
    writeMaildir(cur, owner, N, N + extra, N, NOW);
    dv.doveadm(["force-resync", "-u", "bench", "INBOX"]);
    const during: number[] = [];
    const syncSock = new DaemonClient({ socketPath: home.socketPath, client: "cli", timeoutMs: 3_600_000 });
    let syncing = true;
    const ts = performance.now();
    const pass = syncSock.call("cache.sync", { accounts: ["bench"] }).finally(() => {
      syncing = false;
    });
    for (let i = 0; syncing; i++) {
      const q = QUERIES[i % QUERIES.length]?.[0] as string;
      const t0 = performance.now();
      await tool("search", { query: q, accounts: ["bench"], limit: 25, source: "cache" });
      during.push(performance.now() - t0);
    }
    await pass;
    line(
      `search during a sync of ${extra} new messages (${((performance.now() - ts) / 1000).toFixed(1)} s, ${during.length} searches, source cache): p50 ${ms(pct(during, 50))} ms, p95 ${ms(pct(during, 95))} ms (target ${T.duringSync}: ${met(pct(during, 95) <= T.duringSync)}) (${load()})`,
    );
    syncSock.close();

    line("");
    const worstOver = Math.max(...socketOver);
    line(`summary at ${N} messages (targets are for 100,000), ${load()}:`);
    line(`  ${met(rate >= T.sync)}: header sync ${Math.round(rate)} headers/s (target ${T.sync})`);
    line(
      `  ${met(backfillS <= backfillTarget)}: body backfill ${backfillS.toFixed(1)} s (target ${backfillTarget.toFixed(0)} s)`,
    );
    line(
      `  ${met(misses.length === 0)}: search through MCP p50 <= ${T.p50} / p95 <= ${T.p95} ms (limit 25 and count_only) on ${QUERIES.length - misses.length}/${QUERIES.length} queries${misses.length ? ` (not: ${misses.join("; ")})` : ""}`,
    );
    line(
      `  ${met(ratioMisses.length === 0)}: search through MCP >= ${T.notmuch}x notmuch on ${QUERIES.length - ratioMisses.length}/${QUERIES.length} queries${ratioMisses.length ? ` (not: ${ratioMisses.join("; ")})` : ""}`,
    );
    line(
      `  ${met(worstOver <= T.socket)}: socket over in-process at most ${ms(worstOver)} ms (target ${T.socket})`,
    );
    const range = (xs: number[]) =>
      xs.length ? `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}x` : "not measured";
    line(`  search through MCP is ${range(nmRatios)} faster than notmuch, ${range(dvRatios)} than Dovecot`);
    line(`  whole run ${((performance.now() - started) / 60_000).toFixed(1)} min`);
    await mcp.close();
    sock.close();
    await inProcess.close();
  } finally {
    if (daemon && daemon.exitCode === null) daemon.kill("SIGTERM");
    await dv.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
