import { z } from "zod";
import { NoteFull, noteId, READ_ONLY, tool, WRITE } from "./common.js";

export const MAX_TEXT = 1_000_000;

export const writeTools = [
  tool({
    name: "create_note",
    title: "Create a note",
    group: "Write",
    scope: WRITE,
    description:
      "Creates a note from plain text and returns it. Write #hashtags and @mentions inline: they become the note's tags. On a plan at its note cap this fails with the limit message and creates nothing. The note is searchable, by words and by meaning, as soon as this returns.",
    input: {
      title: z.string().max(500).default("").describe("Title, up to 500 characters."),
      text: z.string().max(MAX_TEXT).default("").describe("The plain-text body."),
    },
    output: NoteFull,
    annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
    summary: (r) => `Created note "${r.title}"`,
    handler: (i, { ctx }) => ctx.notes.create(ctx.viewer, { title: i.title, text: i.text }),
  }),
  tool({
    name: "update_note",
    title: "Update a note",
    group: "Write",
    scope: WRITE,
    description:
      'Changes one of your own notes: its title, its body, or both. mode "append" adds the text at the end of the body (the safe way to add a thought); mode "replace" overwrites the whole body, losing any rich formatting (headings, links, lists), so read the note first and prefer append unless a rewrite was asked for. Omit title to keep it, omit text to keep the body; omitting both is "Nothing to update". Team-mates\' shared notes are read-only.',
    input: {
      note_id: noteId("The UUID of one of your own notes"),
      title: z.string().max(500).optional().describe("New title, up to 500 characters; omit to keep."),
      text: z
        .string()
        .max(MAX_TEXT)
        .optional()
        .describe("New body text, or the text to append; omit to keep."),
      mode: z.enum(["replace", "append"]).default("replace").describe("replace the body, or append to it."),
    },
    output: NoteFull,
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    summary: (r) => `Updated note "${r.title}"`,
    handler: (i, { ctx }) =>
      ctx.notes.update(ctx.viewer, {
        note_id: i.note_id,
        mode: i.mode,
        ...(i.title !== undefined ? { title: i.title } : {}),
        ...(i.text !== undefined ? { text: i.text } : {}),
      }),
  }),
  tool({
    name: "delete_note",
    title: "Delete a note",
    group: "Write",
    scope: WRITE,
    description:
      "Deletes one of your own notes for good, with the bookmark, saved email or feed-article record it came from. It cannot be undone: confirm with the user before deleting anything they did not explicitly ask to delete.",
    input: { note_id: noteId("The UUID of one of your own notes") },
    output: { deleted: z.literal(true), id: z.string(), title: z.string() },
    annotations: { ...READ_ONLY, readOnly: false, destructive: true, idempotent: true },
    summary: (r) => `Deleted note "${r.title}"`,
    handler: (i, { ctx }) => ctx.notes.delete(ctx.viewer, i.note_id),
  }),
];
