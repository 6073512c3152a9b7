/**
 * `npm run bench:hop`: what each hop of a search costs in CPU, on a small mailbox (BENCH_HOP_MESSAGES,
 * default 5,000) so it runs in a minute on a shared machine. The `chainmail mcp` process and the
 * daemon are each read from /proc (utime+stime) before and after BENCH_HOP_CALLS searches through
 * MCP; the daemon again for the same searches over its socket alone; this process's own CPU for the
 * in-process search. CPU per call is what the hops add whatever else runs on the machine; the
 * wall-clock p50 beside it is not.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { backfillBodies, openCache, syncFolder } from "../cache/index.js";
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
  ms,
  pct,
  startDaemon,
  startMcp,
} from "./harness.js";
import { writeMaildir } from "./maildir.js";

const N = Number(process.env.BENCH_HOP_MESSAGES ?? 5_000);
const CALLS = Number(process.env.BENCH_HOP_CALLS ?? 3_000);
const NOW = new Date(new Date().toISOString().slice(0, 10));
const ROUNDS = 10;
/**
 * BENCH_HOP_VARIANTS compares MCP servers side by side in one run: `name=cli|node flags;...`, where
 * cli is a bin/chainmail.js (empty: this build) and the flags go to its node (to try a V8 setting or
 * an older build without a second run). Default: this build as it is.
 */
const VARIANTS = (process.env.BENCH_HOP_VARIANTS ?? "=|")
  .split(";")
  .filter(Boolean)
  .map((spec) => {
    const eq = spec.indexOf("=");
    const bar = spec.indexOf("|", eq);
    const cli = spec.slice(eq + 1, bar);
    const flags = spec
      .slice(bar + 1)
      .split(" ")
      .filter(Boolean);
    return { name: spec.slice(0, eq), cli: cli || undefined, flags };
  });
const QUERIES = ["invoice", `from:${mailboxSender(20)}`, "is:unread in:inbox", "has:attachment"];

/** Runs `f` CALLS times over the queries; the wall-clock times of each call. */
async function calls(
  n: number,
  f: (params: Record<string, unknown>) => Promise<unknown>,
  countOnly = false,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const params = {
      query: QUERIES[i % QUERIES.length],
      accounts: ["bench"],
      limit: 25,
      ...(countOnly ? { count_only: true } : {}),
    };
    const t = performance.now();
    await f(params);
    out.push(performance.now() - t);
  }
  return out;
}

async function main() {
  const counting = countsWalkedEachTime();
  const dv = await startDovecot({ users: [{ name: "bench", password: "bench-pw" }] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-hop-"));
  let daemon: Awaited<ReturnType<typeof startDaemon>> | undefined;
  try {
    line(
      `hop benchmark: ${N} messages, ${CALLS} searches per column; ${load()} on ${os.cpus().length} cores; ${counting}`,
    );
    const first = benchImap(dv);
    await first.connect();
    await first.mailboxOpen("INBOX");
    await first.logout();
    const maildir = path.join(dv.dir, "home", "bench", "Maildir");
    writeMaildir(path.join(maildir, "cur"), fs.statSync(maildir), 0, N, N, NOW);
    dv.doveadm(["force-resync", "-u", "bench", "INBOX"]);
    const home = benchHome(dir, dv, 10737418240);
    const db = openCache(home.cacheFile);
    const client = benchImap(dv);
    await client.connect();
    await syncFolder(db, client, "bench", "INBOX", { role: "inbox" });
    for (;;) {
      const r = await backfillBodies(db, client, "bench", "INBOX", { dailyBudgetBytes: 10 * 1024 ** 3 });
      if (r.remaining === 0 || r.fetched === 0) break;
    }
    await client.logout();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();

    daemon = await startDaemon(dir, home);
    const daemonPid = daemon.pid as number;
    // One at a time: startMcp finds its server's pid as the child that appeared while it connected
    const variants: ((typeof VARIANTS)[number] & { mcp: Awaited<ReturnType<typeof startMcp>> })[] = [];
    for (const v of VARIANTS) variants.push({ ...v, mcp: await startMcp(dir, undefined, v.flags, v.cli) });
    const sock = new DaemonClient({ socketPath: home.socketPath, client: "mcp" });
    const inProcess = inProcessContext(dir, home);
    const inSearch = (p: Record<string, unknown>) => dispatch(inProcess.ctx, { client: "mcp" }, "search", p);

    // Warm: V8 optimizes each process's code over the first few hundred calls
    for (let i = 0; i < 400; i++) {
      const params = { query: QUERIES[i % QUERIES.length], accounts: ["bench"], limit: 25 };
      for (const v of variants) await v.mcp.tool("search", params);
      await sock.call("search", params);
      await inSearch(params);
    }

    // Each variant's MCP server in turn, ROUNDS times, so a change in the machine's load hits them alike
    const seen = variants.map(() => ({ mcpCpu: 0, daemonCpu: 0, times: [] as number[] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, v] of variants.entries()) {
        const s = seen[i]!;
        const m0 = cpuMsOf(v.mcp.pid);
        const d0 = cpuMsOf(daemonPid);
        s.times.push(...(await calls(CALLS / ROUNDS, (p) => v.mcp.tool("search", p))));
        s.mcpCpu += cpuMsOf(v.mcp.pid) - m0;
        s.daemonCpu += cpuMsOf(daemonPid) - d0;
      }
    }
    const d0 = cpuMsOf(daemonPid);
    const sockT = await calls(CALLS, (p) => sock.call("search", p));
    const daemonViaSock = (cpuMsOf(daemonPid) - d0) / CALLS;
    const c0 = process.cpuUsage();
    const inT = await calls(CALLS, inSearch);
    const c = process.cpuUsage(c0);
    const inPerCall = (c.user + c.system) / 1000 / CALLS;
    // The same with count_only: what the 25 rows cost beside the count, hop by hop
    const base = variants[0]!;
    const m0 = cpuMsOf(base.mcp.pid);
    const dc0 = cpuMsOf(daemonPid);
    const mcpCountT = await calls(CALLS, (p) => base.mcp.tool("search", p), true);
    const mcpCount = (cpuMsOf(base.mcp.pid) - m0) / CALLS;
    const daemonCount = (cpuMsOf(daemonPid) - dc0) / CALLS;
    const cc0 = process.cpuUsage();
    const inCountT = await calls(CALLS, inSearch, true);
    const cc = process.cpuUsage(cc0);
    const inCount = (cc.user + cc.system) / 1000 / CALLS;
    line(`search, limit 25, ${QUERIES.length} queries in turn (${load()})`);
    line("path | wall p50 | CPU per call: MCP process | daemon | this process (in-process search)");
    for (const [i, v] of variants.entries()) {
      const s = seen[i]!;
      line(
        `through MCP${v.name ? ` (${v.name})` : ""} | ${ms(pct(s.times, 50))} ms | ${(s.mcpCpu / CALLS).toFixed(3)} ms | ${(s.daemonCpu / CALLS).toFixed(3)} ms |`,
      );
    }
    line(`socket only | ${ms(pct(sockT, 50))} ms | | ${daemonViaSock.toFixed(3)} ms |`);
    line(`in process | ${ms(pct(inT, 50))} ms | | | ${inPerCall.toFixed(3)} ms`);
    line(
      `count_only through MCP${base.name ? ` (${base.name})` : ""} | ${ms(pct(mcpCountT, 50))} ms | ${mcpCount.toFixed(3)} ms | ${daemonCount.toFixed(3)} ms |`,
    );
    line(`count_only in process | ${ms(pct(inCountT, 50))} ms | | | ${inCount.toFixed(3)} ms`);
    for (const v of variants) await v.mcp.close();
    sock.close();
    await inProcess.close();
  } finally {
    daemon?.kill("SIGTERM");
    await dv.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
