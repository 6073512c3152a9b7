import { z } from "zod";
import { toListNote } from "../domain/shape.js";
import {
  content,
  creatableStatus,
  NoteDetailSchema,
  NoteSchema,
  noteId,
  notesTool,
  READ,
  restackHours,
  statusEnum,
  tags,
} from "./define.js";

const integer = (z: z.ZodNumber) => z.refine(Number.isInteger, { message: "must be an integer" });

export const listNotes = notesTool({
  name: "list_notes",
  title: "List notes",
  group: "Notes",
  description:
    "Lists your notes, newest first, optionally only those with one status or one tag. Status evergreen marks the source notes set to repeat; it is a status, not a tag. Page through with skip, and read hasMore in the result to know whether more notes follow.",
  scope: null,
  input: {
    limit: integer(z.number().min(1).max(50))
      .default(20)
      .describe("How many notes to return at most (default 20, max 50)"),
    skip: integer(z.number().min(0)).default(0).describe("How many notes to skip, for pagination"),
    status: statusEnum
      .optional()
      .describe(
        "Only notes with this status. evergreen means the source notes set to repeat; it is a status, not a tag. failed means publishing gave up after repeated errors (get_note shows lastError; schedule_notes retries).",
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
  annotations: READ,
  summary: (r) => `${r.count} of ${r.total} notes${r.hasMore ? " (more follow)" : ""}`,
  handler: ({ limit, skip, status, tag }, { ctx }) => {
    const page = ctx.notes.list(
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

export const getNote = notesTool({
  name: "get_note",
  title: "Get a note",
  group: "Notes",
  description:
    "Reads one note by id, with its publishing facts: when it was published or restacked, the evergreen note it was copied from, and, when publishing failed, attempts and lastError. A failing note stays scheduled and is tried again, less and less often; after 8 failed runs in a row (by default) it becomes failed and is not tried again until you schedule it again with schedule_notes.",
  scope: null,
  input: { id: noteId() },
  output: { note: NoteDetailSchema },
  annotations: READ,
  summary: (r) => `Note ${r.note.id} (${r.note.status})`,
  handler: ({ id }, { ctx }) => ({ note: ctx.notes.get(id) }),
});

export const createNote = notesTool({
  name: "create_note",
  title: "Create a note",
  group: "Notes",
  description:
    "Creates a note as draft (default), ready or evergreen. evergreen marks a source note set to repeat: it is re-posted as scheduled copies into free queue slots. To put a note on the queue, create it, then call schedule_notes.",
  scope: null,
  input: {
    content: content(),
    tags: tags().default([]),
    status: creatableStatus.default("draft").describe("draft (default), ready or evergreen"),
    autoRestackAfterHours: restackHours().default(null),
  },
  output: { note: NoteSchema },
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  summary: (r) => `Created note ${r.note.id} (${r.note.status})`,
  handler: (input, { ctx }) => ({ note: toListNote(ctx.notes.create(input)) }),
});

export const updateNote = notesTool({
  name: "update_note",
  title: "Update a note",
  group: "Notes",
  description:
    "Changes a note's content, tags, status or autoRestackAfterHours; fields left out stay as they are, and the given ones replace the old values. Status changes allowed here: draft <-> ready, draft/ready -> evergreen, evergreen -> draft/ready, published -> evergreen, failed -> draft/ready. Scheduling goes through schedule_notes and unschedule_note; a published note keeps its content.",
  scope: null,
  input: {
    id: noteId(),
    content: content().optional(),
    tags: tags().optional().describe("The new tags, replacing the old ones (trimmed, lower-cased)"),
    status: creatableStatus.optional().describe("The new status: draft, ready or evergreen"),
    autoRestackAfterHours: restackHours().optional(),
  },
  output: { note: NoteSchema },
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  summary: (r) => `Updated note ${r.note.id} (${r.note.status})`,
  handler: ({ id, ...patch }, { ctx }) => ({ note: toListNote(ctx.notes.update(id, patch)) }),
});

export const deleteNote = notesTool({
  name: "delete_note",
  title: "Delete a note",
  group: "Notes",
  description:
    "Deletes a note for good, whatever its status, and returns what it was. Scheduled copies of a deleted evergreen note stay on the queue.",
  scope: null,
  input: { id: noteId() },
  output: { deleted: z.boolean(), note: NoteSchema },
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  summary: (r) => `Deleted note ${r.note.id}`,
  handler: ({ id }, { ctx }) => ({ deleted: true, note: toListNote(ctx.notes.delete(id)) }),
});
