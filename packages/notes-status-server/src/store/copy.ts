/**
 * `migrate --from <sqlite file> --to <postgres url>`: copies every row of a SQLite store (notes with
 * their publishing state, claims and failed-run counts, tag rows, settings, the weekly plan) into an
 * empty PostgreSQL store in one transaction, then compares the counts of both sides, and rolls back if
 * any differs. The kept counts (note_counts) are rebuilt from the copied rows and compared too.
 */
import Database from "better-sqlite3";
import { pgTransaction } from "@mcpforge/toolkit";
import pg from "pg";
import { migrate } from "./db.js";
import { migratePostgres } from "./postgres.js";
import { NOTE_COLUMNS } from "./rows.js";

// The notes' own columns, then the store's claim, failure counter, back-off and delivery mark. source_note_id is copied in a
// second pass, once every note it may point at exists.
const COLUMNS = [
  ...NOTE_COLUMNS.filter((c) => c !== "source_note_id"),
  "claimed_until",
  "failed_runs",
  "retry_after",
  "delivering",
] as const;
const PG_TYPES: Record<string, string> = {
  auto_restack_after_hours: "float8",
  attempts: "int4",
  failed_runs: "int4",
};
const BATCH = 1000;

export interface CopyReport {
  notes: number;
  tags: number;
  slots: number;
  settings: number;
  /** (tag, status) counters that agree on both sides. */
  counts: number;
}

type Row = Record<string, unknown>;

export async function copySqliteToPostgres(from: string, to: string): Promise<CopyReport> {
  const src = new Database(from, { fileMustExist: true });
  const pool = new pg.Pool({ connectionString: to, max: 1 });
  pool.on("error", () => undefined);
  try {
    migrate(src); // an older SQLite file is brought to the schema this program copies from
    await migratePostgres(pool);
    return await pgTransaction<pg.PoolClient, CopyReport>(pool, (client) => copyRows(src, client));
  } finally {
    src.close();
    await pool.end();
  }
}

async function copyRows(src: Database.Database, dst: pg.PoolClient): Promise<CopyReport> {
  const existing = await dst.query<{ n: string }>(`SELECT count(*) AS n FROM notes`);
  if (Number(existing.rows[0]?.n) > 0) {
    throw new Error("The PostgreSQL database already has notes; migrate copies into an empty one only");
  }
  // The kept counts are built once from the rows below, not bumped by the triggers row by row: 100k
  // updates of the same few counter rows in one transaction leave chains of row versions that each
  // next update walks (minutes at 100k notes, against seconds). DDL is transactional: a failed copy
  // leaves the triggers as they were.
  await dst.query(`ALTER TABLE notes DISABLE TRIGGER notes_count`);
  await dst.query(`ALTER TABLE note_tags DISABLE TRIGGER note_tags_count`);
  // Batches of rows go in as one array per column; references to other notes are set in a second
  // pass, so a copy may come before its source.
  const notes = src.prepare(`SELECT ${COLUMNS.join(", ")}, source_note_id FROM notes ORDER BY rowid`);
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const arrays = COLUMNS.map((c) => batch.map((r) => r[c] ?? null));
    const unnest = COLUMNS.map((c, i) => `$${i + 1}::${PG_TYPES[c] ?? "text"}[]`).join(", ");
    await dst.query(`INSERT INTO notes (${COLUMNS.join(", ")}) SELECT * FROM unnest(${unnest})`, arrays);
    batch = [];
  };
  for (const row of notes.iterate() as IterableIterator<Row>) {
    batch.push(row);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  const refs = src
    .prepare(`SELECT id, source_note_id FROM notes WHERE source_note_id IS NOT NULL`)
    .all() as Array<{ id: string; source_note_id: string }>;
  for (let i = 0; i < refs.length; i += BATCH) {
    const part = refs.slice(i, i + BATCH);
    await dst.query(
      `UPDATE notes n SET source_note_id = r.src FROM unnest($1::text[], $2::text[]) AS r(id, src) WHERE n.id = r.id`,
      [part.map((r) => r.id), part.map((r) => r.source_note_id)],
    );
  }

  const tags = src.prepare(`SELECT note_id, tag, status, created_at FROM note_tags`).all() as Row[];
  for (let i = 0; i < tags.length; i += BATCH) {
    const part = tags.slice(i, i + BATCH);
    await dst.query(
      `INSERT INTO note_tags (note_id, tag, status, created_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])`,
      ["note_id", "tag", "status", "created_at"].map((c) => part.map((r) => r[c])),
    );
  }
  for (const s of src.prepare(`SELECT key, value FROM settings`).all() as Row[]) {
    await dst.query(`INSERT INTO settings (key, value) VALUES ($1, $2)`, [s["key"], s["value"]]);
  }
  for (const s of src.prepare(`SELECT weekday, time FROM queue_slots`).all() as Row[]) {
    await dst.query(`INSERT INTO queue_slots (weekday, time) VALUES ($1, $2)`, [s["weekday"], s["time"]]);
  }
  await dst.query(`DELETE FROM note_counts`);
  await dst.query(`INSERT INTO note_counts (tag, status, n)
    SELECT '', '', count(*) FROM notes
    UNION ALL SELECT '', status, count(*) FROM notes GROUP BY status
    UNION ALL SELECT tag, '', count(*) FROM note_tags GROUP BY tag
    UNION ALL SELECT tag, status, count(*) FROM note_tags GROUP BY tag, status`);
  await dst.query(`ALTER TABLE notes ENABLE TRIGGER notes_count`);
  await dst.query(`ALTER TABLE note_tags ENABLE TRIGGER note_tags_count`);
  return verify(src, dst);
}

async function verify(src: Database.Database, dst: pg.PoolClient): Promise<CopyReport> {
  const count = async (table: string, where = "") => {
    const a = (src.prepare(`SELECT count(*) AS n FROM ${table} ${where}`).get() as { n: number }).n;
    const b = Number(
      (await dst.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} ${where}`)).rows[0]?.n,
    );
    if (a !== b)
      throw new Error(`Copy check failed: ${table} ${where} has ${a} rows in SQLite, ${b} in PostgreSQL`);
    return a;
  };
  const report: CopyReport = {
    notes: await count("notes"),
    tags: await count("note_tags"),
    slots: await count("queue_slots"),
    settings: await count("settings"),
    counts: 0,
  };
  await count("notes", "WHERE source_note_id IS NOT NULL");
  const key = (r: { tag: string; status: string; n: number | string }) =>
    `${r.tag}\u0000${r.status}\u0000${Number(r.n)}`;
  const want = (
    src.prepare(`SELECT tag, status, n FROM note_counts WHERE n <> 0`).all() as Array<{
      tag: string;
      status: string;
      n: number;
    }>
  ).map(key);
  const got = new Set(
    (
      await dst.query<{ tag: string; status: string; n: number }>(
        `SELECT tag, status, n FROM note_counts WHERE n <> 0`,
      )
    ).rows.map(key),
  );
  const missing = want.filter((k) => !got.has(k));
  if (missing.length > 0 || got.size !== want.length) {
    throw new Error(
      `Copy check failed: ${missing.length || Math.abs(got.size - want.length)} tag/status counts differ`,
    );
  }
  report.counts = want.length;
  return report;
}
