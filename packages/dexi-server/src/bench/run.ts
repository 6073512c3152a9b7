/**
 * `npm run bench`: 100k generated notes, then the latency of the tools that matter against targets.
 * Bulk vectors are random unit vectors written straight into the store (embedding 100k notes with USE
 * would take an hour); every query embedding is real. Then the same notes in a throwaway PostgreSQL
 * (stores.ts) and the throughput of one and two instances on it (throughput.ts). About 10 minutes on
 * 2 cores; the DEXI_BENCH_* variables below shrink it for a smoke run.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectHttp, connectStdio } from "@mcpforge/toolkit/testing";
import { AuthService } from "../auth/service.js";
import { importItems } from "../domain/importing.js";
import { NotesService } from "../domain/notes.js";
import { parseTags } from "../domain/tags.js";
import { ms, pct, time } from "./measure.js";
import { freePort, mintToken } from "./oauth.js";
import { benchPgvector, type PgvectorTimings } from "./pgvector.js";
import { type BenchPostgres, callerOver, loadPostgres, measureColumn, PROBES } from "./stores.js";
import { type LoadResult, measureThroughput } from "./throughput.js";
import { WorkerPoolEmbedder } from "../embed/pool.js";
import { UseEmbedder } from "../embed/use.js";
import { markdownFiles, markdownItem } from "../importers/markdown.js";
import { createDexiServer, DEXI_SCOPES } from "../mcp/server.js";
import { SqliteStore } from "../store/index.js";

const env = (name: string, fallback: number) => Number(process.env[`DEXI_BENCH_${name}`] ?? fallback);
const N = env("NOTES", 100_000);
const MD_FILES = env("MD", 10_000);
/** 0 leaves out the PostgreSQL column and the throughput runs. */
const WITH_PG = env("PG", 1) !== 0;
const CLIENTS = env("CLIENTS", 50);
const LOAD_SECONDS = env("SECONDS", 60);
const WARM_SECONDS = env("WARM_SECONDS", 5);
/**
 * Notes of the pgvector rows, on PGlite (pgvector in WebAssembly, single connection), N unless told
 * otherwise: at 100,000 they take ~6 minutes on 2 cores, most of it the HNSW build; 0 leaves them out.
 */
const PGVECTOR_NOTES = env("PGVECTOR_NOTES", N);
const dir = mkdtempSync(join(tmpdir(), "dexi-bench-"));
const dbPath = join(dir, "bench.db");

let seed = 12345;
const rand = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
// English function words take the top ranks, then a long tail of made-up words up to a 20k vocabulary,
// with the words the queries use placed at ranks typical of topical words (each in roughly 0.3-3% of
// notes). A small vocabulary would put every query word in a sixth of all notes, which no real notes
// collection does; the "common word" row below measures that worst case anyway.
const HEAD = (
  "the of and to in is that for it as with was on be by this are or at from have an but not which they you one all were we " +
  "when there can more if out so what about up into time only new some could these two may first then do any like my now " +
  "over such our man me even most made after also did many before must through back years where much your way well down " +
  "should because each just those people how too little state good very make world still own see men work long get here " +
  "between both life being under never day same another know while last might us great old year off come since against go " +
  "came right used take three"
).split(" ");
const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "ta",
  "vo",
  "zi",
  "pe",
  "so",
  "di",
  "an",
  "el",
  "or",
  "us",
  "bre",
];
const VOCAB = Array.from({ length: 20_000 }, (_, i) => {
  if (i < HEAD.length) return HEAD[i]!;
  let w = "";
  for (let x = i; x > 0; x = Math.floor(x / SYLLABLES.length)) w += SYLLABLES[x % SYLLABLES.length];
  return `${w}x`; // the suffix keeps made-up words from colliding with real ones
});
const TOPICAL: [number, string][] = [
  [200, "project"],
  [220, "meeting"],
  [250, "learning"],
  [260, "search"],
  [280, "language"],
  [300, "garden"],
  [320, "research"],
  [350, "network"],
  [400, "recipe"],
  [450, "travel"],
  [500, "budget"],
  [600, "running"],
  [700, "database"],
  [800, "invoice"],
  [900, "pasta"],
  [1100, "vector"],
  [1200, "neural"],
  [1300, "spanish"],
  [1500, "piano"],
  [1800, "marathon"],
  [2000, "tomato"],
  [2500, "basil"],
];
for (const [rank, w] of TOPICAL) VOCAB[rank] = w;
// Zipf with s = 1: the chance of rank r falls as 1/r ("the" is ~7% of all words, as in English).
const word = () => VOCAB[Math.floor(VOCAB.length ** rand()) - 1]!;
const words = (n: number) => Array.from({ length: n }, word).join(" ");

const verdict = (p50: number, target: number) => `${p50 < target ? "met" : "NOT MET"} < ${target} ms`;
const loadNow = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

const STDIO_QUERIES = ["garden", "pasta recipe", "neural network", "budget", "vector search", "marathon"];

/** search_notes and list_notes through the built bin over stdio on `db` (a file or a postgres:// URL). */
async function overStdio(
  bin: string,
  db: string,
): Promise<{ search: number[]; newest: number[]; folderTag: number[] }> {
  const stdio = await connectStdio({ command: process.execPath, args: [bin, "--db", db, "--user", "bench"] });
  try {
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await stdio.client.callTool({ name, arguments: args });
      if (r.isError) throw new Error(`${name} over stdio: ${JSON.stringify(r.structuredContent)}`);
    };
    await call("search_notes", { query: "warm" });
    return {
      search: await time(200, (i) =>
        call("search_notes", { query: STDIO_QUERIES[i % STDIO_QUERIES.length]! }),
      ),
      newest: await time(200, (i) => call("list_notes", { page: 1 + (i % 5) })),
      folderTag: await time(200, (i) =>
        call("list_notes", { folder: `folder ${i % 20}`, tag: `t${i % 50}` }),
      ),
    };
  } finally {
    await stdio.close();
  }
}

const rows: [string, string, string, string][] = [];
function report(name: string, xs: number[], target?: number) {
  const p50 = pct(xs, 50);
  rows.push([name, ms(p50), ms(pct(xs, 95)), target === undefined ? "" : verdict(p50, target)]);
}

function randomUnit(dims: number): Float32Array {
  const v = new Float32Array(dims);
  let s = 0;
  for (let i = 0; i < dims; i++) {
    const x = rand() * 2 - 1;
    v[i] = x;
    s += x * x;
  }
  const norm = Math.sqrt(s);
  for (let i = 0; i < dims; i++) v[i]! /= norm;
  return v;
}

async function main() {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const loadAtStart = loadNow();
  const store = SqliteStore.open(dbPath);
  // Generation writes through the synchronous SQLite classes: 100k notes in big transactions.
  const gen = store.sync;
  const user = gen.accounts.ensureUser("bench", Date.now()).id;
  const folders = Array.from({ length: 20 }, (_, i) => gen.accounts.ensureFolder(user, `Folder ${i}`).id);
  const use = new UseEmbedder();
  const t0 = performance.now();
  const now = Date.now();
  for (let start = 0; start < N; start += 5000) {
    store.db
      .transaction(() => {
        for (let i = start; i < Math.min(N, start + 5000); i++) {
          const body = `${words(20 + Math.floor(rand() * 60))} #${word()} #t${i % 50} @p${i % 30}`;
          const created = now - Math.floor(rand() * 365 * 86_400_000);
          const id = gen.notes.insert({
            uuid: crypto.randomUUID(),
            userId: user,
            folderId: rand() < 0.7 ? folders[i % 20]! : null,
            title: words(3 + Math.floor(rand() * 5)),
            body,
            source: (["note", "note", "note", "bookmark", "email", "feed"] as const)[i % 6]!,
            sourceUrl: null,
            contentKey: null,
            createdMs: created,
            updatedMs: created,
            tags: parseTags(body),
          });
          gen.vectors.put(id, use.id, randomUnit(use.dims));
        }
      })
      .immediate();
    if ((start / 5000) % 4 === 0) log(`generated ${start + 5000} notes`);
  }
  const genSecs = (performance.now() - t0) / 1000;
  store.db.pragma("wal_checkpoint(TRUNCATE)");
  const dbBytes = statSync(dbPath).size;

  // Start-up is timed while this process is still small: spawning forks it, and a parent holding the
  // model and 200 MB of vectors would add its own page-table copying to the child's start-up.
  const mcp = fileURLToPath(new URL("../bin/dexi-mcp.js", import.meta.url));
  const starts: number[] = [];
  const lists: number[] = [];
  for (let i = 0; i < 7; i++) {
    const { init, list } = await spawnToInitialize(mcp, dbPath);
    starts.push(init);
    lists.push(list);
  }

  // What a user gets: the same calls through the built bin over stdio (a real SDK client), before the
  // in-process figures below, which leave out the transport and the JSON on both sides.
  const stdio = await overStdio(mcp, dbPath);
  report("search_notes over stdio (1-2 words)", stdio.search, 5);
  report("list_notes over stdio (newest)", stdio.newest, 5);
  report("list_notes over stdio (folder + tag)", stdio.folderTag, 5);

  // The same search over HTTP with an OAuth bearer token, through the built bin in OAuth mode, and the
  // token check alone (hash, token row, grant row) as every call pays it.
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const token = await mintToken(store, issuer, user);
  const verify = new AuthService(store.auth, { issuer, resource: `${issuer}/mcp` });
  await time(500, () => verify.verify(token));
  report("OAuth token verification per call", await time(5000, () => verify.verify(token)), 0.2);
  const server = spawn(process.execPath, [mcp, "--db", dbPath, "--http", `127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, MCP_HTTP_TOKEN: "" },
  });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    server.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("OAuth issuer")) resolve();
    });
    server.once("exit", (code) => reject(new Error(`dexi-mcp --http exited ${code}: ${err}`)));
  });
  const http = await connectHttp(`${issuer}/mcp`, token, { era: "modern" });
  const overHttp = async (args: Record<string, unknown>) => {
    const r = await http.client.callTool({ name: "search_notes", arguments: args });
    if (r.isError) throw new Error(`search_notes over HTTP: ${JSON.stringify(r.structuredContent)}`);
  };
  await overHttp({ query: "warm" });
  report(
    "search_notes over HTTP, bearer token (1-2 words)",
    await time(200, (i) => overHttp({ query: STDIO_QUERIES[i % STDIO_QUERIES.length]! })),
  );
  await http.close();
  server.kill();

  const notes = new NotesService({ store, embedder: use, log });
  const kit = createDexiServer({ notes, viewerFor: (c) => ({ userId: user, scopes: c.scopes }) });
  // The same notes seen through a folder restriction: the scoped (joined) query paths.
  const restricted = createDexiServer({
    notes,
    viewerFor: (c) => ({ userId: user, scopes: c.scopes, restriction: { folder: "Folder 3" } }),
  });
  const caller = { scopes: [...DEXI_SCOPES] };
  const call = async (name: string, args: Record<string, unknown>, server = kit) => {
    const r = await server.callTool(name, args, caller);
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
    return r.structuredContent as Record<string, unknown>;
  };
  const queries = [
    "garden",
    "pasta recipe",
    "neural network",
    "budget",
    "vector search",
    "marathon",
    "time work",
    "spanish language",
  ];
  await call("search_notes", { query: "warm" });
  report(
    "search_notes (1-2 words, total+page)",
    await time(200, (i) => call("search_notes", { query: queries[i % queries.length]! })),
    5,
  );
  const common = (await call("search_notes", { query: "people" }))["total"] as number;
  report(
    `search_notes ("people": in ${((100 * common) / N).toFixed(0)}% of notes)`,
    await time(50, () => call("search_notes", { query: "people" })),
  );
  report("list_notes (newest)", await time(200, (i) => call("list_notes", { page: 1 + (i % 5) })), 5);
  report(
    "list_notes (folder + tag)",
    await time(200, (i) => call("list_notes", { folder: `folder ${i % 20}`, tag: `t${i % 50}` })),
    5,
  );
  report("list_notes (period=week)", await time(100, () => call("list_notes", { period: "week" })), 5);
  log("loading the USE model and the vector cache...");
  const warm = performance.now();
  await call("semantic_search", { query: "warm up" });
  const coldMs = performance.now() - warm;
  report(
    "semantic_search (incl. query embedding)",
    await time(50, (i) => call("semantic_search", { query: `${queries[i % queries.length]} ideas ${i}` })),
    50,
  );
  const ids = ((await call("list_notes", { size: 50 }))["items"] as { id: string }[]).map((x) => x.id);
  report("find_similar", await time(50, (i) => call("find_similar", { note_id: ids[i % ids.length]! })));
  report(
    "search_notes (restricted to a folder)",
    await time(100, (i) => call("search_notes", { query: queries[i % queries.length]! }, restricted)),
    5,
  );
  report(
    "semantic_search (restricted to a folder)",
    await time(30, (i) =>
      call("semantic_search", { query: `${queries[i % queries.length]} ${i}` }, restricted),
    ),
    50,
  );
  const creates = await time(30, (i) =>
    call("create_note", { title: `bench ${i}`, text: `${words(100)} #bench` }),
  );
  const createsPerSec = 1000 / (creates.reduce((a, b) => a + b, 0) / creates.length);

  // 10k Markdown files: parse + write (vectors deferred), then the worker pool's embedding rate.
  const vault = join(dir, "vault");
  for (let f = 0; f < 10; f++) mkdirSync(join(vault, `f${f}`), { recursive: true });
  for (let i = 0; i < MD_FILES; i++) {
    writeFileSync(
      join(vault, `f${i % 10}`, `n${i}.md`),
      `---\ntitle: md ${i}\ntags: [imported]\n---\n${words(80)} #md${i % 9}\n`,
    );
  }
  const mdStore = SqliteStore.open(join(dir, "md.db"));
  const mdNotes = new NotesService({ store: mdStore, embedder: use, log });
  const mdUser = mdStore.sync.accounts.ensureUser("bench", Date.now()).id;
  const mdT = performance.now();
  const items = [...markdownFiles(vault)].map((f) => markdownItem(vault, f));
  const rep = await importItems(mdNotes, mdUser, items, { batch: 500 });
  const mdSecs = (performance.now() - mdT) / 1000;
  const pool = new WorkerPoolEmbedder({ provider: "use" }, 2);
  const sample = items.slice(0, 100).map((it) => `${it.title}\n\n${it.body}`);
  await pool.embed(sample.slice(0, 4));
  const embT = performance.now();
  await pool.embed(sample);
  const embedRate = sample.length / ((performance.now() - embT) / 1000);
  await pool.close();
  await mdStore.close();

  const pg = WITH_PG ? await postgresPart(store, use, user, mcp, ids, log) : undefined;
  await store.close();

  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(
    `\ndexi benchmark: ${N.toLocaleString("en")} notes (generated in ${genSecs.toFixed(1)} s), USE lite query embeddings`,
  );
  out(`${"tool".padEnd(42)}${"p50".padStart(12)}${"p95".padStart(12)}   target`);
  for (const [name, p50, p95, target] of rows)
    out(`${name.padEnd(42)}${p50.padStart(12)}${p95.padStart(12)}   ${target}`);
  out(
    `first semantic_search (model load + vector cache of ${N.toLocaleString("en")})  ${coldMs.toFixed(0)} ms`,
  );
  out(
    `create_note with embedding: ${createsPerSec.toFixed(1)} notes/s (p50 ${pct(creates, 50).toFixed(1)} ms)`,
  );
  out(
    `Markdown import: ${rep.created.toLocaleString("en")} files parsed and written in ${mdSecs.toFixed(1)} s; worker-pool embedding (2 workers) ${embedRate.toFixed(1)} notes/s -> ~${(rep.created / embedRate / 60).toFixed(1)} min to embed them all`,
  );
  out(
    `database size: ${(dbBytes / 1048576).toFixed(1)} MiB for ${N.toLocaleString("en")} notes with 512-dim vectors`,
  );
  out(
    `spawn to initialize answer: p50 ${pct(starts, 50).toFixed(0)} ms  ${verdict(pct(starts, 50), 300)}; to the tools/list answer after it: p50 ${pct(lists, 50).toFixed(0)} ms`,
  );
  if (pg) printPostgres(pg, out);
  else out("\nPostgreSQL: left out (DEXI_BENCH_PG=0)");
  out(`load average (1, 5, 15 min) at start: ${loadAtStart}; at end: ${loadNow()}`);
  rmSync(dir, { recursive: true, force: true });
}

interface PostgresPart {
  pgvector: PgvectorTimings | undefined;
  loadSecs: number;
  sqlite: Awaited<ReturnType<typeof measureColumn>>;
  postgres: Awaited<ReturnType<typeof measureColumn>>;
  /** What a user gets on PostgreSQL: the built bin over stdio (SQLite's are in the first table). */
  stdio: Awaited<ReturnType<typeof overStdio>>;
  throughput: LoadResult[];
}

/**
 * The SQLite file copied into a throwaway PostgreSQL; the store probes on both, one after the other
 * on the same notes; then the throughput of one and two instances on the PostgreSQL copy.
 */
async function postgresPart(
  store: SqliteStore,
  use: UseEmbedder,
  user: number,
  bin: string,
  noteIds: string[],
  log: (s: string) => void,
): Promise<PostgresPart> {
  log("copying the notes into a throwaway PostgreSQL 15...");
  let pg: BenchPostgres | undefined;
  try {
    pg = await loadPostgres(dbPath);
    const base = pg;
    log(`copied in ${base.loadSecs.toFixed(1)} s; the store column...`);
    const sqlite = await measureColumn(callerOver(store, use, user, log));
    const postgres = await measureColumn(callerOver(base.store, use, user, log));
    log("the built bin over stdio on PostgreSQL...");
    const stdio = await overStdio(bin, base.url);
    const throughput = await measureThroughput({
      bin,
      url: base.url,
      clients: CLIENTS,
      seconds: LOAD_SECONDS,
      warmSeconds: WARM_SECONDS,
      mintToken: (issuer) => mintToken(base.store, issuer, user),
      noteIds,
      log,
    });
    const pgvector = PGVECTOR_NOTES > 0 ? await benchPgvector({ notes: PGVECTOR_NOTES, log }) : undefined;
    return { pgvector, loadSecs: base.loadSecs, sqlite, postgres, stdio, throughput };
  } finally {
    await pg?.stop();
  }
}

function printPostgres(pg: PostgresPart, out: (s: string) => void): void {
  out(
    `\nSQLite and PostgreSQL 15, the same notes, in process, then the built bin over stdio on PostgreSQL (SQLite's stdio rows are above; copied by dexi migrate's code + VACUUM ANALYZE in ${pg.loadSecs.toFixed(1)} s)`,
  );
  out(
    `${"tool".padEnd(38)}${"SQLite p50".padStart(12)}${"p95".padStart(11)}${"PG p50".padStart(11)}${"p95".padStart(11)}   target (PostgreSQL)`,
  );
  for (const p of PROBES) {
    const a = pg.sqlite.samples.get(p.name)!;
    const b = pg.postgres.samples.get(p.name)!;
    out(
      `${p.name.padEnd(38)}${ms(pct(a, 50)).padStart(12)}${ms(pct(a, 95)).padStart(11)}${ms(pct(b, 50)).padStart(11)}${ms(pct(b, 95)).padStart(11)}   ${p.target === undefined ? "" : verdict(pct(b, 50), p.target)}`,
    );
  }
  const stdioRows: [string, number[]][] = [
    ["search_notes over stdio (1-2 words)", pg.stdio.search],
    ["list_notes over stdio (newest)", pg.stdio.newest],
    ["list_notes over stdio (folder + tag)", pg.stdio.folderTag],
  ];
  for (const [name, xs] of stdioRows) {
    out(
      `${name.padEnd(38)}${"".padStart(12)}${"".padStart(11)}${ms(pct(xs, 50)).padStart(11)}${ms(pct(xs, 95)).padStart(11)}   ${verdict(pct(xs, 50), 5)}`,
    );
  }
  out(
    `first semantic_search (vector cache read from the store): SQLite ${pg.sqlite.coldSemanticMs.toFixed(0)} ms, PostgreSQL ${pg.postgres.coldSemanticMs.toFixed(0)} ms`,
  );
  const v = pg.pgvector;
  if (!v) out("pgvector: left out (DEXI_BENCH_PGVECTOR_NOTES=0)");
  else {
    out(
      `\npgvector on PGlite (WebAssembly, one connection; no pgvector package for Debian 12's PostgreSQL), ${v.notes.toLocaleString("en")} notes, ${v.dims} dims: loaded in ${(v.loadMs / 1000).toFixed(1)} s, HNSW built in ${(v.hnswBuildMs / 1000).toFixed(1)} s`,
    );
    for (const r of v.rows)
      out(`${r.name.padEnd(58)}p50 ${ms(r.p50).padStart(9)}  p95 ${ms(r.p95).padStart(9)}`);
  }

  const [one, two] = pg.throughput;
  out(
    `\nthroughput on PostgreSQL: ${CLIENTS} clients (recorded SDK requests replayed over keep-alive HTTP, one process), spread directly over the instances, ${LOAD_SECONDS} s after ${WARM_SECONDS} s of warm-up; 90% reads, 10% writes`,
  );
  for (const r of pg.throughput) {
    out(
      `${`${r.instances} instance${r.instances > 1 ? "s" : ""}`.padEnd(12)}${r.perSecond.toFixed(0).padStart(6)} calls/s  p50 ${ms(r.p50)}  p99 ${ms(r.p99)}  ${r.calls} calls, ${r.errors} failed${r.firstError ? ` (first: ${r.firstError.slice(0, 120)})` : ""}; load average ${r.load.toFixed(2)}; instances ${r.instanceCores.toFixed(2)} cores, load generator ${r.generatorCores.toFixed(2)} cores`,
    );
  }
  if (one && two) {
    const ratio = two.perSecond / one.perSecond;
    out(`two instances / one: ${ratio.toFixed(2)}x  ${ratio >= 1.6 ? "met" : "NOT MET"} >= 1.6x`);
  }
}

/** Milliseconds from spawn to the `initialize` answer, and to the `tools/list` answer sent right after it. */
function spawnToInitialize(bin: string, db: string): Promise<{ init: number; list: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let init = 0;
    let buffered = "";
    const child = spawn(process.execPath, [bin, "--db", db], { stdio: ["pipe", "pipe", "ignore"] });
    const send = (msg: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...msg })}\n`);
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const msg = JSON.parse(buffered.slice(0, nl)) as { id?: number };
        buffered = buffered.slice(nl + 1);
        if (msg.id === 1) {
          init = performance.now() - t0;
          send({ method: "notifications/initialized" });
          send({ id: 2, method: "tools/list" });
        } else if (msg.id === 2) {
          child.kill();
          resolve({ init, list: performance.now() - t0 });
        }
      }
    });
    child.on("error", reject);
    // A bin that dies before answering would otherwise leave the bench waiting on nothing.
    child.on("exit", (code) => reject(new Error(`${bin} exited (${code}) before answering tools/list`)));
    send({
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "0" },
      },
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
