import type { Note, NoteDetail } from "./types.js";

/** Just the fields list_notes shows. */
export function toListNote(n: NoteDetail): Note {
  return {
    id: n.id,
    content: n.content,
    tags: n.tags,
    status: n.status,
    scheduledAt: n.scheduledAt,
    autoRestackAfterHours: n.autoRestackAfterHours,
    createdAt: n.createdAt,
    updatedAt: n.updatedAt,
  };
}
