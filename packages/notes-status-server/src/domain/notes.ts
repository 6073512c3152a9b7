import { randomUUID } from "node:crypto";
import { NotesError, notFound } from "./errors.js";
import { findFreeSlots } from "./queue.js";
import { assertTransition, type NoteStatus } from "./status.js";
import { type Clock, iso } from "./time.js";
import type { ListFilter, Note, NoteDetail, NotesRepository, Page } from "./types.js";

export { toListNote } from "./shape.js";

/** The publishing history of a note that has never been published, restacked, recycled or tried. */
export const UNPUBLISHED = {
  publishedAt: null,
  restackDueAt: null,
  restackedAt: null,
  sourceNoteId: null,
  lastRecycledAt: null,
  attempts: 0,
  lastError: null,
  lastAttemptAt: null,
} as const satisfies Partial<NoteDetail>;

export const MAX_CONTENT_LENGTH = 10_000;
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;
/**
 * How long a tag may be as sent, before trimming: past MAX_TAG_LENGTH the domain still answers with
 * its own message naming the tag; past this bound the input is refused before it is read at all.
 */
export const MAX_RAW_TAG_LENGTH = 200;
export const MAX_RESTACK_HOURS = 720;
/** Longer than any id this server makes: a bound on input, before any lookup. */
export const MAX_NOTE_ID_LENGTH = 200;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 50;
/** Notes per schedule call: one transaction, all or none. */
export const MAX_SCHEDULE_BATCH = 50;

/** What a new note (or update_note) may set: the other statuses are reached through the queue. */
export const CREATABLE_STATUSES = ["draft", "ready", "evergreen"] as const;
export type CreatableStatus = (typeof CREATABLE_STATUSES)[number];
/** Where an unscheduled note goes back to; the first is the default. */
export const UNSCHEDULED_STATUSES = ["ready", "draft"] as const;
export type UnscheduledStatus = (typeof UNSCHEDULED_STATUSES)[number];

/** A tag and how many notes carry it. */
export interface TagCount {
  tag: string;
  count: number;
}

export interface CreateNoteInput {
  content: string;
  tags?: readonly string[];
  status?: CreatableStatus;
  autoRestackAfterHours?: number | null;
}

export interface UpdateNoteInput {
  content?: string;
  tags?: readonly string[];
  status?: CreatableStatus;
  autoRestackAfterHours?: number | null;
}

export interface ScheduleItem {
  id: string;
  /** An ISO 8601 time; absent means the next free slot of the weekly plan. */
  scheduledAt?: string;
  /** Absent keeps the note's own setting; null turns restacking off. */
  autoRestackAfterHours?: number | null;
}

/** Tags are trimmed, NFC-normalised, lower-cased and deduplicated, so "Tech " and "tech" are one tag. */
export function normaliseTag(tag: string): string {
  return tag.normalize("NFC").trim().toLowerCase();
}

export function normaliseTags(tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of tags) {
    const tag = normaliseTag(raw);
    if (tag === "") throw new NotesError("INVALID_ARGUMENT", "A tag must not be empty or only spaces");
    if (tag.includes(NUL)) throw new NotesError("INVALID_ARGUMENT", NUL_REFUSED("A tag"));
    if (tag.length > MAX_TAG_LENGTH) {
      throw new NotesError(
        "INVALID_ARGUMENT",
        `A tag must be at most ${MAX_TAG_LENGTH} characters: "${tag}"`,
      );
    }
    if (!out.includes(tag)) out.push(tag);
  }
  if (out.length > MAX_TAGS)
    throw new NotesError("INVALID_ARGUMENT", `A note takes at most ${MAX_TAGS} tags`);
  return out;
}

/**
 * NUL is no character of any post, and one store (PostgreSQL text) cannot hold it: refused on every
 * store alike, so a note that one store keeps another cannot lose.
 */
const NUL = "\u0000";
const NUL_REFUSED = (what: string) => `${what} must not contain the NUL character (U+0000)`;

function checkContent(content: string): void {
  if (content.trim() === "")
    throw new NotesError("INVALID_ARGUMENT", "content must not be empty or only spaces");
  if (content.includes(NUL)) throw new NotesError("INVALID_ARGUMENT", NUL_REFUSED("content"));
  if (content.length > MAX_CONTENT_LENGTH) {
    throw new NotesError("INVALID_ARGUMENT", `content must be at most ${MAX_CONTENT_LENGTH} characters`);
  }
}

function checkRestack(hours: number | null | undefined): void {
  if (hours === null || hours === undefined) return;
  if (!Number.isFinite(hours) || hours < 1 || hours > MAX_RESTACK_HOURS) {
    throw new NotesError(
      "INVALID_ARGUMENT",
      `autoRestackAfterHours must be from 1 to ${MAX_RESTACK_HOURS}, or null`,
    );
  }
}

/** Parses an ISO 8601 time with a zone into epoch ms. */
export function parseTime(value: string, field: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(?:[01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.exec(
    value,
  );
  // Date.parse rolls a day the month does not have into the next month (2026-02-30 is 2026-03-02),
  // and reads T24:00 as the next day's midnight: such a time is refused, not moved (the tools'
  // schemas refuse them too).
  const ms = m && dateExists(Number(m[1]), Number(m[2]), Number(m[3])) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new NotesError(
      "INVALID_ARGUMENT",
      `${field} must be an ISO 8601 time with a zone, such as 2030-01-01T09:00:00Z`,
    );
  }
  return ms;
}

function dateExists(year: number, month: number, day: number): boolean {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years 0-99 as 1900-1999
  return d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** Notes: create, read, change, delete, schedule. Every status change goes through the table in status.ts. */
export class NotesService {
  constructor(
    private readonly repo: NotesRepository,
    private readonly clock: Clock,
  ) {}

  private now(): number {
    return this.clock().getTime();
  }

  async create(input: CreateNoteInput): Promise<NoteDetail> {
    checkContent(input.content);
    checkRestack(input.autoRestackAfterHours);
    const status = input.status ?? "draft";
    if (!["draft", "ready", "evergreen"].includes(status)) {
      throw new NotesError(
        "INVALID_TRANSITION",
        `A new note can be draft, ready or evergreen, not ${status}; create it, then use schedule_notes`,
      );
    }
    const at = iso(this.now());
    const note: NoteDetail = {
      id: randomUUID(),
      content: input.content,
      tags: normaliseTags(input.tags ?? []),
      status,
      scheduledAt: null,
      autoRestackAfterHours: input.autoRestackAfterHours ?? null,
      createdAt: at,
      updatedAt: at,
      ...UNPUBLISHED,
    };
    await this.repo.insert(note);
    return note;
  }

  async get(id: string): Promise<NoteDetail> {
    const note = await this.repo.get(id);
    if (!note) throw notFound(id);
    return note;
  }

  async list(filter: ListFilter, limit: number, skip: number): Promise<Page<Note>> {
    const tag = filter.tag === undefined ? undefined : normaliseTag(filter.tag);
    // No note carries an empty tag, and the store counts "every tag" under '', so a blank filter
    // would report every note in total while matching none: refuse it rather than guess.
    if (tag === "") {
      throw new NotesError(
        "INVALID_ARGUMENT",
        "tag must not be empty or only spaces; leave tag out to list notes with any tag",
      );
    }
    return this.repo.list(
      { ...(filter.status ? { status: filter.status } : {}), ...(tag !== undefined ? { tag } : {}) },
      limit,
      skip,
    );
  }

  async update(id: string, patch: UpdateNoteInput): Promise<NoteDetail> {
    if (
      patch.content === undefined &&
      patch.tags === undefined &&
      patch.status === undefined &&
      patch.autoRestackAfterHours === undefined
    ) {
      throw new NotesError(
        "INVALID_ARGUMENT",
        "Give at least one of content, tags, status or autoRestackAfterHours",
      );
    }
    if (patch.content !== undefined) checkContent(patch.content);
    checkRestack(patch.autoRestackAfterHours);
    const tags = patch.tags === undefined ? undefined : normaliseTags(patch.tags);
    return this.repo.transaction(async () => {
      const note = await this.get(id);
      if (note.status === "published") {
        if (patch.content !== undefined && patch.content !== note.content) {
          throw new NotesError("NOT_EDITABLE", `Note ${id} is published; its content cannot change`);
        }
        if (
          patch.autoRestackAfterHours !== undefined &&
          patch.autoRestackAfterHours !== note.autoRestackAfterHours
        ) {
          throw new NotesError(
            "NOT_EDITABLE",
            `Note ${id} is published; its autoRestackAfterHours cannot change`,
          );
        }
      }
      // A restack re-posts what was published: a published note made evergreen (whose content becomes
      // the source of its copies) keeps that content until its restack is out.
      if (
        note.status !== "published" &&
        note.restackDueAt !== null &&
        note.restackedAt === null &&
        patch.content !== undefined &&
        patch.content !== note.content
      ) {
        throw new NotesError(
          "NOT_EDITABLE",
          `Note ${id} has a restack due at ${note.restackDueAt}, which re-posts it as published; its content can change once the restack is out`,
        );
      }
      const next: NoteDetail = { ...note };
      if (patch.status !== undefined && patch.status !== note.status) {
        assertTransition(id, note.status, patch.status, "update_note", note.publishedAt);
        next.status = patch.status;
        // Evergreen notes are sources, never on the queue themselves.
        if (patch.status === "evergreen") next.scheduledAt = null;
      }
      if (patch.content !== undefined) next.content = patch.content;
      if (tags !== undefined) next.tags = tags;
      if (patch.autoRestackAfterHours !== undefined) next.autoRestackAfterHours = patch.autoRestackAfterHours;
      next.updatedAt = iso(this.now());
      await this.repo.update(next);
      return next;
    });
  }

  async delete(id: string): Promise<NoteDetail> {
    return this.repo.transaction(async () => {
      const note = await this.get(id);
      await this.repo.delete(id);
      return note;
    });
  }

  /**
   * Schedules notes, all or none: each at its explicit time (which must be in the future) or, without
   * one, in the next free slot of the weekly plan, in the order given.
   */
  async schedule(items: readonly ScheduleItem[]): Promise<NoteDetail[]> {
    const ids = new Set<string>();
    for (const item of items) {
      if (ids.has(item.id)) throw new NotesError("INVALID_ARGUMENT", `Note ${item.id} is listed twice`);
      ids.add(item.id);
      checkRestack(item.autoRestackAfterHours);
    }
    const now = this.now();
    return this.repo.transaction(async () => {
      const notes: NoteDetail[] = [];
      for (const item of items) {
        const note = await this.get(item.id);
        assertTransition(item.id, note.status, "scheduled", "schedule_notes", note.publishedAt);
        notes.push(note);
      }
      const explicit = items.map((item) => {
        if (item.scheduledAt === undefined) return undefined;
        const ms = parseTime(item.scheduledAt, "scheduledAt");
        if (ms <= now) {
          throw new NotesError(
            "PAST_TIME",
            `scheduledAt must be in the future: ${item.scheduledAt} is not after ${iso(now)}`,
          );
        }
        return ms;
      });
      const wanted = explicit.filter((t) => t === undefined).length;
      // A note given an explicit time in this call takes that instant: no other note of the call gets it
      // as its "next free slot".
      const claimed = new Set(explicit.filter((t): t is number => t !== undefined));
      const free = wanted > 0 ? await findFreeSlots(this.repo, now, wanted, ids, claimed) : [];
      let nextFree = 0;
      const at = iso(now);
      const scheduled: NoteDetail[] = [];
      for (const [i, note] of notes.entries()) {
        const item = items[i]!;
        const time = explicit[i] ?? free[nextFree++]!.at;
        const next: NoteDetail = {
          ...note,
          status: "scheduled" as NoteStatus,
          scheduledAt: iso(time),
          autoRestackAfterHours:
            item.autoRestackAfterHours === undefined
              ? note.autoRestackAfterHours
              : item.autoRestackAfterHours,
          attempts: 0,
          lastError: null,
          lastAttemptAt: null,
          updatedAt: at,
        };
        await this.repo.update(next);
        scheduled.push(next);
      }
      return scheduled;
    });
  }

  /** Takes a scheduled note off the queue, back to ready (default) or draft. */
  async unschedule(id: string, to: UnscheduledStatus = "ready"): Promise<NoteDetail> {
    return this.repo.transaction(async () => {
      const note = await this.get(id);
      assertTransition(id, note.status, to, "unschedule_note");
      const next: NoteDetail = { ...note, status: to, scheduledAt: null, updatedAt: iso(this.now()) };
      await this.repo.update(next);
      return next;
    });
  }

  async tags(status?: NoteStatus): Promise<TagCount[]> {
    return this.repo.tagCounts(status);
  }
}
