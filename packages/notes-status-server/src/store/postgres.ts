import { AsyncLocalStorage } from "node:async_hooks";
import { migratePg, pgTransaction } from "@mcpforge/toolkit";
import pg from "pg";
import type { NoteStatus } from "../domain/status.js";
import type {
  ListFilter,
  Note,
  NoteDetail,
  NotesRepository,
  Page,
  QueueSettings,
  WeeklySlots,
} from "../domain/types.js";
import { PG_MIGRATIONS } from "./pg-migrations.js";
import {
  DEFAULT_SETTINGS,
  LIST_COLUMNS,
  type NoteRow,
  NOTE_COLUMNS,
  toDetail,
  toNote,
  toParams,
} from "./rows.js";

/**
 * One key for every write transaction of this store: they run one at a time across all instances, as
 * SQLite's BEGIN IMMEDIATE makes them run in one file. A read-then-write (schedule_notes checking a
 * note's status) then sees no other writer in between, and transactions that bump the same counters in
 * different orders cannot deadlock. The number is arbitrary; it only has to be this server's own.
 */
const WRITE_LOCK = 7_315_402_117;
/** Held while migrating, so instances starting together migrate once. */
const MIGRATE_LOCK = 7_315_402_118;

type Queryable = pg.Pool | pg.PoolClient;

interface TxScope {
  client: pg.PoolClient;
  open: boolean;
}

const LIST = LIST_COLUMNS.split(", ")
  .map((c) => `n.${c}`)
  .join(", ");
const INSERT_SQL = `INSERT INTO notes (${NOTE_COLUMNS.join(", ")}) VALUES (${NOTE_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`;
// failed_runs counts the failed runs since lastError was last cleared: every success and every fresh
// start (scheduling, leaving failed) clears lastError, and so ends the count and the back-off (retry_after).
const UPDATE_SQL = `UPDATE notes SET ${NOTE_COLUMNS.slice(1)
  .map((c, i) => `${c} = $${i + 2}`)
  .join(", ")},
  failed_runs = CASE WHEN $${NOTE_COLUMNS.indexOf("last_error") + 1}::text IS NULL THEN 0 ELSE failed_runs END,
  retry_after = CASE WHEN $${NOTE_COLUMNS.indexOf("last_error") + 1}::text IS NULL THEN NULL ELSE retry_after END
  WHERE id = $1`;

function values(n: NoteDetail): unknown[] {
  const p = toParams(n) as Record<string, unknown>;
  return NOTE_COLUMNS.map((c) => p[c]);
}

const NUL = "\u0000";

/** pg returns bigint (count) as text; every count here fits a JS number. */
const int = (v: unknown): number => Number(v);

/**
 * The PostgreSQL implementation of the domain's repository, over a pool of connections. A transaction
 * holds one pooled connection for its whole async flow (AsyncLocalStorage), so every repository call
 * from inside it runs on that connection.
 */
export class PgNotesRepository implements NotesRepository {
  readonly kind = "postgresql" as const;
  private readonly scope = new AsyncLocalStorage<TxScope>();

  constructor(private readonly pool: pg.Pool) {}

  private db(): Queryable {
    const tx = this.scope.getStore();
    return tx?.open ? tx.client : this.pool;
  }

  private async rows<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.db().query(sql, params)).rows as R[];
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()?.open) return fn(); // part of the enclosing transaction
    return pgTransaction<pg.PoolClient, T>(this.pool, async (client) => {
      const tx: TxScope = { client, open: true };
      try {
        await client.query("SELECT pg_advisory_xact_lock($1)", [WRITE_LOCK]);
        return await this.scope.run(tx, fn);
      } finally {
        // (what `fn` left running goes to the pool, not to a connection about to commit)
        tx.open = false;
      }
    });
  }

  private async writeTags(n: NoteDetail): Promise<void> {
    await this.rows(`DELETE FROM note_tags WHERE note_id = $1`, [n.id]);
    if (n.tags.length === 0) return;
    await this.rows(
      `INSERT INTO note_tags (note_id, tag, status, created_at) SELECT $1, t, $2, $3 FROM unnest($4::text[]) AS t`,
      [n.id, n.status, n.createdAt, n.tags],
    );
  }

  insert(note: NoteDetail): Promise<void> {
    return this.transaction(async () => {
      await this.rows(INSERT_SQL, values(note));
      await this.writeTags(note);
    });
  }

  async get(id: string): Promise<NoteDetail | undefined> {
    if (id.includes(NUL)) return undefined; // no id has one, and PostgreSQL text cannot hold it
    const [row] = await this.rows<NoteRow>(`SELECT * FROM notes WHERE id = $1`, [id]);
    return row ? toDetail(row) : undefined;
  }

  update(note: NoteDetail): Promise<void> {
    return this.transaction(async () => {
      await this.rows(UPDATE_SQL, values(note));
      await this.writeTags(note);
    });
  }

  delete(id: string): Promise<boolean> {
    if (id.includes(NUL)) return Promise.resolve(false);
    // Tag rows first and explicitly, as in the SQLite store.
    return this.transaction(async () => {
      await this.rows(`DELETE FROM note_tags WHERE note_id = $1`, [id]);
      return (await this.db().query(`DELETE FROM notes WHERE id = $1`, [id])).rowCount === 1;
    });
  }

  async scheduledTimesBetween(fromIso: string, toIso: string): Promise<string[]> {
    const rows = await this.rows<{ scheduled_at: string }>(
      `SELECT scheduled_at FROM notes WHERE status = 'scheduled' AND scheduled_at > $1 AND scheduled_at <= $2`,
      [fromIso, toIso],
    );
    return rows.map((r) => r.scheduled_at);
  }

  insertMany(notes: readonly NoteDetail[]): Promise<void> {
    return this.transaction(async () => {
      for (const n of notes) {
        await this.rows(INSERT_SQL, values(n));
        await this.writeTags(n);
      }
    });
  }

  async list(filter: ListFilter, limit: number, offset: number): Promise<Page<Note>> {
    const { status, tag } = filter;
    if (tag?.includes(NUL)) return { items: [], total: 0 }; // no tag has one
    const [count] = await this.rows<{ n: number }>(
      `SELECT coalesce((SELECT n FROM note_counts WHERE tag = $1 AND status = $2), 0) AS n`,
      [tag ?? "", status ?? ""],
    );
    const total = int(count?.n ?? 0);
    if (offset >= total) return { items: [], total };
    let rows: NoteRow[];
    if (tag !== undefined) {
      // The page of ids comes from the tag index alone; only those rows are read from notes.
      const byStatus = status !== undefined ? "AND status = $4" : "";
      rows = await this.rows<NoteRow>(
        `SELECT ${LIST} FROM (SELECT note_id, created_at FROM note_tags WHERE tag = $1 ${byStatus}
           ORDER BY created_at DESC, note_id DESC LIMIT $2 OFFSET $3) p
         JOIN notes n ON n.id = p.note_id ORDER BY p.created_at DESC, p.note_id DESC`,
        status !== undefined ? [tag, limit, offset, status] : [tag, limit, offset],
      );
    } else if (status !== undefined) {
      rows = await this.rows<NoteRow>(
        `SELECT ${LIST_COLUMNS} FROM notes WHERE status = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [status, limit, offset],
      );
    } else {
      rows = await this.rows<NoteRow>(
        `SELECT ${LIST_COLUMNS} FROM notes ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`,
        [limit, offset],
      );
    }
    return { items: rows.map(toNote), total };
  }

  async tagCounts(status?: NoteStatus): Promise<Array<{ tag: string; count: number }>> {
    const rows = await this.rows<{ tag: string; count: number }>(
      `SELECT tag, n AS count FROM note_counts WHERE tag <> '' AND status = $1 AND n > 0 ORDER BY n DESC, tag`,
      [status ?? ""],
    );
    return rows.map((r) => ({ tag: r.tag, count: int(r.count) }));
  }

  async scheduledBetween(fromIso: string, toIso: string, limit = -1): Promise<NoteDetail[]> {
    const rows = await this.rows<NoteRow>(
      `SELECT * FROM notes WHERE status = 'scheduled' AND scheduled_at > $1 AND scheduled_at <= $2
       ORDER BY scheduled_at, created_at, id LIMIT $3`,
      [fromIso, toIso, limit < 0 ? null : limit],
    );
    return rows.map(toDetail);
  }

  async duePosts(nowIso: string, limit: number): Promise<NoteDetail[]> {
    const rows = await this.rows<NoteRow>(
      `SELECT * FROM notes WHERE status = 'scheduled' AND scheduled_at <= $1
         AND (claimed_until IS NULL OR claimed_until <= $1) AND (retry_after IS NULL OR retry_after <= $1)
         AND delivering IS NULL
       ORDER BY scheduled_at, created_at, id LIMIT $2`,
      [nowIso, limit],
    );
    return rows.map(toDetail);
  }

  async dueRestacks(nowIso: string, limit: number): Promise<NoteDetail[]> {
    const rows = await this.rows<NoteRow>(
      `SELECT * FROM notes WHERE restack_due_at IS NOT NULL AND restacked_at IS NULL
         AND restack_due_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
         AND (retry_after IS NULL OR retry_after <= $1) AND delivering IS NULL
       ORDER BY restack_due_at, id LIMIT $2`,
      [nowIso, limit],
    );
    return rows.map(toDetail);
  }

  /**
   * The claim re-checks that the note is still due and unclaimed, on a row no other instance is
   * claiming or writing this moment (FOR UPDATE SKIP LOCKED: a note another instance holds is left to
   * it, at once, instead of waited for), so of any number of racing instances exactly one wins.
   */
  async claim(id: string, kind: "post" | "restack", nowIso: string, untilIso: string): Promise<boolean> {
    const due =
      kind === "post"
        ? `status = 'scheduled' AND scheduled_at <= $3`
        : `restacked_at IS NULL AND restack_due_at <= $3`;
    const result = await this.db().query(
      `UPDATE notes SET claimed_until = $1, delivering = $4 WHERE id = (
         SELECT id FROM notes WHERE id = $2 AND (claimed_until IS NULL OR claimed_until <= $3)
           AND delivering IS NULL AND (retry_after IS NULL OR retry_after <= $3) AND ${due}
         FOR UPDATE SKIP LOCKED)`,
      [untilIso, id, nowIso, kind],
    );
    return result.rowCount === 1;
  }

  async settle(id: string, retryAfterIso?: string): Promise<void> {
    await this.rows(
      `UPDATE notes SET claimed_until = NULL, delivering = NULL, retry_after = coalesce($1, retry_after) WHERE id = $2`,
      [retryAfterIso ?? null, id],
    );
  }

  async abandonedDeliveries(nowIso: string, limit: number): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(
      `SELECT id FROM notes WHERE delivering IS NOT NULL AND (claimed_until IS NULL OR claimed_until <= $1)
       ORDER BY claimed_until, id LIMIT $2`,
      [nowIso, limit],
    );
    return rows.map((r) => r.id);
  }

  async takeAbandoned(id: string, nowIso: string): Promise<"post" | "restack" | undefined> {
    const [row] = await this.rows<{ delivering: "post" | "restack" }>(
      `UPDATE notes n SET delivering = NULL, claimed_until = NULL FROM notes o
       WHERE n.id = $1 AND o.id = n.id AND o.delivering IS NOT NULL
         AND (o.claimed_until IS NULL OR o.claimed_until <= $2) RETURNING o.delivering`,
      [id, nowIso],
    );
    return row?.delivering;
  }

  async addFailedRun(id: string): Promise<number> {
    const [row] = await this.rows<{ failed_runs: number }>(
      `UPDATE notes SET failed_runs = failed_runs + 1 WHERE id = $1 RETURNING failed_runs`,
      [id],
    );
    return row ? int(row.failed_runs) : 0;
  }

  async evergreenByLeastRecentUse(): Promise<NoteDetail[]> {
    const rows = await this.rows<NoteRow>(
      `SELECT * FROM notes WHERE status = 'evergreen'
       ORDER BY last_recycled_at IS NOT NULL, last_recycled_at, created_at, id`,
    );
    return rows.map(toDetail);
  }

  async hasCopyBetween(sourceId: string, fromIso: string, toIso: string): Promise<boolean> {
    const rows = await this.rows(
      `SELECT 1 FROM notes WHERE source_note_id = $1 AND status IN ('scheduled', 'published')
         AND scheduled_at > $2 AND scheduled_at < $3 LIMIT 1`,
      [sourceId, fromIso, toIso],
    );
    return rows.length > 0;
  }

  async getSettings(): Promise<QueueSettings> {
    const [row] = await this.rows<{ value: string }>(`SELECT value FROM settings WHERE key = 'queue'`);
    return row
      ? { ...DEFAULT_SETTINGS, ...(JSON.parse(row.value) as Partial<QueueSettings>) }
      : { ...DEFAULT_SETTINGS };
  }

  async setSettings(settings: QueueSettings): Promise<void> {
    await this.rows(
      `INSERT INTO settings (key, value) VALUES ('queue', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [JSON.stringify(settings)],
    );
  }

  async getSlots(): Promise<WeeklySlots> {
    const out: WeeklySlots = {};
    const rows = await this.rows<{ weekday: number; time: string }>(
      `SELECT weekday, time FROM queue_slots ORDER BY weekday, time`,
    );
    for (const r of rows) {
      const day = out[r.weekday] ?? [];
      day.push(r.time);
      out[r.weekday] = day;
    }
    return out;
  }

  setSlots(slots: WeeklySlots): Promise<void> {
    return this.transaction(async () => {
      await this.rows(`DELETE FROM queue_slots`);
      for (const [day, times] of Object.entries(slots)) {
        for (const t of times)
          await this.rows(`INSERT INTO queue_slots (weekday, time) VALUES ($1, $2)`, [Number(day), t]);
      }
    });
  }

  private closing: Promise<void> | undefined;

  close(): Promise<void> {
    this.closing ??= this.pool.end();
    return this.closing;
  }
}

/**
 * Applies the migrations the database has not seen yet, each in its own transaction, under a lock so
 * that instances starting at once migrate once. Returns the version reached.
 */
export const migratePostgres = (pool: pg.Pool): Promise<number> =>
  migratePg(pool, {
    table: "notes_status_schema",
    lock: MIGRATE_LOCK,
    migrations: PG_MIGRATIONS,
    newer: (current, known) =>
      `The database is at schema version ${current}, newer than this program knows (${known}); upgrade notes-status-mcp`,
  });

/** Connects to a PostgreSQL URL (postgres:// or postgresql://), migrates, and returns the repository. */
export async function openPostgres(url: string): Promise<PgNotesRepository> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection the server dropped must not take the process down.
  pool.on("error", () => undefined);
  try {
    await migratePostgres(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return new PgNotesRepository(pool);
}
