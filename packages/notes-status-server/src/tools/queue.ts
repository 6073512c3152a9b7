import { ToolError } from "@mcpforge/toolkit";
import { z } from "zod";
import { MAX_SLOTS_PER_DAY } from "../domain/slots.js";
import { WEEKDAYS } from "../domain/time.js";
import { NoteSchema, notesTool, READ, SlotViewSchema } from "./define.js";

const slotTimes = () =>
  z
    .array(z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/))
    .max(MAX_SLOTS_PER_DAY)
    .describe('Slot times that day, "HH:MM" 24-hour local time');

const weekShape = Object.fromEntries(WEEKDAYS.map((d) => [d, slotTimes()])) as Record<
  (typeof WEEKDAYS)[number],
  ReturnType<typeof slotTimes>
>;

const PlanSchema = {
  timeZone: z.string().describe("The IANA time zone the slots are in"),
  slots: z.object(weekShape).describe("Weekday -> slot times, every weekday present (empty: no slots)"),
  evergreenHorizonHours: z
    .number()
    .describe("Free slots this close (hours) get a copy of an evergreen note; 0 turns recycling off"),
  evergreenMinGapDays: z
    .number()
    .describe("The same evergreen note is never re-posted twice within this many days"),
};

export const getQueueSlots = notesTool({
  name: "get_queue_slots",
  title: "Get the weekly queue plan",
  group: "Queue",
  description:
    "Reads the weekly queue plan: slot times per weekday in the plan's IANA time zone, and the evergreen recycling settings.",
  scope: null,
  input: {},
  output: PlanSchema,
  annotations: READ,
  summary: (r) => `${Object.values(r.slots).flat().length} weekly slots in ${r.timeZone}`,
  handler: (_input, { ctx }) => ctx.queue.plan(),
});

export const setQueueSlots = notesTool({
  name: "set_queue_slots",
  title: "Set the weekly queue plan",
  group: "Queue",
  description:
    "Sets the weekly queue plan. slots replaces the whole week (a weekday left out gets no slots); timeZone is an IANA name such as Europe/Berlin; the evergreen settings tune recycling. Fields left out keep their value; give at least one. Slots are wall-clock times: 09:00 stays 09:00 local across daylight-saving changes, and a slot in an hour the clocks skip moves forward by the gap. Notes already scheduled keep their times.",
  scope: null,
  input: {
    timeZone: z.string().max(64).optional().describe("IANA time zone name, such as America/New_York"),
    slots: z
      .strictObject(
        Object.fromEntries(WEEKDAYS.map((d) => [d, slotTimes().optional()])) as Record<
          (typeof WEEKDAYS)[number],
          z.ZodOptional<ReturnType<typeof slotTimes>>
        >,
      )
      .optional()
      .describe('The whole weekly plan: weekday name -> ["HH:MM", ...]'),
    evergreenHorizonHours: z
      .number()
      .min(0)
      .max(2160)
      .optional()
      .describe(
        "Fill free slots this many hours ahead with evergreen copies (0 to 2160; 0 turns recycling off)",
      ),
    evergreenMinGapDays: z
      .number()
      .min(0)
      .max(3650)
      .optional()
      .describe("Never re-post the same evergreen note twice within this many days (0 to 3650)"),
  },
  output: PlanSchema,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  summary: (r) => `Plan saved: ${Object.values(r.slots).flat().length} weekly slots in ${r.timeZone}`,
  handler: (input, { ctx }) => {
    if (Object.values(input).every((v) => v === undefined)) {
      throw new ToolError(
        "INVALID_ARGUMENT",
        "Give at least one of timeZone, slots, evergreenHorizonHours or evergreenMinGapDays",
      );
    }
    return ctx.queue.setPlan(input);
  },
});

export const getNextAvailableSlots = notesTool({
  name: "get_next_available_slots",
  title: "Get the next free slots",
  group: "Queue",
  description:
    "Lists the next free slots of the weekly plan (no scheduled note in them), earliest first, looking up to a year ahead. Empty when the plan has no slots.",
  scope: null,
  input: {
    count: z.number().int().min(1).max(50).default(5).describe("How many slots (1 to 50, default 5)"),
    after: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("Slots after this time, ISO 8601 with a zone (default now)"),
  },
  output: { timeZone: z.string().describe("The plan's time zone"), slots: z.array(SlotViewSchema) },
  annotations: READ,
  summary: (r) => `${r.slots.length} free slot${r.slots.length === 1 ? "" : "s"}`,
  handler: ({ count, after }, { ctx }) => ({
    timeZone: ctx.queue.plan().timeZone,
    slots: ctx.queue.nextFreeSlots(count, after === undefined ? undefined : Date.parse(after)),
  }),
});

export const getQueue = notesTool({
  name: "get_queue",
  title: "Get the queue",
  group: "Queue",
  description:
    "Shows the queue: the upcoming scheduled notes, each with its slot (or slot null when scheduled at a time of its own), and the free slots between them, earliest first, for the next days. Starting from now, overdue notes still waiting to be published come first.",
  scope: null,
  input: {
    days: z.number().int().min(1).max(31).default(7).describe("How many days ahead (1 to 31, default 7)"),
    from: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("Start here instead of now, ISO 8601 with a zone"),
    includeFreeSlots: z.boolean().default(true).describe("Also list the free slots (default true)"),
    limit: z
      .number()
      .int()
      .min(1)
      .max(500)
      .default(100)
      .describe("At most this many entries (1 to 500, default 100)"),
  },
  output: {
    timeZone: z.string().describe("The plan's time zone"),
    from: z.string().meta({ format: "date-time" }),
    to: z.string().meta({ format: "date-time" }),
    entries: z.array(
      SlotViewSchema.extend({ note: NoteSchema.nullable().describe("The note, or null: a free slot") }),
    ),
    total: z.number().describe("Entries in the whole window"),
    hasMore: z.boolean(),
  },
  annotations: READ,
  summary: (r) => {
    const notes = r.entries.filter((e) => e.note !== null).length;
    return `${notes} scheduled, ${r.entries.length - notes} free in ${r.entries.length} entries${r.hasMore ? " (more follow)" : ""}`;
  },
  handler: ({ days, from, includeFreeSlots, limit }, { ctx }) =>
    ctx.queue.queue({
      days,
      includeFreeSlots,
      limit,
      ...(from !== undefined ? { fromMs: Date.parse(from) } : {}),
    }),
});
