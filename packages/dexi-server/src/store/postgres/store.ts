import type { Store, VectorsPort } from "../port.js";
import { PgAccounts, PgRecords, PgTombstones } from "./accounts.js";
import { PgAuth } from "./auth.js";
import { Pg } from "./db.js";
import { migratePostgres } from "./migrations.js";
import { PgNotes } from "./notes.js";
import { detectPgvector, fillVectorColumn, PgVectorSearch, vectorLiteral } from "./pgvector.js";

/** Rows of vectors read per query while loading the in-process index. */
const VECTOR_BATCH = 2000;

/**
 * Float32 vectors as little-endian bytes, as the SQLite store keeps them; with pgvector, also as a
 * `vector` in the same row (written together, so the two never disagree).
 */
class PgVectors implements VectorsPort {
  constructor(
    private readonly db: Pg,
    private readonly pgvector: boolean,
  ) {}

  /**
   * Stores a note's vector and ends its claim, if any: the claim's work is done, and a live claim
   * would hide the note from the next backfill (another model, `reindex --force`) until it expired.
   */
  async put(noteId: number, model: string, vec: Float32Array): Promise<void> {
    const bytes = Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength);
    if (this.pgvector)
      await this.db.run(
        `WITH done AS (DELETE FROM embed_claims WHERE note_id = ?)
         INSERT INTO embeddings (note_id, model, vec, v) VALUES (?, ?, ?, ?::vector) ON CONFLICT (note_id) DO UPDATE SET model = excluded.model, vec = excluded.vec, v = excluded.v`,
        [noteId, noteId, model, bytes, vectorLiteral(vec)],
      );
    else
      await this.db.run(
        `WITH done AS (DELETE FROM embed_claims WHERE note_id = ?)
         INSERT INTO embeddings (note_id, model, vec) VALUES (?, ?, ?) ON CONFLICT (note_id) DO UPDATE SET model = excluded.model, vec = excluded.vec`,
        [noteId, noteId, model, bytes],
      );
  }

  async remove(noteId: number): Promise<void> {
    await this.db.run("DELETE FROM embeddings WHERE note_id = ?", [noteId]);
  }

  /** Every vector goes, and every claim with it: a forced reindex starts over. */
  async clear(): Promise<void> {
    await this.db.run("DELETE FROM embeddings");
    await this.db.run("DELETE FROM embed_claims");
  }

  async get(noteId: number, model: string): Promise<Float32Array | undefined> {
    const row = await this.db.get<{ vec: Buffer }>(
      "SELECT vec FROM embeddings WHERE note_id = ? AND model = ?",
      [noteId, model],
    );
    return row ? toFloat32(row.vec) : undefined;
  }

  /** Every vector of a model in note id order, read in batches so no query holds them all. */
  async each(model: string, visit: (id: number, vec: Float32Array) => void): Promise<void> {
    let after = 0;
    for (;;) {
      const rows = await this.db.all<{ id: number; vec: Buffer }>(
        "SELECT note_id AS id, vec FROM embeddings WHERE model = ? AND note_id > ? ORDER BY note_id LIMIT ?",
        [model, after, VECTOR_BATCH],
      );
      for (const r of rows) visit(r.id, toFloat32(r.vec));
      if (rows.length < VECTOR_BATCH) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  async version(): Promise<string> {
    return (await this.db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'vectors_version'"))!
      .value;
  }

  missing(
    model: string,
    limit: number,
    userId?: number,
  ): Promise<{ id: number; title: string; body: string }[]> {
    return this.db.all(
      `SELECT n.id, n.title, n.body FROM notes n LEFT JOIN embeddings e ON e.note_id = n.id
       WHERE (e.note_id IS NULL OR e.model <> ?) ${userId === undefined ? "" : "AND n.user_id = ?"} ORDER BY n.id LIMIT ?`,
      userId === undefined ? [model, limit] : [model, userId, limit],
    );
  }

  /**
   * Notes waiting for this model's vectors, claimed until `nowMs + leaseMs`: rows another instance is
   * claiming at the same moment are skipped (FOR UPDATE SKIP LOCKED), and a live claim of another
   * instance hides a note until it expires (an instance that died mid-batch leaves it to the next).
   */
  claimMissing(
    model: string,
    limit: number,
    nowMs: number,
    leaseMs: number,
  ): Promise<{ id: number; title: string; body: string }[]> {
    return this.db.all(
      `WITH picked AS (
         SELECT n.id FROM notes n LEFT JOIN embeddings e ON e.note_id = n.id
         LEFT JOIN embed_claims c ON c.note_id = n.id
         WHERE (e.note_id IS NULL OR e.model <> ?) AND (c.note_id IS NULL OR c.until_ms <= ?)
         ORDER BY n.id LIMIT ? FOR UPDATE OF n SKIP LOCKED
       ), claimed AS (
         INSERT INTO embed_claims (note_id, until_ms) SELECT id, ? FROM picked
         ON CONFLICT (note_id) DO UPDATE SET until_ms = excluded.until_ms
         WHERE embed_claims.until_ms <= ?
         RETURNING note_id
       )
       SELECT n.id, n.title, n.body FROM notes n JOIN claimed ON claimed.note_id = n.id ORDER BY n.id`,
      // The conflict's WHERE reads the latest committed claim: another instance that claimed a note
      // after this statement's snapshot was taken (its lock gone with its commit, so SKIP LOCKED let
      // the note through) keeps it, where a plain DO UPDATE took it over and embedded it twice
      [model, nowMs, limit, nowMs + leaseMs, nowMs],
    );
  }

  async countMissing(model: string): Promise<number> {
    return (await this.db.get<{ c: number }>(
      "SELECT count(*) AS c FROM notes n LEFT JOIN embeddings e ON e.note_id = n.id WHERE e.note_id IS NULL OR e.model <> ?",
      [model],
    ))!.c;
  }

  models(): Promise<{ model: string; count: number }[]> {
    return this.db.all("SELECT model, count(*) AS count FROM embeddings GROUP BY model ORDER BY count DESC");
  }
}

function toFloat32(buf: Buffer): Float32Array {
  const out = new Float32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

/** The PostgreSQL store: the same operations as the SQLite one, for several instances on one database. */
export class PgStore implements Store {
  readonly kind = "postgres" as const;
  readonly accounts: PgAccounts;
  readonly notes: PgNotes;
  readonly vectors: PgVectors;
  readonly records: PgRecords;
  readonly tombstones: PgTombstones;
  readonly auth: PgAuth;
  readonly vectorSearch: PgVectorSearch | undefined;

  private constructor(
    readonly db: Pg,
    vectorSearch: PgVectorSearch | undefined,
  ) {
    this.vectorSearch = vectorSearch;
    this.accounts = new PgAccounts(db);
    this.notes = new PgNotes(db);
    this.vectors = new PgVectors(db, vectorSearch !== undefined);
    this.records = new PgRecords(db);
    this.tombstones = new PgTombstones(db);
    this.auth = new PgAuth(db, this.tx);
  }

  /**
   * Connects and migrates (instances starting together migrate once), then takes up pgvector when
   * the server has it (filling the `vector` copy of vectors that lack one). `hnswThreshold`: build and
   * use an HNSW index for a model once it holds that many vectors (pgvector only); `hnswBuildMemoryMb`:
   * the most maintenance_work_mem such a build is given (default 1024; 0: the server's setting).
   */
  static async open(
    url: string,
    options: { hnswThreshold?: number; hnswBuildMemoryMb?: number; log?: (line: string) => void } = {},
  ): Promise<PgStore> {
    const db = new Pg(url);
    try {
      await migratePostgres(db.pool);
      const pgvector = await detectPgvector(db);
      if (!pgvector) return new PgStore(db, undefined);
      await fillVectorColumn(db);
      const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
      return new PgStore(
        db,
        new PgVectorSearch(db, pgvector, options.hnswThreshold, log, options.hnswBuildMemoryMb),
      );
    } catch (err) {
      await db.close();
      throw err;
    }
  }

  readonly tx = <T>(fn: () => Promise<T>): Promise<T> => this.db.tx(fn);

  async close(): Promise<void> {
    await this.vectorSearch?.settled();
    await this.db.close();
  }
}
