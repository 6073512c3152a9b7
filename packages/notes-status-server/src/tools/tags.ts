import { z } from "zod";
import { notesTool, READ, statusEnum } from "./define.js";

export const listTags = notesTool({
  name: "list_tags",
  title: "List tags",
  group: "Tags",
  description:
    "Lists every tag (category) in use with how many notes carry it, most used first. Optionally counts only notes with one status. evergreen is a status, not a tag.",
  scope: null,
  input: { status: statusEnum.optional().describe("Count only notes with this status") },
  output: {
    tags: z
      .array(z.object({ tag: z.string(), count: z.number() }))
      .describe("Tag and note count, most used first"),
    total: z.number().describe("How many distinct tags"),
  },
  annotations: READ,
  summary: (r) => `${r.total} tags`,
  handler: ({ status }, { ctx }) => {
    const tags = ctx.notes.tags(status);
    return { tags, total: tags.length };
  },
});
