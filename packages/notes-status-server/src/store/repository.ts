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

interface NoteRow {
  id: string;
  content: string;
  tags: string;
  status: NoteStatus;
  scheduled_at: string | null;
  auto_restack_after_hours: number | null;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  restack_due_at: string | null;
  restacked_at: string | null;
  source_note_id: string | null;
  last_recycled_at: string | null;
  attempts: number;
  last_error: string | null;
  last_attempt_at: string | null;
}

const LIST_COLUMNS =
  "id, content, tags, status, scheduled_at, auto_restack_after_hours, created_at, updated_at";

function toNote(r: NoteRow): Note {
  return {
    id: r.id,
    content: r.content,
    tags: JSON.parse(r.tags) as string[],
    status: r.status,
    scheduledAt: r.scheduled_at,
    autoRestackAfterHours: r.auto_restack_after_hours,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toDetail(r: NoteRow): NoteDetail {
  return {
    ...toNote(r),
    publishedAt: r.published_at,
    restackDueAt: r.restack_due_at,
    restackedAt: r.restacked_at,
    sourceNoteId: r.source_note_id,
    lastRecycledAt: r.last_recycled_at,
    attempts: r.attempts,
    lastError: r.last_error,
    lastAttemptAt: r.last_attempt_at,
  };
}

function toParams(n: NoteDetail) {
  return {
    id: n.id,
    content: n.content,
    tags: JSON.stringify(n.tags),
    status: n.status,
    scheduled_at: n.scheduledAt,
    auto_restack_after_hours: n.autoRestackAfterHours,
    created_at: n.createdAt,
    updated_at: n.updatedAt,
    published_at: n.publishedAt,
    restack_due_at: n.restackDueAt,
    restacked_at: n.restackedAt,
    source_note_id: n.sourceNoteId,
    last_recycled_at: n.lastRecycledAt,
    attempts: n.attempts,
    last_error: n.lastError,
    last_attempt_at: n.lastAttemptAt,
  };
}

const DEFAULT_SETTINGS: QueueSettings = {
  timeZone: "UTC",
  evergreenHorizonHours: 24,
  evergreenMinGapDays: 30,
};

/** The SQLite implementation of the domain's repository. All SQL of the server lives here. */
export class SqliteNotesRepository implements NotesRepository {
  private readonly s;

  constructor(private readonly db: Db) {
    const all = `id, content, tags, status, scheduled_at, auto_restack_after_hours, created_at, updated_at,
      published_at, restack_due_at, restacked_at, source_note_id, last_recycled_at, attempts, last_error, last_attempt_at`;
    const named = all
      .split(",")
      .map((c) => `@${c.trim()}`)
      .join(", ");
    this.s = {
      insert: db.prepare(`INSERT INTO notes (${all}) VALUES (${named})`),
      // failed_runs counts the failed runs since lastError was last cleared: every success and every
      // fresh start (scheduling, leaving failed) clears lastError, and so ends the count.
      update: db.prepare(
        `UPDATE notes SET ${all
          .split(",")
          .map((c) => c.trim())
          .filter((c) => c !== "id")
          .map((c) => `${c} = @${c}`)
          .join(", ")},
         failed_runs = CASE WHEN @last_error IS NULL THEN 0 ELSE failed_runs END WHERE id = @id`,
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
           AND (claimed_until IS NULL OR claimed_until <= @now)
         ORDER BY scheduled_at, created_at, id LIMIT @limit`,
      ),
      dueRestacks: db.prepare(
        `SELECT * FROM notes WHERE status = 'published' AND restack_due_at IS NOT NULL AND restacked_at IS NULL
           AND restack_due_at <= @now AND (claimed_until IS NULL OR claimed_until <= @now)
         ORDER BY restack_due_at, id LIMIT @limit`,
      ),
      // A claim re-checks that the note is still due, so a run holding a stale list skips notes
      // another run has published meanwhile.
      claimPost: db.prepare(
        `UPDATE notes SET claimed_until = @until WHERE id = @id AND (claimed_until IS NULL OR claimed_until <= @now)
           AND status = 'scheduled' AND scheduled_at <= @now`,
      ),
      claimRestack: db.prepare(
        `UPDATE notes SET claimed_until = @until WHERE id = @id AND (claimed_until IS NULL OR claimed_until <= @now)
           AND status = 'published' AND restacked_at IS NULL AND restack_due_at <= @now`,
      ),
      release: db.prepare(`UPDATE notes SET claimed_until = NULL WHERE id = ?`),
      defer: db.prepare(`UPDATE notes SET claimed_until = ? WHERE id = ?`),
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

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  private writeTags(n: NoteDetail): void {
    this.s.deleteTags.run(n.id);
    for (const tag of n.tags) this.s.insertTag.run(n.id, tag, n.status, n.createdAt);
  }

  insert(note: NoteDetail): void {
    this.transaction(() => {
      this.s.insert.run(toParams(note));
      this.writeTags(note);
    });
  }

  get(id: string): NoteDetail | undefined {
    const row = this.s.get.get(id) as NoteRow | undefined;
    return row ? toDetail(row) : undefined;
  }

  update(note: NoteDetail): void {
    this.transaction(() => {
      this.s.update.run(toParams(note));
      this.writeTags(note);
    });
  }

  delete(id: string): boolean {
    // Tag rows first and explicitly, so their count triggers run whatever the FK cascade does.
    return this.transaction(() => {
      this.s.deleteTags.run(id);
      return this.s.delete.run(id).changes > 0;
    });
  }

  scheduledTimesBetween(fromIso: string, toIso: string): string[] {
    return this.s.scheduledTimes.all(fromIso, toIso) as string[];
  }

  /** Many inserts in one transaction (imports, the benchmark). */
  insertMany(notes: readonly NoteDetail[]): void {
    this.db.transaction(() => {
      for (const n of notes) {
        this.s.insert.run(toParams(n));
        this.writeTags(n);
      }
    })();
  }

  list(filter: ListFilter, limit: number, offset: number): Page<Note> {
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
  }

  tagCounts(status?: NoteStatus): Array<{ tag: string; count: number }> {
    return this.s.tagCounts.all(status ?? "") as Array<{
      tag: string;
      count: number;
    }>;
  }

  scheduledBetween(fromIso: string, toIso: string, limit = -1): NoteDetail[] {
    return (this.s.scheduledBetween.all(fromIso, toIso, limit) as NoteRow[]).map(toDetail);
  }

  duePosts(nowIso: string, limit: number): NoteDetail[] {
    return (this.s.duePosts.all({ now: nowIso, limit }) as NoteRow[]).map(toDetail);
  }

  dueRestacks(nowIso: string, limit: number): NoteDetail[] {
    return (this.s.dueRestacks.all({ now: nowIso, limit }) as NoteRow[]).map(toDetail);
  }

  claim(id: string, kind: "post" | "restack", nowIso: string, untilIso: string): boolean {
    const stmt = kind === "post" ? this.s.claimPost : this.s.claimRestack;
    return stmt.run({ until: untilIso, id, now: nowIso }).changes === 1;
  }

  release(id: string): void {
    this.s.release.run(id);
  }

  defer(id: string, untilIso: string): void {
    this.s.defer.run(untilIso, id);
  }

  addFailedRun(id: string): number {
    return (this.s.addFailedRun.get(id) as number | undefined) ?? 0;
  }

  evergreenByLeastRecentUse(): NoteDetail[] {
    return (this.s.evergreen.all() as NoteRow[]).map(toDetail);
  }

  hasCopyBetween(sourceId: string, fromIso: string, toIso: string): boolean {
    return this.s.hasCopy.get(sourceId, fromIso, toIso) !== undefined;
  }

  getSettings(): QueueSettings {
    const row = this.s.getSetting.get("queue") as { value: string } | undefined;
    return row
      ? { ...DEFAULT_SETTINGS, ...(JSON.parse(row.value) as Partial<QueueSettings>) }
      : { ...DEFAULT_SETTINGS };
  }

  setSettings(settings: QueueSettings): void {
    this.s.setSetting.run("queue", JSON.stringify(settings));
  }

  getSlots(): WeeklySlots {
    const out: WeeklySlots = {};
    for (const r of this.s.slots.all() as Array<{ weekday: number; time: string }>) {
      const day = out[r.weekday] ?? [];
      day.push(r.time);
      out[r.weekday] = day;
    }
    return out;
  }

  setSlots(slots: WeeklySlots): void {
    this.transaction(() => {
      this.s.clearSlots.run();
      for (const [day, times] of Object.entries(slots)) {
        for (const t of times) this.s.insertSlot.run(Number(day), t);
      }
    });
  }
}
