/**
 * The scale run's queries in process, without Dovecot (`npm run bench:scale-plans`; issue 34): a
 * cache.db of N generated messages (src/testing/mailbox.ts) written by the cache's own code
 * (`upsertMessage` for the headers, the backfill's statements for the bodies), then per query of
 * scale-queries.ts the in-process `searchCache` p50/p95 (limit 25 and count_only) and, with
 * BENCH_PLANS_EXPLAIN=1, SQLite's plan of each statement the search runs and its time per run (page
 * and count_only). The cache.db is kept
 * (BENCH_PLANS_DIR, default .bench-data/plans-N) and rebuilt when the generator or N changes.
 * BENCH_PLANS_MESSAGES (or BENCH_SCALE_MESSAGES; default 100,000), BENCH_PLANS_BODIES=0 (headers
 * only), BENCH_PLANS_RUNS.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type CacheDb, openCache } from "../cache/index.js";
import { putBody } from "../cache/body-store.js";
import { forgetCounts } from "../cache/count-memo.js";
import { stmt } from "../cache/schema.js";
import { searchCache } from "../cache/search.js";
import { ensureFolder, type FtsWrite, indexMessage, runFtsWrites, upsertMessage } from "../cache/store.js";
import { parseQuery } from "../query/index.js";
import { MAILBOX_GENERATOR_VERSION } from "../testing/mailbox.js";
import { syncedMailboxMessage } from "../testing/mailbox-synced.js";
import { scaleQueries } from "./scale-queries.js";

// (BENCH_SCALE_MESSAGES as the Dovecot run takes it, when BENCH_PLANS_MESSAGES is not set)
const N = Number(process.env.BENCH_PLANS_MESSAGES ?? process.env.BENCH_SCALE_MESSAGES ?? 100_000);
const BODIES = process.env.BENCH_PLANS_BODIES !== "0";
const RUNS = Number(process.env.BENCH_PLANS_RUNS ?? 200);
const EXPLAIN = process.env.BENCH_PLANS_EXPLAIN === "1";
const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DATA = path.resolve(
  process.env.BENCH_PLANS_DIR ?? path.join(PKG, ".bench-data", `plans-${N}${BODIES ? "" : "-headers"}`),
);
// A fixed end of the mail, so a kept cache.db is the same mail on another day
const NOW = new Date("2026-01-01T00:00:00Z");

const line = (s: string) => process.stdout.write(`${s}\n`);
const load = () =>
  `load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const ms = (x: number) => x.toFixed(3);

/** What the header FETCH would give for generated message `i` (src/testing/mailbox-synced.ts). */
const synced = (i: number, uid: number) => syncedMailboxMessage(i, N, uid, NOW);

function build(db: CacheDb) {
  const folder = ensureFolder(db, "bench", "INBOX", "inbox");
  const t = performance.now();
  const batch = 1000;
  for (let from = 0; from < N; from += batch) {
    const bodies: { id: number; text: string }[] = [];
    db.transaction(() => {
      const fts: FtsWrite[] = [];
      for (let i = from; i < Math.min(N, from + batch); i++) {
        const { msg, text } = synced(i, i + 1);
        const id = upsertMessage(db, folder, msg, null, fts);
        bodies.push({ id, text });
      }
      runFtsWrites(fts);
    })();
    if (BODIES)
      db.transaction(() => {
        // The backfill's statements (src/cache/backfill.ts, storeBodies)
        for (const { id, text } of bodies) {
          putBody(db, id, text, Date.now());
          stmt(db, "UPDATE messages SET body_state = 1 WHERE id = ?").run(id);
        }
        runFtsWrites(bodies.map(({ id, text }) => ({ id, write: () => indexMessage(db, id, text) })));
      })();
    if ((from / batch) % 20 === 19)
      line(`  ${from + batch}/${N} (${((performance.now() - t) / 1000).toFixed(0)} s, ${load()})`);
  }
  db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')");
  db.exec("INSERT INTO subjects_fts (subjects_fts) VALUES ('optimize')");
  // (what compactFts does after its merge: ../cache/fts.ts, releaseFreePages)
  if (db.pragma("auto_vacuum", { simple: true }) === 2) db.pragma("incremental_vacuum");
  stmt(db, "UPDATE folders SET complete = 1, last_sync = ?, server_count = ? WHERE id = ?").run(
    Date.now(),
    N,
    folder.id,
  );
  line(`built ${N} messages in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

function main() {
  fs.mkdirSync(DATA, { recursive: true });
  const file = path.join(DATA, "cache.db");
  const markerFile = path.join(DATA, "plans.json");
  const want = JSON.stringify({ n: N, generator: MAILBOX_GENERATOR_VERSION, bodies: BODIES, now: NOW });
  const fresh = !fs.existsSync(markerFile) || fs.readFileSync(markerFile, "utf8") !== want;
  if (fresh) for (const f of fs.readdirSync(DATA)) fs.rmSync(path.join(DATA, f), { force: true });
  const db = openCache(file);
  line(`scale plans: ${N} messages${BODIES ? " with bodies" : ", headers only"} in ${file}; ${load()}`);
  if (fresh) {
    build(db);
    fs.writeFileSync(markerFile, want);
  }
  // Every statement a search prepares, to show its plan (the statement map keeps each once), and
  // with EXPLAIN the time of each run of it during the timed searches (what a page and a count
  // spend where; a statement used through .pluck() is not timed)
  const prepared: string[] = [];
  let spent: Map<string, number[]> | null = null;
  const prepare = db.prepare.bind(db);
  const timed = (s: ReturnType<typeof prepare>, sql: string) =>
    new Proxy(s, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (typeof v !== "function") return v;
        const f = v as (...a: unknown[]) => unknown;
        if (key !== "get" && key !== "all" && key !== "run") return f.bind(target);
        return (...args: unknown[]) => {
          const t = performance.now();
          try {
            return f.apply(target, args);
          } finally {
            if (spent) {
              const list = spent.get(sql) ?? [];
              list.push(performance.now() - t);
              spent.set(sql, list);
            }
          }
        };
      },
    });
  (db as { prepare: CacheDb["prepare"] }).prepare = ((sql: string) => {
    prepared.push(sql);
    return EXPLAIN ? timed(prepare(sql), sql) : prepare(sql);
  }) as CacheDb["prepare"];
  line(
    "query | matches | in-process p50/p95 ms | count_only p50/p95 ms | not remembered: page / count_only p50 ms",
  );
  for (const q of scaleQueries(N, NOW, NOW)) {
    const ast = parseQuery(q.query);
    const opts = { limit: 25, accounts: ["bench"], now: NOW };
    prepared.length = 0;
    const res = searchCache(db, ast, opts);
    // `cold`: no count remembered from the run before (../cache/count-memo.ts), as after a write
    const times = (countOnly: boolean, cold = false) => {
      for (let i = 0; i < 5; i++) searchCache(db, ast, { ...opts, countOnly });
      const out: number[] = [];
      if (EXPLAIN && !cold) spent = new Map();
      for (let i = 0; i < RUNS; i++) {
        if (cold) forgetCounts(db);
        const t = performance.now();
        searchCache(db, ast, { ...opts, countOnly });
        out.push(performance.now() - t);
      }
      if (spent)
        for (const [sql, xs] of spent)
          line(
            `    ${countOnly ? "count_only" : "page"}: p50 ${ms(pct(xs, 50))} ms x${(xs.length / RUNS).toFixed(2)} ${sql.replace(/\s+/g, " ").slice(0, 120)}`,
          );
      spent = null;
      return out;
    };
    searchCache(db, ast, { ...opts, countOnly: true });
    if (EXPLAIN)
      for (const sql of prepared) {
        line(`    ${sql.replace(/\s+/g, " ")}`);
        const nulls = Array.from(sql.matchAll(/\?/g), () => null);
        for (const r of prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...nulls) as { detail: string }[])
          line(`      ${r.detail}`);
      }
    const page = times(false);
    const count = times(true);
    const coldPage = times(false, true);
    const coldCount = times(true, true);
    line(
      `${q.query} | ${res.count} | ${ms(pct(page, 50))} / ${ms(pct(page, 95))} | ${ms(pct(count, 50))} / ${ms(pct(count, 95))} | ${ms(pct(coldPage, 50))} / ${ms(pct(coldCount, 50))}`,
    );
  }
  db.close();
}

main();
