/**
 * The server-path row of `npm run bench` (issue 31): a search that matches every one of N unread
 * messages in one folder (default 12,000), answered by Dovecot (`source: "server"`, through the
 * daemon's socket), beside the time a plain IMAP client takes to fetch one page of 25 envelopes the
 * way a server without a cache does (UID SEARCH UNSEEN, then UID FETCH of the 25 newest envelopes).
 * Target: the server path's p50 at least as fast as that page. BENCH_SERVER_MESSAGES and
 * BENCH_SERVER_RUNS change the size and repetitions (a smoke run: BENCH_SERVER_MESSAGES=300
 * BENCH_SERVER_RUNS=5). Build first (npm run build).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildMessage } from "../testing/corpus.js";
import { startMailEnv } from "../testing/mailenv.js";

const N = Number(process.env.BENCH_SERVER_MESSAGES ?? 12_000);
const RUNS = Number(process.env.BENCH_SERVER_RUNS ?? 50);
const BASE = Date.parse("2026-01-01T00:00:00Z");

const line = (s: string) => process.stdout.write(`${s}\n`);
const load = () =>
  `load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`;
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function timed(runs: number, f: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await f();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await f();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

async function main(): Promise<void> {
  const env = await startMailEnv();
  try {
    const c = await env.dv.connect("alice");
    await c.mailboxCreate("Bulk");
    await c.logout();
    // Straight into the Maildir (12,000 APPENDs would take longer than the measurement), unread.
    const cur = path.join(env.dv.dir, "home", "alice", "Maildir", "Bulk", "cur");
    const owner = fs.statSync(cur);
    for (let i = 0; i < N; i++) {
      const date = new Date(BASE + i * 60_000);
      const raw = buildMessage({
        from: `Sender ${i % 50} <s${i % 50}@example.com>`,
        to: ["alice@example.com"],
        subject: `Bulk message ${i}`,
        date,
        messageId: `<bulk${i}@example.com>`,
        text: "hello\n",
      });
      const file = path.join(
        cur,
        `${Math.floor(date.getTime() / 1000)}.M${i}P1.bench,S=${Buffer.byteLength(raw)}:2,`,
      );
      fs.writeFileSync(file, raw);
      fs.utimesSync(file, date, date);
      fs.chownSync(file, owner.uid, owner.gid);
    }
    const query = "in:Bulk is:unread";
    const search = () => env.client.search({ query, accounts: ["work"], source: "server", limit: 25 });
    const first = await search();
    if (first.count !== N || first.rows.length !== Math.min(25, N) || first.partial.length > 0)
      throw new Error(
        `server path answered count ${first.count}, ${first.rows.length} rows, ${first.partial.length} partial`,
      );
    const searchMs = await timed(RUNS, search);
    // The reference: one page of 25 envelopes as a cacheless server fetches it, on a connection
    // that keeps the folder selected (as the daemon's pooled one does).
    const peer = await env.dv.connect("alice");
    await peer.mailboxOpen("Bulk", { readOnly: true });
    const pageMs = await timed(RUNS, async () => {
      const uids = (await peer.search({ seen: false }, { uid: true })) || [];
      const page = uids.slice(-25);
      const got = await peer.fetchAll(
        page.join(","),
        { uid: true, envelope: true, flags: true, size: true, internalDate: true, bodyStructure: true },
        { uid: true },
      );
      if (got.length !== page.length) throw new Error("the reference page came back short");
    });
    await peer.logout();
    const s = p50(searchMs);
    const pg = p50(pageMs);
    line(
      `server path: search matching ${N} in one folder p50 ${s.toFixed(1)} ms; fetching one page of 25 envelopes p50 ${pg.toFixed(1)} ms; target (search at least as fast as one page of 25): ${s <= pg ? "met" : "NOT MET"} (${RUNS} runs, ${load()})`,
    );
  } finally {
    await env.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
