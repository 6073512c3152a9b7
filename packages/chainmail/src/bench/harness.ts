// What the benchmarks that go through `chainmail mcp` share (mcp-bench.ts, scale-bench.ts): a home
// with one IMAP account on the testing Dovecot, the daemon as its own process, the MCP server over
// stdio, the daemon's dispatch in this process (the in-process column), and the table helpers.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { connectStdio } from "@mcpforge/toolkit/testing";
import { ImapFlow } from "imapflow";
import { DaemonClient } from "../client/index.js";
import { loadConfig } from "../config.js";
import { CacheRunner } from "../daemon/cache-runner.js";
import { EventLog } from "../events/log.js";
import { type Home, resolveHome } from "../home.js";
import { ImapPool } from "../imap/connection.js";
import { setSecret } from "../secrets.js";
import type { ServiceContext } from "../service/context.js";
import { StateDb } from "../store/state.js";

/** bin/chainmail.js, from dist/bench/ once bundled. */
export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/chainmail.js");

export const load = () =>
  `load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`;
export const line = (s: string) => process.stdout.write(`${s}\n`);
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
export const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0));
export const met = (ok: boolean) => (ok ? "met" : "NOT MET");
export async function timed(runs: number, f: () => Promise<unknown>, warmup = 3): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await f();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    out.push(performance.now() - t);
  }
  return out;
}

/** The testing Dovecot's address and the bench user's password. */
export interface BenchServer {
  host: string;
  port: number;
}

/** An IMAP connection as the bench user (the daemon's sync code runs over one in some runs). */
export const benchImap = (dv: BenchServer) =>
  new ImapFlow({
    host: dv.host,
    port: dv.port,
    secure: false,
    doSTARTTLS: false,
    auth: { user: "bench", pass: "bench-pw" },
    logger: false,
  });

/**
 * A chainmail home in `dir` with the account "bench" on the Dovecot, no background sync, a week's
 * freshness and the body budget and size bound raised to `budgetBytes`.
 */
export function benchHome(dir: string, dv: BenchServer, budgetBytes: number): Home {
  const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  fs.writeFileSync(
    home.configFile,
    `[cache]\nbackground = false\nfresh_seconds = 604800\ndaily_budget_bytes = ${budgetBytes}\nmax_size_bytes = ${budgetBytes}\n[[accounts]]\nname = "bench"\nprovider = "imap"\naddress = "bench@example.com"\nusername = "bench"\n[accounts.imap]\nhost = "127.0.0.1"\nport = ${dv.port}\ntls = "none"\n`,
  );
  setSecret(home.secretsDir, "bench", "bench-pw");
  return home;
}

/**
 * Every benchmark that asks one query many times judges the query's first count: the daemon it
 * starts and its in-process path remember no counts (src/cache/count-memo.ts), or a hundred repeats
 * would time a remembered count; BENCH_REMEMBER_COUNTS=1 times remembered ones instead. Call it
 * before starting the daemon; it says which for the bench's first line.
 */
export function countsWalkedEachTime(): string {
  if (process.env.BENCH_REMEMBER_COUNTS)
    return "counts remembered between repeated searches (BENCH_REMEMBER_COUNTS)";
  process.env.CHAINMAIL_REMEMBER_COUNTS = "0";
  return "each search's count walked (none remembered)";
}

/**
 * `chainmail daemon` for the home in `dir`, once its socket is there (its stderr is ours), with the
 * account's server settings confirmed as the owner would (`chainmail policy confirm`): a new
 * account connects nowhere before that, and the daemon's own syncs would be refused.
 */
export async function startDaemon(dir: string, home: Home): Promise<ChildProcess> {
  // BENCH_PROFILE_DAEMON=DIR: a CPU profile of the daemon, written there when it stops (SIGTERM)
  const profile = process.env.BENCH_PROFILE_DAEMON;
  const flags = profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [];
  // BENCH_DAEMON_NODE_FLAGS: node/V8 flags for the daemon (a GC trace, a heap setting to compare)
  flags.push(...(process.env.BENCH_DAEMON_NODE_FLAGS ?? "").split(" ").filter(Boolean));
  const daemon = spawn(process.execPath, [...flags, CLI, "daemon"], {
    // (the environment passed on: CHAINMAIL_REMEMBER_COUNTS among it, see countsWalkedEachTime)
    env: { ...process.env, CHAINMAIL_HOME: dir },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    // Until the daemon accepts on its socket (the file can be there a moment before): to a deadline
    const deadline = Date.now() + 20_000;
    for (;;) {
      const owner = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
      try {
        await owner.call("policy.confirm", {});
        return daemon;
      } catch (err) {
        if ((err as { reason?: string }).reason !== "DAEMON_UNAVAILABLE" || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        owner.close();
      }
    }
  } catch (err) {
    // Not left running behind a benchmark that stops here (it holds the output pipe open)
    daemon.kill("SIGTERM");
    throw err;
  }
}

interface ToolResult {
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * `chainmail mcp` over stdio for the home in `dir` (`socket`: a daemon whose socket is elsewhere);
 * `tool` throws on an error result; `nodeFlags` and `cli` (another build's bin) for comparisons.
 */
export async function startMcp(
  dir: string,
  socket?: string,
  nodeFlags: readonly string[] = [],
  cli: string = CLI,
) {
  // BENCH_PROFILE_MCP=DIR: a CPU profile of each `chainmail mcp` process, written there when it exits
  const profile = process.env.BENCH_PROFILE_MCP;
  const before = childPids();
  const mcp = await connectStdio({
    command: process.execPath,
    args: [
      ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
      ...nodeFlags,
      cli,
      "--home",
      dir,
      "mcp",
    ],
    ...(socket ? { env: { CHAINMAIL_SOCKET: socket } } : {}),
  });
  // The MCP server is the child that appeared while connecting (the SDK's transport hides its pid)
  const pid = childPids().find((p) => !before.includes(p)) ?? -1;
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = (await mcp.client.callTool({ name, arguments: args })) as ToolResult;
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r).slice(0, 300)}`);
    return r.structuredContent ?? {};
  };
  return { close: () => mcp.close(), tool, pid };
}

/** The pids of this process's children (Linux: /proc/PID/task/TID/children). */
function childPids(): number[] {
  try {
    return fs
      .readdirSync(`/proc/${process.pid}/task`)
      .flatMap((t) => fs.readFileSync(`/proc/${process.pid}/task/${t}/children`, "utf8").split(" "))
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU time a process has used so far, user + system, in ms (Linux /proc/PID/stat; NaN elsewhere):
 * CPU per call of another process does not change with what else the shared machine runs.
 */
export function cpuMsOf(pid: number): number {
  return cpuMsOfStat(`/proc/${pid}/stat`);
}

/** The same from a stat file: a process's, or one thread's (/proc/PID/task/TID/stat). */
export function cpuMsOfStat(statPath: string): number {
  try {
    const stat = fs.readFileSync(statPath, "utf8");
    // The fields after the command name, which is in parentheses and may hold spaces
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/**
 * The daemon's service in this process over the same cache.db (its own state.db), for the
 * in-process column: `dispatch(ctx, ...)` as the daemon runs it, without the socket. `close` stops it.
 */
export function inProcessContext(dir: string, home: Home) {
  const config = loadConfig(home.configFile);
  const state = new StateDb(path.join(dir, "bench-state.db"), { log: () => undefined });
  const ctx: ServiceContext = {
    config,
    home,
    pool: new ImapPool(home.secretsDir),
    state,
    events: new EventLog(state, { retentionSeconds: () => config.events.retention_seconds }),
    cache: new CacheRunner(
      home.cacheFile,
      () => config,
      home.secretsDir,
      () => undefined,
    ),
  };
  const close = async () => {
    await ctx.cache?.stop();
    // Its prune timer would otherwise fire on the closed state.db (a 20-minute run reaches it)
    ctx.events.close();
    ctx.state.close();
  };
  return { ctx, close };
}
