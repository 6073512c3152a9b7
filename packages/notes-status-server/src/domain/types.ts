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
 * What the domain needs from storage: SQLite (src/store/sqlite) and PostgreSQL (src/store/postgres)
 * implement it, and nothing above this interface knows which one is underneath. Every method is
 * asynchronous and each call is atomic. `transaction` groups several into one: every repository call
 * made from inside `fn` (in its async flow) joins that transaction, and write transactions run one at a
 * time, so a read followed by a write inside one sees no other writer in between.
 */
export interface NotesRepository {
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  insert(note: NoteDetail): Promise<void>;
  get(id: string): Promise<NoteDetail | undefined>;
  /** Writes every field of an existing note (and its tag rows). */
  update(note: NoteDetail): Promise<void>;
  delete(id: string): Promise<boolean>;
  list(filter: ListFilter, limit: number, offset: number): Promise<Page<Note>>;
  tagCounts(status?: NoteStatus): Promise<Array<{ tag: string; count: number }>>;
  /** Scheduled notes with scheduledAt in (fromIso, toIso], earliest first; every one without a limit. */
  scheduledBetween(fromIso: string, toIso: string, limit?: number): Promise<NoteDetail[]>;
  /** Just the scheduledAt of scheduled notes in (fromIso, toIso] (which slots are taken). */
  scheduledTimesBetween(fromIso: string, toIso: string): Promise<string[]>;
  /** Scheduled notes due at or before `nowIso` and not claimed by another run, earliest first. */
  duePosts(nowIso: string, limit: number): Promise<NoteDetail[]>;
  /** Notes whose restack is due at or before `nowIso` (published, or made evergreen since), earliest first. */
  dueRestacks(nowIso: string, limit: number): Promise<NoteDetail[]>;
  /**
   * Marks a note as being delivered (`kind`), leased until `untilIso`; false when another run holds it,
   * a delivery of it is still unrecorded, or it is no longer due (another run published it already).
   * The mark outlives the lease: only `settle` or `takeAbandoned` clears it, so no run sends a note
   * whose last delivery's answer was never written.
   */
  claim(id: string, kind: "post" | "restack", nowIso: string, untilIso: string): Promise<boolean>;
  /**
   * Ends a delivery once its answer is recorded: clears the lease and the mark; with `retryAfterIso`,
   * keeps every run away from the note until then (a failed note's back-off).
   */
  settle(id: string, retryAfterIso?: string): Promise<void>;
  /** Notes marked as being delivered whose lease is over (the run that claimed them is gone). */
  abandonedDeliveries(nowIso: string, limit: number): Promise<string[]>;
  /** Clears such a mark if it is still there and its lease still over; returns its kind, or undefined. */
  takeAbandoned(id: string, nowIso: string): Promise<"post" | "restack" | undefined>;
  /**
   * Counts one more scheduler run whose publish of the note failed and returns the runs in a row so
   * far (the count ends whenever `update` clears lastError); 0 when the note is gone.
   */
  addFailedRun(id: string): Promise<number>;
  /** Evergreen notes, least recently recycled first (never recycled first of all). */
  evergreenByLeastRecentUse(): Promise<NoteDetail[]>;
  /** Whether a copy of `sourceId` is scheduled or published with scheduledAt in (fromIso, toIso). */
  hasCopyBetween(sourceId: string, fromIso: string, toIso: string): Promise<boolean>;
  getSettings(): Promise<QueueSettings>;
  setSettings(settings: QueueSettings): Promise<void>;
  getSlots(): Promise<WeeklySlots>;
  setSlots(slots: WeeklySlots): Promise<void>;
  /** Many inserts in one transaction (imports, the benchmark, migrating between stores). */
  insertMany(notes: readonly NoteDetail[]): Promise<void>;
  /** Which store this is, for logs and `describeStore`: "sqlite" or "postgresql". */
  readonly kind: StoreKind;
  /** Closes the connection(s); the repository is unusable afterwards. */
  close(): Promise<void>;
}

export type StoreKind = "sqlite" | "postgresql";
