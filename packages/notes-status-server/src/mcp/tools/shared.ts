import { z } from "zod";
import {
  CREATABLE_STATUSES,
  MAX_CONTENT_LENGTH,
  MAX_NOTE_ID_LENGTH,
  MAX_RAW_TAG_LENGTH,
  MAX_RESTACK_HOURS,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  type NotesService,
} from "../../domain/notes.js";
import type { QueueService, SlotView } from "../../domain/queue.js";
import { NOTE_STATUSES } from "../../domain/status.js";
import { WEEKDAYS } from "../../domain/time.js";
import type { Note, NoteDetail } from "../../domain/types.js";

/** What every tool's handler gets: the domain services, nothing of the store. */
export interface NotesContext {
  notes: NotesService;
  queue: QueueService;
}

/**
 * `true` when a result schema's output type `Schema` fits its domain type `Domain`: the same fields,
 * and every value the domain produces is one the schema accepts. A field may be narrower in the
 * domain than advertised (a note's `status` is a NoteStatus, listed as a plain string), never wider,
 * and no field may be missing or extra on either side.
 */
export type Agrees<Schema, Domain> = [keyof Schema] extends [keyof Domain]
  ? [keyof Domain] extends [keyof Schema]
    ? [Domain] extends [Schema]
      ? true
      : false
    : false
  : false;
/** Compiles only for `true`: `type _ = Checked<Agrees<...>>` next to each result schema. */
export type Checked<T extends true> = T;

const dateTime = () => z.string().meta({ format: "date-time" });

/** A note exactly as list_notes returns it (fields without descriptions, status a plain string). */
export const NoteSchema = z.object({
  id: z.string(),
  content: z.string(),
  tags: z.array(z.string()),
  status: z.string(),
  scheduledAt: z.string().nullable(),
  autoRestackAfterHours: z.number().nullable(),
  createdAt: dateTime(),
  updatedAt: dateTime(),
});
export type _NoteAgrees = Checked<Agrees<z.output<typeof NoteSchema>, Note>>;

export const NoteDetailSchema = NoteSchema.extend({
  publishedAt: z.string().nullable().describe("When the note was published, or null"),
  restackDueAt: z
    .string()
    .nullable()
    .describe("When the restack is due (published notes with autoRestackAfterHours)"),
  restackedAt: z.string().nullable().describe("When the restack went out, or null"),
  sourceNoteId: z.string().nullable().describe("The evergreen note this one is a scheduled copy of, or null"),
  lastRecycledAt: z.string().nullable().describe("Evergreen notes: the slot of the newest copy, or null"),
  attempts: z.number().describe("How many times the publisher tried to send this note"),
  lastError: z
    .string()
    .nullable()
    .describe(
      "The last publishing failure, or null; a failing note stays scheduled until the scheduler gives up and makes it a draft again, this kept until it is scheduled again",
    ),
  lastAttemptAt: z.string().nullable().describe("When the publisher last tried, or null"),
});
export type _NoteDetailAgrees = Checked<Agrees<z.output<typeof NoteDetailSchema>, NoteDetail>>;

export const noteId = () =>
  z.string().min(1).max(MAX_NOTE_ID_LENGTH).describe("The note's id, from list_notes");
export const statusEnum = z.enum(NOTE_STATUSES);
export const creatableStatus = z.enum(CREATABLE_STATUSES);
export const weekdayEnum = z.enum(WEEKDAYS);

export const content = () =>
  z
    .string()
    .min(1)
    .max(MAX_CONTENT_LENGTH)
    .describe(
      `The note's text, 1 to ${MAX_CONTENT_LENGTH.toLocaleString("en-US")} characters (not only spaces)`,
    );
export const tags = () =>
  z
    .array(z.string().max(MAX_RAW_TAG_LENGTH))
    .max(MAX_TAGS)
    .describe(
      `Categories, at most ${MAX_TAGS}; each is trimmed and lower-cased, 1 to ${MAX_TAG_LENGTH} characters`,
    );
export const restackHours = () =>
  z
    .number()
    .min(1)
    .max(MAX_RESTACK_HOURS)
    .nullable()
    .describe(
      `Hand the note to the publisher once more this many hours after it is published (1 to ${MAX_RESTACK_HOURS}); null: never`,
    );

export const SlotViewSchema = z.object({
  at: z.string().meta({ format: "date-time" }).describe("The instant, UTC"),
  local: z.string().describe("The wall-clock time in the plan's time zone, YYYY-MM-DD HH:MM"),
  weekday: weekdayEnum.describe("The local weekday"),
  slot: z
    .string()
    .nullable()
    .describe("The plan's slot time (HH:MM), or null for a note at a time of its own"),
});
export type _SlotViewAgrees = Checked<Agrees<z.output<typeof SlotViewSchema>, SlotView>>;
