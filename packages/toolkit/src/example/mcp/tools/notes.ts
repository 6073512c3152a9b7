import { z } from "zod";
import { hints } from "../../../annotations.js";
import { toolFactory } from "../../../define.js";
import { DEFAULT_LIST, MAX_LIST, MAX_NOTE_TEXT } from "../../domain/notebook.js";
import {
  EXAMPLE_READ,
  EXAMPLE_WRITE,
  type ExampleContext,
  type ExampleState,
  NoteSchema,
  notFound,
} from "./shared.js";

const tool = toolFactory<ExampleContext, ExampleState>({ group: "Notes", scope: EXAMPLE_READ });

export const addNote = tool({
  name: "add_note",
  title: "Add a note",
  description: "Adds a short note to the notebook and returns it.",
  scope: EXAMPLE_WRITE,
  input: {
    text: z.string().min(1).max(MAX_NOTE_TEXT).describe(`The note's text, 1 to ${MAX_NOTE_TEXT} characters`),
  },
  output: { note: NoteSchema },
  annotations: hints.additive,
  summary: (r) => `Added note ${r.note.id}`,
  handler: ({ text }, { ctx }) => ({ note: ctx.notebook.add(text) }),
});

export const listNotes = tool({
  name: "list_notes",
  title: "List notes",
  description: "Lists the notebook's notes, oldest first. Archived notes are left out unless asked for.",
  input: {
    include_archived: z.boolean().default(false).describe("Include archived notes"),
    limit: z.number().int().min(1).max(MAX_LIST).default(DEFAULT_LIST).describe("Most notes to return"),
  },
  output: { notes: z.array(NoteSchema), total: z.number().int() },
  annotations: hints.readOnly,
  summary: (r) => `${r.notes.length} of ${r.total} notes`,
  handler: ({ include_archived, limit }, { ctx }) => {
    const all = ctx.notebook.list(include_archived);
    return { notes: all.slice(0, limit), total: all.length };
  },
});

export const getNote = tool({
  name: "get_note",
  title: "Get a note",
  description: "Reads one note by its id.",
  input: { id: z.number().int().min(1).describe("The note's id, from list_notes") },
  output: { note: NoteSchema },
  annotations: hints.readOnly,
  summary: (r) => `Note ${r.note.id}`,
  handler: ({ id }, { ctx }) => ({ note: ctx.notebook.get(id) ?? notFound("Note", id) }),
});

export const archiveAll = tool({
  name: "archive_all",
  title: "Archive every note",
  description:
    "Archives every note. While purging is allowed, archived notes are also deleted for good, so the tool is then destructive.",
  scope: EXAMPLE_WRITE,
  input: {},
  output: { archived: z.number().int() },
  annotations: hints.idempotentWrite,
  liveAnnotations: (s) => ({ destructive: s.allowPurge }),
  summary: (r) => `Archived ${r.archived} notes`,
  handler: (_input, { ctx }) => ({ archived: ctx.notebook.archiveAll(false) }),
});

export const purge = tool({
  name: "purge",
  title: "Purge archived notes",
  description: "Deletes archived notes for good. Listed only while the notebook allows purging.",
  scope: EXAMPLE_WRITE,
  input: {},
  output: { purged: z.number().int() },
  annotations: hints.destructiveIdempotent,
  visibleWhen: (s) => s.allowPurge,
  summary: (r) => `Purged ${r.purged} notes`,
  handler: (_input, { ctx }) => ({ purged: ctx.notebook.purge() }),
});
