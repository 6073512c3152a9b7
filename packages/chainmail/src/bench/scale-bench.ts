/**
 * The scale run's infrastructure (`npm run bench:scale`; issue 34, not part of `npm run bench` or CI):
 *   1. N mailbox-sized messages (src/testing/mailbox.ts through ./maildir.ts: the realism of the
 *      user's benchmark) written straight to a Maildir in a data dir kept between runs; a marker file
 *      says how many are there, so a second run skips the generation (a million take hours);
 *   2. the testing Dovecot serving that Maildir in place, its index and control files beside it in
 *      the data dir (no copy of the Maildir);
 *   3. the daemon's initial header sync (its own code, in this process, into a fresh cache.db) in
 *      headers/s against 15,000/s, then the body backfill (budget raised), with the load average and
 *      cache.db's size against 20% of the Maildir's;
 *   4. when `notmuch` is installed, its index of the same Maildir (kept in the data dir, updated by
 *      `notmuch new`), and a few queries' p50/p95 through `chainmail mcp` over stdio beside
 *      `notmuch search --limit=25`.
 * BENCH_SCALE_MESSAGES (default 1,000,000), BENCH_SCALE_DIR (default .bench-data/scale-N in this
 * package), BENCH_SCALE_RUNS and BENCH_SCALE_NOTMUCH_RUNS change size, place and repetitions.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { connectStdio } from "@mcpforge/toolkit/testing";
import { ImapFlow } from "imapflow";
import { backfillBodies, compactFts, openCache, syncFolder } from "../cache/index.js";
import { resolveHome } from "../home.js";
import { setSecret } from "../secrets.js";
import { startDovecot } from "../testing/dovecot.js";
import { mailboxSender } from "../testing/mailbox.js";
import { writeMaildir } from "./maildir.js";

const N = Number(process.env.BENCH_SCALE_MESSAGES ?? 1_000_000);
const HERE = path.dirname(fileURLToPath(import.meta.url));
// dist/bench/ once bundled: the package is two levels up
const PKG = path.resolve(HERE, "../..");
const DATA = path.resolve(process.env.BENCH_SCALE_DIR ?? path.join(PKG, ".bench-data", `scale-${N}`));
const RUNS = Number(process.env.BENCH_SCALE_RUNS ?? 100);
const NM_RUNS = Number(process.env.BENCH_SCALE_NOTMUCH_RUNS ?? 7);
const CLI = path.join(PKG, "bin/chainmail.js");
const T = { sync: 15_000, cacheShare: 0.2, p50: 3, p95: 6, notmuch: 10 };

const load = () =>
  `load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`;
const line = (s: string) => process.stdout.write(`${s}\n`);
const met = (ok: boolean) => (ok ? "met" : "NOT MET");
const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0));
async function timed(runs: number, f: () => Promise<unknown>, warmup = 3): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await f();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    out.push(performance.now() - t);
  }
  return out;
}
const duBytes = (p: string) => Number(execFileSync("du", ["-sb", p], { encoding: "utf8" }).split("\t")[0]);
const fileBytes = (p: string) => (fs.existsSync(p) ? fs.statSync(p).size : 0);

interface Marker {
  messages: number;
  /** The day the mail ends (message dates count back from it), kept so a rerun is the same mail. */
  now: string;
}

/** The Maildir of N messages in DATA, generated unless the marker says it is there already. */
function prepareMaildir(owner: fs.Stats): { maildir: string; now: Date } {
  const maildir = path.join(DATA, "Maildir");
  const markerFile = path.join(DATA, "maildir.json");
  const marker = fs.existsSync(markerFile)
    ? (JSON.parse(fs.readFileSync(markerFile, "utf8")) as Marker)
    : null;
  if (marker?.messages === N) {
    line(`maildir: ${N} messages already in ${maildir} (generated for ${marker.now})`);
    return { maildir, now: new Date(marker.now) };
  }
  // A partial or other-sized run: start over, and drop the indexes built over the old mail
  for (const p of ["Maildir", "dovecot", "notmuch", "maildir.json"])
    fs.rmSync(path.join(DATA, p), { recursive: true, force: true });
  const now = new Date(new Date().toISOString().slice(0, 10));
  for (const sub of ["cur", "new", "tmp"]) fs.mkdirSync(path.join(maildir, sub), { recursive: true });
  for (const p of [maildir, ...["cur", "new", "tmp"].map((s) => path.join(maildir, s))])
    fs.chownSync(p, owner.uid, owner.gid);
  const t = performance.now();
  const chunk = Math.max(1000, Math.ceil(N / 20));
  for (let from = 0; from < N; from += chunk) {
    writeMaildir(path.join(maildir, "cur"), owner, from, Math.min(N, from + chunk), N, now);
    line(
      `  generated ${Math.min(N, from + chunk)}/${N} (${((performance.now() - t) / 1000).toFixed(0)} s, ${load()})`,
    );
  }
  fs.writeFileSync(markerFile, JSON.stringify({ messages: N, now: now.toISOString() } satisfies Marker));
  line(`maildir: ${N} messages generated in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return { maildir, now };
}

async function main() {
  const started = performance.now();
  fs.mkdirSync(DATA, { recursive: true });
  const index = path.join(DATA, "dovecot", "index");
  const control = path.join(DATA, "dovecot", "control");
  const dv = await startDovecot({
    users: [{ name: "bench", password: "bench-pw" }],
    // In place: Dovecot writes nothing into the Maildir but the mail it is given
    mailLocation: `maildir:${path.join(DATA, "Maildir")}:LAYOUT=fs:INDEX=${index}:CONTROL=${control}`,
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-scale-bench-"));
  let daemon: ChildProcess | undefined;
  try {
    line(`chainmail scale run: ${N} messages in ${DATA}; ${load()} on ${os.cpus().length} cores`);
    // Dovecot's mail user (an unprivileged one when this runs as root) owns the mail and its indexes
    const owner = fs.statSync(path.join(dv.dir, "home", "bench"));
    const { maildir, now } = prepareMaildir(owner);
    for (const p of [path.join(DATA, "dovecot"), index, control]) {
      fs.mkdirSync(p, { recursive: true });
      fs.chownSync(p, owner.uid, owner.gid);
    }
    let t = performance.now();
    dv.doveadm(["force-resync", "-u", "bench", "INBOX"]);
    line(`dovecot force-resync: ${((performance.now() - t) / 1000).toFixed(1)} s (${load()})`);
    const maildirBytes = duBytes(maildir);
    line(`maildir size: ${mib(maildirBytes)}`);

    const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
    fs.writeFileSync(
      home.configFile,
      `[cache]\nbackground = false\nfresh_seconds = 604800\ndaily_budget_bytes = 107374182400\nmax_size_bytes = 107374182400\n[[accounts]]\nname = "bench"\nprovider = "imap"\naddress = "bench@example.com"\nusername = "bench"\n[accounts.imap]\nhost = "127.0.0.1"\nport = ${dv.port}\ntls = "none"\n`,
    );
    setSecret(home.secretsDir, "bench", "bench-pw");

    // The daemon's sync and backfill code, timed in this process on the daemon's cache.db
    const db = openCache(home.cacheFile);
    const client = new ImapFlow({
      host: dv.host,
      port: dv.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: "bench", pass: "bench-pw" },
      logger: false,
    });
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
        dailyBudgetBytes: 100 * 1024 ** 3,
        compact: false,
      });
      if (r.remaining === 0 || r.fetched === 0) break;
    }
    await compactFts(db);
    line(`body backfill: ${((performance.now() - t) / 1000).toFixed(1)} s (${load()})`);
    await client.logout();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    const cacheBytes = fileBytes(home.cacheFile) + fileBytes(`${home.cacheFile}-wal`);
    const share = cacheBytes / maildirBytes;
    line(
      `cache.db: ${mib(cacheBytes)} = ${(share * 100).toFixed(1)}% of the Maildir's ${mib(maildirBytes)} (target <= ${T.cacheShare * 100}%: ${met(share <= T.cacheShare)})`,
    );

    // notmuch over the same Maildir, its database in the data dir (kept; `notmuch new` is incremental)
    const nmDb = path.join(DATA, "notmuch");
    const nmConf = path.join(DATA, "notmuch-config");
    const hasNotmuch = spawnSync("notmuch", ["--version"]).status === 0;
    let notmuch = false;
    const nmEnv = { ...process.env, NOTMUCH_CONFIG: nmConf };
    if (hasNotmuch) {
      fs.mkdirSync(nmDb, { recursive: true });
      fs.writeFileSync(
        nmConf,
        `[database]\nmail_root=${maildir}\npath=${nmDb}\n[new]\ntags=unread;inbox;\n[maildir]\nsynchronize_flags=true\n`,
      );
      t = performance.now();
      const nmNew = spawnSync("notmuch", ["new", "--quiet"], { env: nmEnv, encoding: "utf8" });
      notmuch = nmNew.status === 0;
      line(
        notmuch
          ? `notmuch new: ${((performance.now() - t) / 1000).toFixed(1)} s (${load()})`
          : `notmuch new failed: ${nmNew.stderr}`,
      );
    } else line("notmuch is not installed: chainmail's search alone");

    daemon = spawn(process.execPath, [CLI, "daemon"], {
      env: { ...process.env, CHAINMAIL_HOME: dir },
      stdio: ["ignore", "ignore", "inherit"],
    });
    for (let i = 0; i < 400 && !fs.existsSync(home.socketPath); i++)
      await new Promise((r) => setTimeout(r, 25));
    const mcp = await connectStdio({ command: process.execPath, args: [CLI, "--home", dir, "mcp"] });
    const search = async (args: Record<string, unknown>) => {
      const r = (await mcp.client.callTool({ name: "search", arguments: args })) as {
        structuredContent?: Record<string, unknown>;
        isError?: boolean;
      };
      if (r.isError) throw new Error(`search failed: ${JSON.stringify(r).slice(0, 300)}`);
      return r.structuredContent ?? {};
    };
    const day = (d: number) => new Date(now.getTime() - d * 86_400_000).toISOString().slice(0, 10);
    // newer_than: counts from today, the mail ends on the day it was generated: the window moves
    const age = Math.round((Date.now() - now.getTime()) / 86_400_000);
    const queries: Array<[string, string]> = [
      ["invoice", "invoice"],
      [`from:${mailboxSender(20)}`, `from:${mailboxSender(20)}`],
      ["is:unread in:inbox", "tag:unread and tag:inbox"],
      ["has:attachment", "tag:attachment"],
      ["subject:meeting", "subject:meeting"],
      [`newer_than:${30 + age}d project`, `date:${day(30)}.. and project`],
    ];
    line("");
    line(
      `search through chainmail mcp (${RUNS} runs) beside notmuch search --limit=25 (${NM_RUNS} runs, process start included); ${load()}`,
    );
    line(
      "query | matches (notmuch) | MCP p50/p95 ms | count_only p50/p95 | notmuch p50 | notmuch/MCP | verdict",
    );
    for (const [q, nm] of queries) {
      const params = { query: q, accounts: ["bench"], limit: 25 };
      const res = await search(params);
      const mcpT = await timed(RUNS, () => search(params));
      const mcpC = await timed(RUNS, () => search({ ...params, count_only: true }));
      let nmCount = "";
      let nmCell = "n/a";
      let ratioCell = "n/a";
      let ratioOk = true;
      if (notmuch) {
        nmCount = ` (${spawnSync("notmuch", ["count", nm], { env: nmEnv, encoding: "utf8" }).stdout.trim()})`;
        const nmT = await timed(NM_RUNS, async () =>
          spawnSync("notmuch", ["search", "--output=messages", "--limit=25", nm], { env: nmEnv }),
        );
        const ratio = pct(nmT, 50) / pct(mcpT, 50);
        nmCell = ms(pct(nmT, 50));
        ratioCell = `${ratio.toFixed(1)}x`;
        ratioOk = ratio >= T.notmuch;
      }
      const ok =
        pct(mcpT, 50) <= T.p50 && pct(mcpT, 95) <= T.p95 && pct(mcpC, 50) <= T.p50 && pct(mcpC, 95) <= T.p95;
      line(
        `${q} | ${String(res.count)}${nmCount} | ${ms(pct(mcpT, 50))} / ${ms(pct(mcpT, 95))} | ${ms(pct(mcpC, 50))} / ${ms(pct(mcpC, 95))} | ${nmCell} | ${ratioCell} | ${met(ok)}${notmuch ? `, >= ${T.notmuch}x notmuch ${met(ratioOk)}` : ""}${res.source === "cache" ? "" : ` (answered from ${String(res.source)})`}`,
      );
    }
    await mcp.close();
    line("");
    line(`whole run ${((performance.now() - started) / 60_000).toFixed(1)} min, ${load()}`);
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
