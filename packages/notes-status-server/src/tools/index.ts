import { createNote, deleteNote, getNote, listNotes, updateNote } from "./notes.js";
import { getNextAvailableSlots, getQueue, getQueueSlots, setQueueSlots } from "./queue.js";
import { scheduleNotes, unscheduleNote } from "./schedule.js";
import { listTags } from "./tags.js";

export type { NotesContext } from "./define.js";

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
