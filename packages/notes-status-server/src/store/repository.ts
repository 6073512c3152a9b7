import { AsyncLocalStorage } from "node:async_hooks";
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
import type { Db } from "./db.js";
import {
  DEFAULT_SETTINGS,
  LIST_COLUMNS,
  NOTE_COLUMNS,
  type NoteRow,
  toDetail,
  toNote,
  toParams,
} from "./rows.js";

/** The transaction an async flow is inside; `open` turns false at its end, so a late flow cannot use it. */
interface TxScope {
  open: boolean;
}

/**
 * The SQLite implementation of the domain's repository; all of its SQL lives here. better-sqlite3 is
 * synchronous and one connection has one transaction, while the domain's transactions span awaits: so
 * every call waits its turn in one queue, and a transaction holds the queue from BEGIN to COMMIT. Calls
 * made from inside a transaction's async flow (AsyncLocalStorage) run in it at once.
 */
export class SqliteNotesRepository implements NotesRepository {
  readonly kind = "sqlite" as const;
  private readonly s;
  private readonly scope = new AsyncLocalStorage<TxScope>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Db) {
    const all = NOTE_COLUMNS.join(", ");
    const named = all
      .split(",")
      .map((c) => `@${c.trim()}`)
      .join(", ");
    this.s = {
      insert: db.prepare(`INSERT INTO notes (${all}) VALUES (${named})`),
      // failed_runs counts the failed runs since lastError was last cleared: every success and every
      // fresh start (scheduling, leaving failed) clears lastError, and so ends the count and the
      // back-off (retry_after).
      update: db.prepare(
        `UPDATE notes SET ${all
          .split(",")
          .map((c) => c.trim())
          .filter((c) => c !== "id")
          .map((c) => `${c} = @${c}`)
          .join(", ")},
         failed_runs = CASE WHEN @last_error IS NULL THEN 0 ELSE failed_runs END,
         retry_after = CASE WHEN @last_error IS NULL THEN NULL ELSE retry_after END WHERE id = @id`,
      ),
      addFailedRun: db
        .prepare(`UPDATE notes SET failed_runs = failed_runs + 1 WHERE id = ? RETURNING failed_runs`)
        .pluck(),
      get: db.prepare(`SELECT * FROM notes WHERE id = ?`),
      delete: db.prepare(`DELETE FROM notes WHERE id = ?`),
      deleteTags: db.prepare(`DELETE FROM note_tags WHERE note_id = ?`),
      insertTag: db.prepare(`INSERT INTO note_tags (note_id, tag, status, created_at) VALUES (?, ?, ?, ?)`),
      listAll: db.prepare(
        `SELECT ${LIST_COLUMNS} FROM notes ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
      ),
      count: db.prepare(`SELECT coalesce((SELECT n FROM note_counts WHERE tag = ? AND status = ?), 0) AS n`),
      listStatus: db.prepare(
        `SELECT ${LIST_COLUMNS} FROM notes WHERE status = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
      ),
      // The page of ids comes from the tag index alone; only those rows are read from notes.
      listTag: db.prepare(
        `SELECT ${LIST_COLUMNS.split(", ")
          .map((c) => `n.${c}`)
          .join(", ")} FROM (SELECT note_id, created_at FROM note_tags WHERE tag = ?
           ORDER BY created_at DESC, note_id DESC LIMIT ? OFFSET ?) p
         JOIN notes n ON n.id = p.note_id ORDER BY p.created_at DESC, p.note_id DESC`,
      ),
      listTagStatus: db.prepare(
        `SELECT ${LIST_COLUMNS.split(", ")
          .map((c) => `n.${c}`)
          .join(", ")} FROM (SELECT note_id, created_at FROM note_tags WHERE tag = ? AND status = ?
           ORDER BY created_at DESC, note_id DESC LIMIT ? OFFSET ?) p
         JOIN notes n ON n.id = p.note_id ORDER BY p.created_at DESC, p.note_id DESC`,
      ),
      tagCounts: db.prepare(
        `SELECT tag, n AS count FROM note_counts WHERE tag <> '' AND status = ? AND n > 0 ORDER BY n DESC, tag`,
      ),
      scheduledTimes: db
        .prepare(
          `SELECT scheduled_at FROM notes WHERE status = 'scheduled' AND scheduled_at > ? AND scheduled_at <= ?`,
        )
        .pluck(),
      scheduledBetween: db.prepare(
        `SELECT * FROM notes WHERE status = 'scheduled' AND scheduled_at > ? AND scheduled_at <= ?
         ORDER BY scheduled_at, created_at, id LIMIT ?`,
      ),
      duePosts: db.prepare(
        `SELECT * FROM notes WHERE status = 'scheduled' AND scheduled_at <= @now
           AND (claimed_until IS NULL OR claimed_until <= @now) AND (retry_after IS NULL OR retry_after <= @now)
           AND delivering IS NULL
         ORDER BY scheduled_at, created_at, id LIMIT @limit`,
      ),
      dueRestacks: db.prepare(
        `SELECT * FROM notes WHERE restack_due_at IS NOT NULL AND restacked_at IS NULL
           AND restack_due_at <= @now AND (claimed_until IS NULL OR claimed_until <= @now)
           AND (retry_after IS NULL OR retry_after <= @now) AND delivering IS NULL
         ORDER BY restack_due_at, id LIMIT @limit`,
      ),
      // A claim re-checks that the note is still due, so a run holding a stale list skips notes
      // another run has published meanwhile.
      claimPost: db.prepare(
        `UPDATE notes SET claimed_until = @until, delivering = 'post' WHERE id = @id
           AND (claimed_until IS NULL OR claimed_until <= @now) AND delivering IS NULL
           AND (retry_after IS NULL OR retry_after <= @now) AND status = 'scheduled' AND scheduled_at <= @now`,
      ),
      claimRestack: db.prepare(
        `UPDATE notes SET claimed_until = @until, delivering = 'restack' WHERE id = @id
           AND (claimed_until IS NULL OR claimed_until <= @now) AND delivering IS NULL
           AND (retry_after IS NULL OR retry_after <= @now)
           AND restacked_at IS NULL AND restack_due_at <= @now`,
      ),
      // A back-off keeps every run away until then (a reschedule clears it).
      settle: db.prepare(
        `UPDATE notes SET claimed_until = NULL, delivering = NULL, retry_after = coalesce(?, retry_after) WHERE id = ?`,
      ),
      abandoned: db
        .prepare(
          `SELECT id FROM notes WHERE delivering IS NOT NULL AND (claimed_until IS NULL OR claimed_until <= ?)
           ORDER BY claimed_until, id LIMIT ?`,
        )
        .pluck(),
      abandonedKind: db
        .prepare(
          `SELECT delivering FROM notes WHERE id = ? AND delivering IS NOT NULL
             AND (claimed_until IS NULL OR claimed_until <= ?)`,
        )
        .pluck(),
      evergreen: db.prepare(
        `SELECT * FROM notes WHERE status = 'evergreen'
         ORDER BY last_recycled_at IS NOT NULL, last_recycled_at, created_at, id`,
      ),
      hasCopy: db.prepare(
        `SELECT 1 FROM notes WHERE source_note_id = ? AND status IN ('scheduled', 'published')
           AND scheduled_at > ? AND scheduled_at < ? LIMIT 1`,
      ),
      getSetting: db.prepare(`SELECT value FROM settings WHERE key = ?`),
      setSetting: db.prepare(
        `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      ),
      slots: db.prepare(`SELECT weekday, time FROM queue_slots ORDER BY weekday, time`),
      clearSlots: db.prepare(`DELETE FROM queue_slots`),
      insertSlot: db.prepare(`INSERT INTO queue_slots (weekday, time) VALUES (?, ?)`),
    };
  }

  /** Runs `fn` when no transaction of another flow holds the connection. */
  private turn<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.scope.getStore()?.open) return Promise.resolve().then(fn);
    const result = this.tail.then(fn);
    this.tail = result.catch(() => undefined);
    return result;
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()?.open) return fn(); // part of the enclosing transaction
    return this.turn(() => {
      const tx: TxScope = { open: true };
      return this.scope.run(tx, async () => {
        // IMMEDIATE takes the write lock now: another process (cron) cannot write between our read and write.
        this.db.exec("BEGIN IMMEDIATE");
        try {
          const result = await fn();
          this.db.exec("COMMIT");
          return result;
        } catch (err) {
          if (this.db.inTransaction) this.db.exec("ROLLBACK");
          throw err;
        } finally {
          tx.open = false;
        }
      });
    });
  }

  private writeTags(n: NoteDetail): void {
    this.s.deleteTags.run(n.id);
    for (const tag of n.tags) this.s.insertTag.run(n.id, tag, n.status, n.createdAt);
  }

  /** Several statements as one (a savepoint inside an open transaction). */
  private atomic<T>(fn: () => T): Promise<T> {
    return this.turn(() => this.db.transaction(fn).immediate());
  }

  insert(note: NoteDetail): Promise<void> {
    return this.atomic(() => {
      this.s.insert.run(toParams(note));
      this.writeTags(note);
    });
  }

  get(id: string): Promise<NoteDetail | undefined> {
    return this.turn(() => {
      const row = this.s.get.get(id) as NoteRow | undefined;
      return row ? toDetail(row) : undefined;
    });
  }

  update(note: NoteDetail): Promise<void> {
    return this.atomic(() => {
      this.s.update.run(toParams(note));
      this.writeTags(note);
    });
  }

  delete(id: string): Promise<boolean> {
    // Tag rows first and explicitly, so their count triggers run whatever the FK cascade does.
    return this.atomic(() => {
      this.s.deleteTags.run(id);
      return this.s.delete.run(id).changes > 0;
    });
  }

  scheduledTimesBetween(fromIso: string, toIso: string): Promise<string[]> {
    return this.turn(() => this.s.scheduledTimes.all(fromIso, toIso) as string[]);
  }

  insertMany(notes: readonly NoteDetail[]): Promise<void> {
    return this.atomic(() => {
      for (const n of notes) {
        this.s.insert.run(toParams(n));
        this.writeTags(n);
      }
    });
  }

  list(filter: ListFilter, limit: number, offset: number): Promise<Page<Note>> {
    return this.turn(() => {
      const { status, tag } = filter;
      const total = (this.s.count.get(tag ?? "", status ?? "") as { n: number }).n;
      let rows: () => NoteRow[];
      if (tag !== undefined && status !== undefined) {
        rows = () => this.s.listTagStatus.all(tag, status, limit, offset) as NoteRow[];
      } else if (tag !== undefined) {
        rows = () => this.s.listTag.all(tag, limit, offset) as NoteRow[];
      } else if (status !== undefined) {
        rows = () => this.s.listStatus.all(status, limit, offset) as NoteRow[];
      } else {
        rows = () => this.s.listAll.all(limit, offset) as NoteRow[];
      }
      // An offset past the end reads nothing (and keeps huge offsets away from SQLite's integer binding).
      return { items: offset >= total ? [] : rows().map(toNote), total };
    });
  }

  tagCounts(status?: NoteStatus): Promise<Array<{ tag: string; count: number }>> {
    return this.turn(() => this.s.tagCounts.all(status ?? "") as Array<{ tag: string; count: number }>);
  }

  scheduledBetween(fromIso: string, toIso: string, limit = -1): Promise<NoteDetail[]> {
    return this.turn(() => (this.s.scheduledBetween.all(fromIso, toIso, limit) as NoteRow[]).map(toDetail));
  }

  duePosts(nowIso: string, limit: number): Promise<NoteDetail[]> {
    return this.turn(() => (this.s.duePosts.all({ now: nowIso, limit }) as NoteRow[]).map(toDetail));
  }

  dueRestacks(nowIso: string, limit: number): Promise<NoteDetail[]> {
    return this.turn(() => (this.s.dueRestacks.all({ now: nowIso, limit }) as NoteRow[]).map(toDetail));
  }

  claim(id: string, kind: "post" | "restack", nowIso: string, untilIso: string): Promise<boolean> {
    const stmt = kind === "post" ? this.s.claimPost : this.s.claimRestack;
    return this.turn(() => stmt.run({ until: untilIso, id, now: nowIso }).changes === 1);
  }

  settle(id: string, retryAfterIso?: string): Promise<void> {
    return this.turn(() => void this.s.settle.run(retryAfterIso ?? null, id));
  }

  abandonedDeliveries(nowIso: string, limit: number): Promise<string[]> {
    return this.turn(() => this.s.abandoned.all(nowIso, limit) as string[]);
  }

  takeAbandoned(id: string, nowIso: string): Promise<"post" | "restack" | undefined> {
    // (RETURNING gives the new value, NULL: the kind is read first, in the same step)
    return this.atomic(() => {
      const kind = this.s.abandonedKind.get(id, nowIso) as "post" | "restack" | undefined;
      if (kind) this.s.settle.run(null, id);
      return kind;
    });
  }

  addFailedRun(id: string): Promise<number> {
    return this.turn(() => (this.s.addFailedRun.get(id) as number | undefined) ?? 0);
  }

  evergreenByLeastRecentUse(): Promise<NoteDetail[]> {
    return this.turn(() => (this.s.evergreen.all() as NoteRow[]).map(toDetail));
  }

  hasCopyBetween(sourceId: string, fromIso: string, toIso: string): Promise<boolean> {
    return this.turn(() => this.s.hasCopy.get(sourceId, fromIso, toIso) !== undefined);
  }

  getSettings(): Promise<QueueSettings> {
    return this.turn(() => {
      const row = this.s.getSetting.get("queue") as { value: string } | undefined;
      return row
        ? { ...DEFAULT_SETTINGS, ...(JSON.parse(row.value) as Partial<QueueSettings>) }
        : { ...DEFAULT_SETTINGS };
    });
  }

  setSettings(settings: QueueSettings): Promise<void> {
    return this.turn(() => void this.s.setSetting.run("queue", JSON.stringify(settings)));
  }

  getSlots(): Promise<WeeklySlots> {
    return this.turn(() => {
      const out: WeeklySlots = {};
      for (const r of this.s.slots.all() as Array<{ weekday: number; time: string }>) {
        const day = out[r.weekday] ?? [];
        day.push(r.time);
        out[r.weekday] = day;
      }
      return out;
    });
  }

  setSlots(slots: WeeklySlots): Promise<void> {
    return this.atomic(() => {
      this.s.clearSlots.run();
      for (const [day, times] of Object.entries(slots)) {
        for (const t of times) this.s.insertSlot.run(Number(day), t);
      }
    });
  }

  /** Waits for calls in flight, then closes the file. */
  async close(): Promise<void> {
    await this.tail;
    if (this.db.open) this.db.close();
  }
}
