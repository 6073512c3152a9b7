import { hints, toolFactory } from "@mcpforge/toolkit";
import { z } from "zod";
import type { TagCount } from "../../domain/notes.js";
import { type Agrees, type Checked, type NotesContext, statusEnum } from "./shared.js";

const tool = toolFactory<NotesContext>({ group: "Tags", scope: null });

const TagCountSchema = z.object({ tag: z.string(), count: z.number() });
export type _TagCountAgrees = Checked<Agrees<z.output<typeof TagCountSchema>, TagCount>>;

export const listTags = tool({
  name: "list_tags",
  title: "List tags",
  description:
    "Lists every tag (category) in use with how many notes carry it, most used first. Optionally counts only notes with one status. evergreen is a status, not a tag.",
  input: { status: statusEnum.optional().describe("Count only notes with this status") },
  output: {
    tags: z.array(TagCountSchema).describe("Tag and note count, most used first"),
    total: z.number().describe("How many distinct tags"),
  },
  annotations: hints.readOnly,
  summary: (r) => `${r.total} tags`,
  handler: async ({ status }, { ctx }) => {
    const tags = await ctx.notes.tags(status);
    return { tags, total: tags.length };
  },
});
