import { createServer, defineReasons, type KitServer, packageVersion } from "@mcpforge/toolkit";
import { NOTES_REASONS } from "../domain/errors.js";
import { createNote, deleteNote, getNote, listNotes, updateNote } from "./tools/notes.js";
import {
  getNextAvailableSlots,
  getQueue,
  getQueueSlots,
  scheduleNotes,
  setQueueSlots,
  unscheduleNote,
} from "./tools/queue.js";
import type { NotesContext } from "./tools/shared.js";
import { listTags } from "./tools/tags.js";

export type { NotesContext } from "./tools/shared.js";

export const SERVER_NAME = "notes-status-mcp";
export const SERVER_VERSION = packageVersion(import.meta.url);

/** Every reason a tool of this server can answer with (the kit's own included). */
export const notesReasons = defineReasons(NOTES_REASONS);

/** The tools in the order tools/list shows them. */
export const notesTools = [
  listNotes,
  getNote,
  createNote,
  updateNote,
  deleteNote,
  scheduleNotes,
  unscheduleNote,
  getQueue,
  getNextAvailableSlots,
  getQueueSlots,
  setQueueSlots,
  listTags,
];

export interface NotesServerOptions {
  context: NotesContext;
  /** Milliseconds since the epoch, for the kit's gate and logs. */
  now: () => number;
  log?: (line: string) => void;
}

/** The MCP server over the domain services; the text block of every result is its JSON. */
export function createNotesServer(options: NotesServerOptions): KitServer<NotesContext> {
  const { context } = options;
  return createServer<NotesContext>({
    name: SERVER_NAME,
    version: SERVER_VERSION,
    instructions:
      "A writer's queue of short notes. Notes move draft -> ready -> scheduled -> published (or failed, when publishing keeps failing); evergreen notes are sources re-posted as scheduled copies into free slots. Times are ISO 8601; the weekly slot plan is in its own IANA time zone.",
    tools: notesTools,
    reasons: notesReasons,
    textMode: "json",
    context: () => context,
    now: options.now,
    ...(options.log ? { log: options.log } : {}),
  });
}
