import { hints, toolFactory } from "@mcpforge/toolkit";
import { z } from "zod";
import { MAX_PAGE_SIZE, NOTES_READ, NOTES_WRITE } from "../../domain/limits.js";
import { type Grade, MAX_GRADE, MIN_GRADE } from "../../domain/sm2.js";
import type { DueReviews, Graded } from "../../domain/view.js";
import { type DexiContext, noteId, pageSize, plural, tiedTo } from "./common.js";

const tool = toolFactory<DexiContext>({ group: "Review", scope: NOTES_READ });

export const reviewTools = [
  tool({
    name: "get_due_reviews",
    title: "Get due reviews",
    description:
      "Review cards that are due: notes carrying one of the user's review deck tags, scheduled by SM-2. Quiz the user on the title or topic before showing the body, then record how it went with grade_review. is_new marks cards never graded.",
    input: { limit: pageSize(`How many cards to return, 1-${MAX_PAGE_SIZE}`) },
    output: tiedTo<DueReviews>()({
      items: z.array(
        z.object({
          id: z.string(),
          title: z.string(),
          text: z.string(),
          due_at: z.string(),
          interval_days: z.number(),
          repetitions: z.number().int(),
          is_new: z.boolean(),
        }),
      ),
      due_count: z.number().int(),
    }),
    annotations: hints.readOnly,
    summary: (r) => `${plural(r.due_count, "card")} due`,
    handler: (i, { ctx }) => ctx.notes.dueReviews(ctx.viewer, i.limit),
  }),
  tool({
    name: "grade_review",
    title: "Grade a review",
    scope: NOTES_WRITE,
    description:
      'Records how well the user recalled a card and schedules its next review: 1 = Again (forgotten; back in about 10 minutes), 2 = Hard, 3 = Good, 4 = Easy. A note that is not in review gives "Note is not in review". Needs the notes:write scope.',
    input: {
      note_id: noteId("The UUID of a card from get_due_reviews"),
      grade: z
        .number()
        .int()
        .min(MIN_GRADE)
        .max(MAX_GRADE)
        .describe("1=Again (forgot, back in ~10 min), 2=Hard, 3=Good, 4=Easy."),
    },
    output: tiedTo<Graded>()({
      id: z.string(),
      grade: z.number().int(),
      due_at: z.string(),
      interval_days: z.number(),
      ease_factor: z.number(),
      repetitions: z.number().int(),
    }),
    annotations: hints.additive,
    summary: (r) => `Next review ${r.due_at}`,
    handler: (i, { ctx }) => ctx.notes.grade(ctx.viewer, i.note_id, i.grade as Grade),
  }),
];
