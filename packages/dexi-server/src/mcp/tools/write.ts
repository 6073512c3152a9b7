import { hints, toolFactory } from "@mcpforge/toolkit";
import { z } from "zod";
import { MAX_TEXT, MAX_TITLE, NOTES_WRITE, UPDATE_MODES } from "../../domain/limits.js";
import type { Deleted, NoteFull as FullNote } from "../../domain/view.js";
import { type DexiContext, NoteFull, noteId, tiedTo } from "./common.js";

const tool = toolFactory<DexiContext>({ group: "Write", scope: NOTES_WRITE });
const fullNote = tiedTo<FullNote>()(NoteFull);

export const writeTools = [
  tool({
    name: "create_note",
    title: "Create a note",
    description:
      "Creates a note from plain text and returns it. Write #hashtags and @mentions inline: they become the note's tags. On a plan at its note cap this fails with the limit message and creates nothing. The note is searchable, by words and by meaning, as soon as this returns.",
    input: {
      title: z.string().max(MAX_TITLE).default("").describe(`Title, up to ${MAX_TITLE} characters.`),
      text: z.string().max(MAX_TEXT).default("").describe("The plain-text body."),
    },
    output: fullNote,
    annotations: hints.additive,
    summary: (r) => `Created note "${r.title}"`,
    handler: (i, { ctx }) => ctx.notes.create(ctx.viewer, { title: i.title, text: i.text }),
  }),
  tool({
    name: "update_note",
    title: "Update a note",
    description:
      'Changes one of your own notes: its title, its body, or both. mode "append" adds the text at the end of the body (the safe way to add a thought); mode "replace" overwrites the whole body, losing any rich formatting (headings, links, lists), so read the note first and prefer append unless a rewrite was asked for. Omit title to keep it, omit text to keep the body; omitting both is "Nothing to update". Team-mates\' shared notes are read-only.',
    input: {
      note_id: noteId("The UUID of one of your own notes"),
      title: z
        .string()
        .max(MAX_TITLE)
        .optional()
        .describe(`New title, up to ${MAX_TITLE} characters; omit to keep.`),
      text: z
        .string()
        .max(MAX_TEXT)
        .optional()
        .describe("New body text, or the text to append; omit to keep."),
      mode: z.enum(UPDATE_MODES).default("replace").describe("replace the body, or append to it."),
    },
    output: fullNote,
    annotations: hints.destructive,
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
    description:
      "Deletes one of your own notes for good, with the bookmark, saved email or feed-article record it came from. It cannot be undone: confirm with the user before deleting anything they did not explicitly ask to delete.",
    input: { note_id: noteId("The UUID of one of your own notes") },
    output: tiedTo<Deleted>()({ deleted: z.literal(true), id: z.string(), title: z.string() }),
    annotations: hints.destructiveIdempotent,
    summary: (r) => `Deleted note "${r.title}"`,
    handler: (i, { ctx }) => ctx.notes.delete(ctx.viewer, i.note_id),
  }),
];
