/**
 * semantic_search timings on PGlite with pgvector, exact and through HNSW, for the benchmark to report
 * beside SQLite's (src/bench/run.ts calls `benchPgvector`). Notes are generated in SQL, vectors are
 * random unit vectors written as the store writes them (bytes and `vector`); every query runs through
 * NotesService.semantic with a random unit query vector in place of a model (the model's time is the
 * same on every store, and the SQLite rows measure it).
 */
import { NotesService } from "../domain/notes.js";
import type { Embedder } from "../embed/types.js";
import { PgStore } from "../store/postgres/store.js";

const MODEL = "bench-random";
/** Notes written per INSERT while loading. */
const BATCH = 500;
/** One note in this many is another user's (not shared): every query filters them out in SQL. */
const OTHER_EVERY = 4;
/** One own note in this many is in the folder a restricted reader is held to. */
const FOLDER_EVERY = 20;

export interface PgvectorRow {
  name: string;
  p50: number;
  p95: number;
}

export interface PgvectorTimings {
  notes: number;
  dims: number;
  /** Generating and writing the notes and vectors. */
  loadMs: number;
  /** Building the HNSW index (CREATE INDEX CONCURRENTLY). */
  hnswBuildMs: number;
  rows: PgvectorRow[];
}

/** A seeded generator, so two runs search the same vectors. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unitVector(rand: () => number, dims: number): Float32Array {
  const v = new Float32Array(dims);
  let sum = 0;
  for (let i = 0; i < dims; i++) {
    v[i] = rand() - 0.5;
    sum += v[i]! * v[i]!;
  }
  const norm = Math.sqrt(sum);
  for (let i = 0; i < dims; i++) v[i]! /= norm;
  return v;
}

/** Stands in for the model: each query text gets the next random unit vector. */
class RandomQueries implements Embedder {
  readonly id = MODEL;
  private readonly rand = random(777);
  constructor(readonly dims: number) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map(() => unitVector(this.rand, this.dims));
  }
}

/** pgvector's binary form of a `vector` (vector_recv): dims and a zero as int16, then each float32, big-endian. */
export function vectorBinary(vec: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(4 + 4 * vec.length);
  out.writeInt16BE(vec.length, 0);
  out.writeInt16BE(0, 2);
  for (let i = 0; i < vec.length; i++) out.writeFloatBE(vec[i]!, 4 + 4 * i);
  return out;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Fills an empty store: `notes` notes, a quarter another user's, 5% of the rest in folder "Work". */
async function load(store: PgStore, notes: number, dims: number): Promise<{ ann: number }> {
  const ann = (await store.accounts.ensureUser("ann", 0)).id;
  const bob = (await store.accounts.ensureUser("bob", 0)).id;
  const folder = await store.db.get<{ id: number }>(
    "INSERT INTO folders (user_id, name, name_key) VALUES (?, 'Work', 'work') RETURNING id",
    [ann],
  );
  await store.db.run(
    `INSERT INTO notes (uuid, user_id, folder_id, title, body, source, created_ms, updated_ms)
     SELECT gen_random_uuid()::text, CASE WHEN i % ?::int = 0 THEN ?::bigint ELSE ?::bigint END,
       CASE WHEN i % ?::int <> 0 AND i % ?::int = 1 THEN ?::bigint END, 'note ' || i, 'body of note ' || i,
       'note', i, i
     FROM generate_series(1, ?::int) AS i`,
    [OTHER_EVERY, bob, ann, OTHER_EVERY, FOLDER_EVERY, folder!.id, notes],
  );
  // One counter bump for the whole load instead of one per row (the counter row's versions would pile up).
  await store.db.run("ALTER TABLE embeddings DISABLE TRIGGER USER");
  const rand = random(12345);
  const ids = (await store.db.all<{ id: number }>("SELECT id FROM notes ORDER BY id")).map((r) => r.id);
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    const vecs = batch.map(() => unitVector(rand, dims));
    // Both vectors as binary parameters (pg sends a Buffer in binary format): PGlite spends ~1 ms
    // parsing one 512-dim `vector` literal, 90% of this load at 100k; the binary form holds the same
    // float32 bits the store's literal parses back to.
    await store.db.run(
      `INSERT INTO embeddings (note_id, model, vec, v) VALUES ${batch.map(() => "(?::bigint, ?, ?::bytea, ?::vector)").join(", ")}`,
      batch.flatMap((id, j) => {
        const v = vecs[j]!;
        return [id, MODEL, Buffer.from(v.buffer, v.byteOffset, v.byteLength), vectorBinary(v)];
      }),
    );
  }
  await store.db.run("ALTER TABLE embeddings ENABLE TRIGGER USER");
  await store.db.run("UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'vectors_version'");
  await store.db.run("ANALYZE");
  return { ann };
}

/**
 * Starts a PGlite, loads `notes` notes with `dims`-dimension vectors, and times `queries`
 * semantic_search calls (size 10) for each row: unrestricted and restricted to a folder, exact and
 * through HNSW. About 6 minutes at 100k notes on 2 cores: the HNSW build (~4), the exact rows (~1.5),
 * the load (~20 s).
 */
export async function benchPgvector(
  options: { notes?: number; dims?: number; queries?: number; log?: (line: string) => void } = {},
): Promise<PgvectorTimings> {
  const notes = options.notes ?? 100_000;
  const dims = options.dims ?? 512;
  const queries = options.queries ?? 50;
  const log = options.log ?? (() => {});
  // Loaded here, not at the top: PGlite is a dev dependency, and the benchmark run imports this module.
  const { startPglite } = await import("./pglite.js");
  const pglite = await startPglite();
  try {
    const viewers = (ann: number) => [
      { name: "unrestricted", viewer: { userId: ann, scopes: [] } },
      { name: "folder Work", viewer: { userId: ann, scopes: [], restriction: { folder: "Work" } } },
    ];
    const rows: PgvectorRow[] = [];
    const timeAll = async (store: PgStore, label: string, ann: number) => {
      const service = new NotesService({ store, embedder: new RandomQueries(dims), log });
      for (const { name, viewer } of viewers(ann)) {
        await service.semantic(viewer, "warm up", 10);
        const xs: number[] = [];
        for (let i = 0; i < queries; i++) {
          const t = performance.now();
          await service.semantic(viewer, `query ${i}`, 10);
          xs.push(performance.now() - t);
        }
        rows.push({ name: `semantic_search, ${label}, ${name}`, p50: pct(xs, 50), p95: pct(xs, 95) });
      }
    };
    const exact = await PgStore.open(pglite.url, { log });
    let loadMs: number;
    let ann: number;
    try {
      const t = performance.now();
      ({ ann } = await load(exact, notes, dims));
      loadMs = performance.now() - t;
      await timeAll(exact, "pgvector exact", ann);
    } finally {
      await exact.close();
    }
    const hnsw = await PgStore.open(pglite.url, { hnswThreshold: 0, log });
    try {
      const t = performance.now();
      // The first search starts the build; searches are exact until it is ready.
      await new NotesService({ store: hnsw, embedder: new RandomQueries(dims), log }).semantic(
        { userId: ann, scopes: [] },
        "start the build",
        10,
      );
      await hnsw.vectorSearch?.settled();
      const hnswBuildMs = performance.now() - t;
      await timeAll(hnsw, "pgvector hnsw", ann);
      return { notes, dims, loadMs, hnswBuildMs, rows };
    } finally {
      await hnsw.close();
    }
  } finally {
    await pglite.stop();
  }
}
