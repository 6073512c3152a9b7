import type { NoteStatus } from "./status.js";

/** A note as every tool shows it (the fields of list_notes). Times are ISO 8601 UTC strings. */
export interface Note {
  id: string;
  content: string;
  tags: string[];
  status: NoteStatus;
  scheduledAt: string | null;
  autoRestackAfterHours: number | null;
  createdAt: string;
  updatedAt: string;
}

/** A note with the publishing and recycling facts get_note shows. */
export interface NoteDetail extends Note {
  publishedAt: string | null;
  restackDueAt: string | null;
  restackedAt: string | null;
  sourceNoteId: string | null;
  lastRecycledAt: string | null;
  attempts: number;
  lastError: string | null;
  lastAttemptAt: string | null;
}

export interface ListFilter {
  status?: NoteStatus;
  tag?: string;
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** The settings of the weekly plan and of evergreen recycling. */
export interface QueueSettings {
  timeZone: string;
  evergreenHorizonHours: number;
  evergreenMinGapDays: number;
}

/** Weekday (0 = Sunday) -> sorted "HH:MM" times. */
export type WeeklySlots = Record<number, string[]>;

/**
 * What the domain needs from storage. SQLite implements it in src/store; another database would
 * implement the same interface. Every method is synchronous and each call is atomic; `transaction`
 * groups several into one.
 */
export interface NotesRepository {
  transaction<T>(fn: () => T): T;
  insert(note: NoteDetail): void;
  get(id: string): NoteDetail | undefined;
  /** Writes every field of an existing note (and its tag rows). */
  update(note: NoteDetail): void;
  delete(id: string): boolean;
  list(filter: ListFilter, limit: number, offset: number): Page<Note>;
  tagCounts(status?: NoteStatus): Array<{ tag: string; count: number }>;
  /** Scheduled notes with scheduledAt in (fromIso, toIso], earliest first. */
  scheduledBetween(fromIso: string, toIso: string, limit?: number): NoteDetail[];
  /** Just the scheduledAt of scheduled notes in (fromIso, toIso] (which slots are taken). */
  scheduledTimesBetween(fromIso: string, toIso: string): string[];
  /** Scheduled notes due at or before `nowIso` and not claimed by another run, earliest first. */
  duePosts(nowIso: string, limit: number): NoteDetail[];
  /** Published notes whose restack is due at or before `nowIso`, earliest first. */
  dueRestacks(nowIso: string, limit: number): NoteDetail[];
  /**
   * Marks a note as being published until `untilIso`; false when another run holds it or it is no
   * longer due (another run published it already).
   */
  claim(id: string, kind: "post" | "restack", nowIso: string, untilIso: string): boolean;
  release(id: string): void;
  /** Keeps every run away from the note until `untilIso` (a failed note's back-off). */
  defer(id: string, untilIso: string): void;
  /**
   * Counts one more scheduler run whose publish of the note failed and returns the runs in a row so
   * far (the count ends whenever `update` clears lastError); 0 when the note is gone.
   */
  addFailedRun(id: string): number;
  /** Evergreen notes, least recently recycled first (never recycled first of all). */
  evergreenByLeastRecentUse(): NoteDetail[];
  /** Whether a copy of `sourceId` is scheduled or published with scheduledAt in (fromIso, toIso). */
  hasCopyBetween(sourceId: string, fromIso: string, toIso: string): boolean;
  getSettings(): QueueSettings;
  setSettings(settings: QueueSettings): void;
  getSlots(): WeeklySlots;
  setSlots(slots: WeeklySlots): void;
}
