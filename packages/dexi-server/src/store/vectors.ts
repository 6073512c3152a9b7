import type Database from "better-sqlite3";

/** Stored embeddings: one Float32 BLOB per note, tagged with the model that produced it. */
export class VectorStore {
  constructor(private readonly db: Database.Database) {}

  put(noteId: number, model: string, vec: Float32Array): void {
    this.db
      .prepare(
        "INSERT INTO embeddings (note_id, model, vec) VALUES (?, ?, ?) ON CONFLICT (note_id) DO UPDATE SET model = excluded.model, vec = excluded.vec",
      )
      .run(noteId, model, Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength));
  }

  remove(noteId: number): void {
    this.db.prepare("DELETE FROM embeddings WHERE note_id = ?").run(noteId);
  }

  /** Removes every vector, of every model. */
  clear(): void {
    this.db.prepare("DELETE FROM embeddings").run();
  }

  get(noteId: number, model: string): Float32Array | undefined {
    const row = this.db
      .prepare("SELECT vec FROM embeddings WHERE note_id = ? AND model = ?")
      .get(noteId, model) as { vec: Buffer } | undefined;
    return row ? toFloat32(row.vec) : undefined;
  }

  /** Every vector of a model, in note id order. */
  *all(model: string): Generator<{ id: number; vec: Float32Array }> {
    const stmt = this.db.prepare(
      "SELECT note_id AS id, vec FROM embeddings WHERE model = ? ORDER BY note_id",
    );
    for (const row of stmt.iterate(model) as Iterable<{ id: number; vec: Buffer }>) {
      yield { id: row.id, vec: toFloat32(row.vec) };
    }
  }

  /** A counter that moves whenever any process changes a vector. */
  version(): string {
    return (
      this.db.prepare("SELECT value FROM meta WHERE key = 'vectors_version'").get() as { value: string }
    ).value;
  }

  /** Notes with no vector from this model (never embedded, or embedded by another model). */
  missing(model: string, limit: number, userId?: number): { id: number; title: string; body: string }[] {
    return this.db
      .prepare(
        `SELECT n.id, n.title, n.body FROM notes n LEFT JOIN embeddings e ON e.note_id = n.id
         WHERE (e.note_id IS NULL OR e.model != ?) ${userId === undefined ? "" : "AND n.user_id = ?"} ORDER BY n.id LIMIT ?`,
      )
      .all(...(userId === undefined ? [model, limit] : [model, userId, limit])) as {
      id: number;
      title: string;
      body: string;
    }[];
  }

  /**
   * Notes waiting for this model's vectors, taken for `leaseMs` by the caller. One process embeds
   * what one file holds, so here this is `missing`; PostgreSQL claims rows (see its store).
   */
  claimMissing(
    model: string,
    limit: number,
    _nowMs: number,
    _leaseMs: number,
  ): { id: number; title: string; body: string }[] {
    return this.missing(model, limit);
  }

  countMissing(model: string): number {
    return (
      this.db
        .prepare(
          "SELECT count(*) AS c FROM notes n LEFT JOIN embeddings e ON e.note_id = n.id WHERE e.note_id IS NULL OR e.model != ?",
        )
        .get(model) as { c: number }
    ).c;
  }

  models(): { model: string; count: number }[] {
    return this.db
      .prepare("SELECT model, count(*) AS count FROM embeddings GROUP BY model ORDER BY count DESC")
      .all() as {
      model: string;
      count: number;
    }[];
  }
}

function toFloat32(buf: Buffer): Float32Array {
  // Copy: the Buffer may share a pool and need not be 4-byte aligned.
  const out = new Float32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}
