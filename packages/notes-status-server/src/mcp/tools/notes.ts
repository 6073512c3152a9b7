import { hints, toolFactory } from "@mcpforge/toolkit";
import { z } from "zod";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, toListNote } from "../../domain/notes.js";
import { DEFAULT_GIVE_UP_AFTER } from "../../domain/scheduler.js";
import {
  content,
  creatableStatus,
  NoteDetailSchema,
  NoteSchema,
  type NotesContext,
  noteId,
  restackHours,
  statusEnum,
  tags,
} from "./shared.js";

/** Domain failures (NotesError) carry a declared `reason`, which the kit reports as is. */
const tool = toolFactory<NotesContext>({ group: "Notes", scope: null });

const integer = (z: z.ZodNumber) => z.refine(Number.isInteger, { message: "must be an integer" });

export const listNotes = tool({
  name: "list_notes",
  title: "List notes",
  description:
    "Lists your notes, newest first, optionally only those with one status or one tag. Status evergreen marks the source notes set to repeat; it is a status, not a tag. Page through with skip, and read hasMore in the result to know whether more notes follow.",
  input: {
    limit: integer(z.number().min(1).max(MAX_PAGE_SIZE))
      .default(DEFAULT_PAGE_SIZE)
      .describe(`How many notes to return at most (default ${DEFAULT_PAGE_SIZE}, max ${MAX_PAGE_SIZE})`),
    skip: integer(z.number().min(0)).default(0).describe("How many notes to skip, for pagination"),
    status: statusEnum
      .optional()
      .describe(
        "Only notes with this status. evergreen means the source notes set to repeat; it is a status, not a tag. A note whose publishing was given up after repeated errors, or whose delivery's outcome is unknown, is a draft again (get_note shows attempts and lastError; schedule_notes retries).",
      ),
    tag: z.string().optional().describe("Only notes with this category/tag name"),
  },
  output: {
    notes: z.array(NoteSchema),
    count: z.number(),
    total: z.number(),
    skip: z.number(),
    hasMore: z.boolean(),
  },
  annotations: hints.readOnly,
  summary: (r) => `${r.count} of ${r.total} notes${r.hasMore ? " (more follow)" : ""}`,
  handler: async ({ limit, skip, status, tag }, { ctx }) => {
    const page = await ctx.notes.list(
      { ...(status ? { status } : {}), ...(tag !== undefined ? { tag } : {}) },
      limit,
      skip,
    );
    return {
      notes: page.items,
      count: page.items.length,
      total: page.total,
      skip,
      // An empty page never promises more: a pager adding count to skip would not move.
      hasMore: page.items.length > 0 && skip + page.items.length < page.total,
    };
  },
});

export const getNote = tool({
  name: "get_note",
  title: "Get a note",
  description: `Reads one note by id, with its publishing facts: when it was published or restacked, the evergreen note it was copied from, and, when publishing failed, attempts and lastError. A failing note stays scheduled and is tried again, less and less often; after ${DEFAULT_GIVE_UP_AFTER} failed runs in a row (by default) it goes back to draft, off the queue, keeping attempts and lastError, and is not tried again until you schedule it again with schedule_notes. A note whose sending run stopped before recording the answer may have gone out: it is back to draft with a lastError saying so, and is not sent again unless you schedule it.`,
  input: { id: noteId() },
  output: { note: NoteDetailSchema },
  annotations: hints.readOnly,
  summary: (r) => `Note ${r.note.id} (${r.note.status})`,
  handler: async ({ id }, { ctx }) => ({ note: await ctx.notes.get(id) }),
});

export const createNote = tool({
  name: "create_note",
  title: "Create a note",
  description:
    "Creates a note as draft (default), ready or evergreen. evergreen marks a source note set to repeat: it is re-posted as scheduled copies into free queue slots. To put a note on the queue, create it, then call schedule_notes.",
  input: {
    content: content(),
    tags: tags().default([]),
    status: creatableStatus.default("draft").describe("draft (default), ready or evergreen"),
    autoRestackAfterHours: restackHours().default(null),
  },
  output: { note: NoteSchema },
  annotations: hints.additive,
  summary: (r) => `Created note ${r.note.id} (${r.note.status})`,
  handler: async (input, { ctx }) => ({ note: toListNote(await ctx.notes.create(input)) }),
});

export const updateNote = tool({
  name: "update_note",
  title: "Update a note",
  description:
    "Changes a note's content, tags, status or autoRestackAfterHours; fields left out stay as they are, and the given ones replace the old values. Status changes allowed here: draft <-> ready, draft/ready -> evergreen, evergreen -> draft/ready (unless it was published), published -> evergreen. Scheduling goes through schedule_notes and unschedule_note; a published note keeps its content, and made evergreen keeps its pending restack (and its content until that restack is out).",
  input: {
    id: noteId(),
    content: content().optional(),
    tags: tags().optional().describe("The new tags, replacing the old ones (trimmed, lower-cased)"),
    status: creatableStatus.optional().describe("The new status: draft, ready or evergreen"),
    autoRestackAfterHours: restackHours().optional(),
  },
  output: { note: NoteSchema },
  annotations: hints.destructiveIdempotent,
  summary: (r) => `Updated note ${r.note.id} (${r.note.status})`,
  handler: async ({ id, ...patch }, { ctx }) => ({ note: toListNote(await ctx.notes.update(id, patch)) }),
});

export const deleteNote = tool({
  name: "delete_note",
  title: "Delete a note",
  description:
    "Deletes a note for good, whatever its status, and returns what it was. Scheduled copies of a deleted evergreen note stay on the queue.",
  input: { id: noteId() },
  output: { deleted: z.boolean(), note: NoteSchema },
  annotations: hints.destructiveIdempotent,
  summary: (r) => `Deleted note ${r.note.id}`,
  handler: async ({ id }, { ctx }) => ({ deleted: true, note: toListNote(await ctx.notes.delete(id)) }),
});
