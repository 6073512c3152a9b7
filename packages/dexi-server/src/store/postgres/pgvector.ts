import { createHash } from "node:crypto";
import { byScore } from "../../embed/vector-index.js";
import type { VectorHit, VectorSearch } from "../port.js";
import { type Scope, scopeSql } from "../scope.js";
import type { Pg } from "./db.js";
import { PGVECTOR_SETUP } from "./migrations.js";

/** Vectors given their pgvector copy per statement while filling the column. */
const FILL_BATCH = 500;
/** How long a "not above the threshold yet" answer is trusted before the vectors are counted again. */
const HNSW_RECHECK_MS = 60_000;
/**
 * What pgvector's in-memory HNSW graph holds per vector besides the vector itself (8 + 4 x dims
 * bytes), at the default m = 16: measured 520-560 bytes at 512 dims (the first 1 MB of a graph held
 * 402 vectors, the first 63 MB 25,656).
 */
const HNSW_ELEMENT_OVERHEAD = 600;
/** Room over the estimate, for vectors written between the count and the build's scan. */
const HNSW_MEMORY_HEADROOM = 1.25;
/** The most maintenance_work_mem an HNSW build is given unless told otherwise (DEXI_HNSW_BUILD_MEMORY). */
export const DEFAULT_HNSW_BUILD_MEMORY_MB = 1024;

/**
 * maintenance_work_mem, in kB, that holds the HNSW graph of `count` vectors of `dims` in memory: past
 * it pgvector writes the rest of the graph to disk as it goes ("hnsw graph no longer fits into
 * maintenance_work_mem"), several times slower (40,000 vectors of 512 dims on PGlite: 175 s with
 * the default 64 MB, spilling after 25,656, against 73 s in memory). pgvector counts the graph in
 * whole 1 MB blocks and stops once they reach the setting, so the setting is one block above them.
 */
export function hnswBuildMemoryKb(count: number, dims: number): number {
  const bytes = count * (8 + 4 * dims + HNSW_ELEMENT_OVERHEAD) * HNSW_MEMORY_HEADROOM;
  return (Math.ceil(bytes / 1024 / 1024) + 1) * 1024;
}

/**
 * pgvector's text form: each float32 printed as the shortest decimal that parses back to its bits
 * (-0 spelt out: JavaScript prints it "0", which would turn the `vector` copy's sign bit off).
 */
export function vectorLiteral(vec: Float32Array): string {
  return `[${Array.from(vec, (x) => (Object.is(x, -0) ? "-0" : String(x))).join(",")}]`;
}

/** What the database offers: pgvector's version when the extension and the `v` column are in place. */
export interface PgvectorState {
  version: string;
}

/**
 * Takes up pgvector when the server offers it (creating the extension and the column now if the
 * migration ran before it was installed); undefined when vectors must be scored in process.
 */
export async function detectPgvector(db: Pg): Promise<PgvectorState | undefined> {
  const look = async () =>
    (await db.get<{ available: boolean; version: string | null; col: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available,
         (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS version,
         EXISTS (SELECT 1 FROM information_schema.columns
           WHERE table_schema = current_schema() AND table_name = 'embeddings' AND column_name = 'v') AS col`,
    ))!;
  let state = await look();
  if (state.available && !(state.version !== null && state.col)) {
    await db.run(PGVECTOR_SETUP);
    state = await look();
  }
  return state.version !== null && state.col ? { version: state.version } : undefined;
}

/**
 * Gives each vector that lacks it its pgvector copy (vectors `dexi migrate` copied as bytes, or
 * written while the extension was missing), in note order and in batches. A vector pgvector cannot
 * hold (no dims) is left out of pgvector search rather than stopping the store from opening.
 */
export async function fillVectorColumn(db: Pg): Promise<number> {
  let after = -1;
  let filled = 0;
  for (;;) {
    const rows = await db.all<{ id: number; vec: Buffer }>(
      "SELECT note_id AS id, vec FROM embeddings WHERE v IS NULL AND note_id > ? ORDER BY note_id LIMIT ?",
      [after, FILL_BATCH],
    );
    if (rows.length === 0) return filled;
    after = rows[rows.length - 1]!.id;
    const usable = rows.filter((r) => r.vec.byteLength >= 4 && r.vec.byteLength % 4 === 0);
    if (usable.length === 0) continue;
    filled += await db.run(
      "UPDATE embeddings e SET v = x.v::vector FROM unnest(?::bigint[], ?::text[]) AS x(id, v) WHERE e.note_id = x.id",
      [usable.map((r) => r.id), usable.map((r) => vectorLiteral(bytesToFloat32(r.vec)))],
    );
  }
}

function bytesToFloat32(buf: Buffer): Float32Array {
  const out = new Float32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;

interface HnswState {
  ready: boolean;
  checkedMs: number;
  building?: Promise<void>;
}

/**
 * Nearest notes by pgvector in one query, the reader's access rules in its WHERE (so a reader whose
 * nearest neighbours are mostly invisible still gets its `k`). Exact by default: every visible vector
 * of the model is compared (`<=>`, cosine distance) and ordered exactly as the in-process index orders
 * (similarity at 1e-6, then note id). With an HNSW threshold, a model holding at least that many
 * vectors gets an HNSW index (built in the background; exact meanwhile), searched with iterative scans
 * (pgvector 0.8+) and, when a filtered scan still stops short of `k`, answered exactly instead.
 */
export class PgVectorSearch implements VectorSearch {
  readonly label: string;
  private readonly hnsw = new Map<string, HnswState>();

  /**
   * `buildMemoryMb`: the most maintenance_work_mem an index build asks for (0: the server's setting
   * only); a build asks for what its graph needs, and never for less than the server's setting.
   */
  constructor(
    private readonly db: Pg,
    private readonly state: PgvectorState,
    private readonly threshold: number | undefined,
    private readonly log: (line: string) => void,
    private readonly buildMemoryMb: number = DEFAULT_HNSW_BUILD_MEMORY_MB,
  ) {
    this.label = threshold === undefined ? "pgvector exact" : `pgvector hnsw (threshold ${threshold})`;
  }

  async nearest(
    scope: Scope,
    model: string,
    query: Float32Array,
    k: number,
    exclude?: number,
  ): Promise<VectorHit[]> {
    if (k <= 0 || query.length === 0) return [];
    if (await this.useHnsw(model, query.length)) {
      const hits = await this.approximate(scope, model, query, k, exclude);
      if (hits.length >= k) return hits.sort(byScore);
    }
    return this.exact(scope, model, query, k, exclude);
  }

  /**
   * Every visible vector of the model compared; the order is VectorIndex's (byScore) in SQL. OFFSET 0
   * keeps the subquery from being flattened into the ORDER BY, where the distance was computed a
   * second time, reading `v` out of TOAST again (52 -> 36 ms at 5,000 notes on PGlite).
   */
  exact(scope: Scope, model: string, query: Float32Array, k: number, exclude?: number): Promise<VectorHit[]> {
    const s = scopeSql(scope);
    const skip = exclude === undefined ? "" : " AND e.note_id <> ?";
    return this.db.all<VectorHit>(
      `SELECT id, cosine FROM (
         SELECT e.note_id AS id, 1 - (e.v <=> ?::vector) AS cosine
         FROM embeddings e JOIN notes n ON n.id = e.note_id
         WHERE e.model = ? AND e.v IS NOT NULL AND vector_dims(e.v) = ? AND ${s.sql}${skip}
         OFFSET 0
       ) h ORDER BY floor(cosine * 1e6 + 0.5) DESC, id ASC LIMIT ?`,
      [
        vectorLiteral(query),
        model,
        query.length,
        ...s.params,
        ...(exclude === undefined ? [] : [exclude]),
        k,
      ],
    );
  }

  /** The HNSW index's answer (its partial-index predicate written out so the planner can use it). */
  private approximate(
    scope: Scope,
    model: string,
    query: Float32Array,
    k: number,
    exclude?: number,
  ): Promise<VectorHit[]> {
    const d = query.length;
    const s = scopeSql(scope);
    const skip = exclude === undefined ? "" : " AND e.note_id <> ?";
    const lit = vectorLiteral(query);
    const settings: Record<string, string> = {
      "hnsw.ef_search": String(Math.max(40, 4 * k)),
      // Above the threshold the index is what was asked for; statistics that lag a bulk import must
      // not turn this into a full scan (the exact query below is the full scan, when one is wanted).
      enable_seqscan: "off",
    };
    if (atLeast(this.state.version, 0, 8)) settings["hnsw.iterative_scan"] = "strict_order";
    return this.db.read(settings, () =>
      this.db.all<VectorHit>(
        `SELECT e.note_id AS id, 1 - (e.v::vector(${d}) <=> ?::vector(${d})) AS cosine
         FROM embeddings e JOIN notes n ON n.id = e.note_id
         WHERE ${hnswPredicate(model, d, "e.")} AND ${s.sql}${skip}
         ORDER BY e.v::vector(${d}) <=> ?::vector(${d}) LIMIT ?`,
        [lit, ...s.params, ...(exclude === undefined ? [] : [exclude]), lit, k],
      ),
    );
  }

  /** Whether the model's HNSW index is built; starts building it once the model reaches the threshold. */
  private async useHnsw(model: string, dims: number): Promise<boolean> {
    if (this.threshold === undefined) return false;
    const key = `${model}\u0000${dims}`;
    const known = this.hnsw.get(key);
    if (known && (known.ready || known.building || Date.now() - known.checkedMs < HNSW_RECHECK_MS))
      return known.ready;
    const st: HnswState = { ready: false, checkedMs: Date.now() };
    this.hnsw.set(key, st);
    if (await this.indexValid(model, dims)) {
      st.ready = true;
      return true;
    }
    const count = (await this.db.get<{ c: number }>(
      "SELECT count(*) AS c FROM embeddings WHERE model = ? AND v IS NOT NULL AND vector_dims(v) = ?",
      [model, dims],
    ))!.c;
    if (count >= this.threshold) {
      st.building = this.build(model, dims, count)
        .then(
          () => {
            st.ready = true;
          },
          (err: Error) => this.log(`dexi: building the HNSW index of ${model} failed: ${err.message}`),
        )
        .finally(() => {
          st.building = undefined;
          st.checkedMs = Date.now();
        });
    }
    return false;
  }

  private async indexValid(model: string, dims: number): Promise<boolean> {
    const row = await this.db.get<{ valid: boolean }>(
      "SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ?",
      [indexName(model, dims)],
    );
    return row?.valid === true;
  }

  /**
   * CONCURRENTLY, so notes keep being written while it builds, on a session of its own given the
   * maintenance_work_mem the graph needs (up to `buildMemoryMb`), so the graph is built in memory.
   * If the server cannot give that much (a parallel build takes it as shared memory at once, more
   * than e.g. Docker's 64 MB /dev/shm), the build runs again on the server's own setting.
   */
  private async build(model: string, dims: number, count: number): Promise<void> {
    const name = indexName(model, dims);
    const started = Date.now();
    const memoryKb = await this.buildMemory(count, dims);
    const given = memoryKb === undefined ? "" : `, maintenance_work_mem ${Math.ceil(memoryKb / 1024)} MB`;
    this.log(
      `dexi: building the HNSW index of ${model} (${count} vectors${given}); searches are exact until it is ready`,
    );
    try {
      await this.createIndex(name, model, dims, memoryKb);
    } catch (err) {
      if (memoryKb === undefined || !insufficientResources(err)) throw err;
      this.log(
        `dexi: the HNSW build of ${model} could not have ${Math.ceil(memoryKb / 1024)} MB (${(err as Error).message}); building it with the server's maintenance_work_mem`,
      );
      await this.createIndex(name, model, dims, undefined);
    }
    this.log(`dexi: HNSW index of ${model} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  /** The maintenance_work_mem (kB) to give a build, or undefined when the server's setting is enough. */
  private async buildMemory(count: number, dims: number): Promise<number | undefined> {
    if (this.buildMemoryMb <= 0) return undefined;
    const want = Math.min(hnswBuildMemoryKb(count, dims), this.buildMemoryMb * 1024);
    const server = (await this.db.get<{ kb: number }>(
      "SELECT setting::bigint AS kb FROM pg_settings WHERE name = 'maintenance_work_mem'",
    ))!.kb;
    return want > server ? want : undefined;
  }

  /** A failed build leaves an invalid index behind: it is dropped first. */
  private async createIndex(name: string, model: string, dims: number, memoryKb: number | undefined) {
    const invalid = await this.db.get(
      "SELECT 1 FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ? AND NOT i.indisvalid",
      [name],
    );
    if (invalid) await this.db.run(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await this.db.session(
      memoryKb === undefined ? {} : { maintenance_work_mem: `${memoryKb}kB` },
      (run) =>
        run(
          `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON embeddings
           USING hnsw ((v::vector(${dims})) vector_cosine_ops) WHERE ${hnswPredicate(model, dims, "")}`,
        ),
      // pgvector says here when the graph outgrew maintenance_work_mem (and the build slowed down).
      (notice) => this.log(`dexi: HNSW build of ${model}: ${notice}`),
    );
  }

  /** Resolves when no HNSW index is being built (close waits for it; tests and the benchmark too). */
  async settled(): Promise<void> {
    await Promise.all([...this.hnsw.values()].map((s) => s.building));
  }
}

/** SQLSTATE class 53: out of memory, disk (or shared memory) full, too many connections. */
function insufficientResources(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("53");
}

/** The partial index's predicate; a query must repeat it word for word for the planner to use the index. */
function hnswPredicate(model: string, dims: number, alias: string): string {
  return `${alias}model = ${quote(model)} AND vector_dims(${alias}v) = ${dims}`;
}

/** One index per model and size; the name is Dexi's own and fits PostgreSQL's 63 bytes. */
export function indexName(model: string, dims: number): string {
  return `embeddings_hnsw_${createHash("md5").update(model).digest("hex").slice(0, 12)}_${dims}`;
}

function atLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split(".").map(Number);
  return a > major || (a === major && b >= minor);
}
