import { toolFactory } from "@mcpforge/toolkit";
import { z } from "zod";
import type { NotesService } from "../domain/notes.js";
import type { QueueService } from "../domain/queue.js";
import { NOTE_STATUSES } from "../domain/status.js";
import { WEEKDAYS } from "../domain/time.js";

export interface NotesContext {
  notes: NotesService;
  queue: QueueService;
}

/** Declares a notes-status tool. Domain failures (NotesError) carry a declared `reason`, which the kit reports as is. */
export const notesTool = toolFactory<NotesContext>();

const dateTime = () => z.string().meta({ format: "date-time" });

/** A note exactly as list_notes returns it (the seed's Result table: no descriptions, status a string). */
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
      "The last publishing failure, or null; a failing note stays scheduled until the scheduler gives up and makes it failed",
    ),
  lastAttemptAt: z.string().nullable().describe("When the publisher last tried, or null"),
});

export const noteId = () => z.string().min(1).max(200).describe("The note's id, from list_notes");
export const statusEnum = z.enum(NOTE_STATUSES);
export const creatableStatus = z.enum(["draft", "ready", "evergreen"]);
export const weekdayEnum = z.enum(WEEKDAYS);

export const content = () =>
  z.string().min(1).max(10_000).describe("The note's text, 1 to 10,000 characters (not only spaces)");
export const tags = () =>
  z
    .array(z.string().max(200))
    .max(20)
    .describe("Categories, at most 20; each is trimmed and lower-cased, 1 to 50 characters");
export const restackHours = () =>
  z
    .number()
    .min(1)
    .max(720)
    .nullable()
    .describe(
      "Hand the note to the publisher once more this many hours after it is published (1 to 720); null: never",
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

export const READ = { readOnly: true, destructive: false, idempotent: true, openWorld: false } as const;
