/** Rows of the notes table as both stores read and write them (the same columns in SQLite and PostgreSQL). */
import type { NoteStatus } from "../domain/status.js";
import type { Note, NoteDetail, QueueSettings } from "../domain/types.js";

/** Every column the domain reads and writes, id first (claimed_until, failed_runs, retry_after and delivering are the store's own). */
export const NOTE_COLUMNS = [
  "id",
  "content",
  "tags",
  "status",
  "scheduled_at",
  "auto_restack_after_hours",
  "created_at",
  "updated_at",
  "published_at",
  "restack_due_at",
  "restacked_at",
  "source_note_id",
  "last_recycled_at",
  "attempts",
  "last_error",
  "last_attempt_at",
] as const;

export interface NoteRow {
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

export const LIST_COLUMNS =
  "id, content, tags, status, scheduled_at, auto_restack_after_hours, created_at, updated_at";

export function toNote(r: NoteRow): Note {
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

export function toDetail(r: NoteRow): NoteDetail {
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

export function toParams(n: NoteDetail) {
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

export const DEFAULT_SETTINGS: QueueSettings = {
  timeZone: "UTC",
  evergreenHorizonHours: 24,
  evergreenMinGapDays: 30,
};
