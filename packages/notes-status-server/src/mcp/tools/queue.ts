import { hints, ToolError, toolFactory } from "@mcpforge/toolkit";
import { z } from "zod";
import {
  MAX_RESTACK_HOURS,
  MAX_SCHEDULE_BATCH,
  toListNote,
  UNSCHEDULED_STATUSES,
} from "../../domain/notes.js";
import {
  DEFAULT_FREE_SLOTS,
  DEFAULT_QUEUE_DAYS,
  DEFAULT_QUEUE_ENTRIES,
  MAX_FREE_SLOTS,
  MAX_HORIZON_HOURS,
  MAX_MIN_GAP_DAYS,
  MAX_QUEUE_DAYS,
  MAX_QUEUE_ENTRIES,
  type QueueEntry,
  type QueuePlan,
  type QueueView,
} from "../../domain/queue.js";
import { MAX_SLOTS_PER_DAY } from "../../domain/slots.js";
import { HH_MM, MAX_TIME_ZONE_LENGTH, WEEKDAYS } from "../../domain/time.js";
import {
  type Agrees,
  type Checked,
  NoteSchema,
  type NotesContext,
  noteId,
  restackHours,
  SlotViewSchema,
} from "./shared.js";

const tool = toolFactory<NotesContext>({ group: "Queue", scope: null });

const slotTimes = () =>
  z
    .array(z.string().regex(HH_MM))
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
export type _PlanAgrees = Checked<Agrees<z.output<z.ZodObject<typeof PlanSchema>>, QueuePlan>>;

export const getQueueSlots = tool({
  name: "get_queue_slots",
  title: "Get the weekly queue plan",
  description:
    "Reads the weekly queue plan: slot times per weekday in the plan's IANA time zone, and the evergreen recycling settings.",
  input: {},
  output: PlanSchema,
  annotations: hints.readOnly,
  summary: (r) => `${Object.values(r.slots).flat().length} weekly slots in ${r.timeZone}`,
  handler: (_input, { ctx }) => ctx.queue.plan(),
});

export const setQueueSlots = tool({
  name: "set_queue_slots",
  title: "Set the weekly queue plan",
  description:
    "Sets the weekly queue plan. slots replaces the whole week (a weekday left out gets no slots); timeZone is an IANA name such as Europe/Berlin; the evergreen settings tune recycling. Fields left out keep their value; give at least one. Slots are wall-clock times: 09:00 stays 09:00 local across daylight-saving changes, and a slot in an hour the clocks skip moves forward by the gap. Notes already scheduled keep their times.",
  input: {
    timeZone: z
      .string()
      .max(MAX_TIME_ZONE_LENGTH)
      .optional()
      .describe("IANA time zone name, such as America/New_York"),
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
      .max(MAX_HORIZON_HOURS)
      .optional()
      .describe(
        `Fill free slots this many hours ahead with evergreen copies (0 to ${MAX_HORIZON_HOURS}; 0 turns recycling off)`,
      ),
    evergreenMinGapDays: z
      .number()
      .min(0)
      .max(MAX_MIN_GAP_DAYS)
      .optional()
      .describe(
        `Never re-post the same evergreen note twice within this many days (0 to ${MAX_MIN_GAP_DAYS})`,
      ),
  },
  output: PlanSchema,
  annotations: hints.destructiveIdempotent,
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

export const getNextAvailableSlots = tool({
  name: "get_next_available_slots",
  title: "Get the next free slots",
  description:
    "Lists the next free slots of the weekly plan (no scheduled note in them), earliest first, looking up to a year ahead. Empty when the plan has no slots.",
  input: {
    count: z
      .number()
      .int()
      .min(1)
      .max(MAX_FREE_SLOTS)
      .default(DEFAULT_FREE_SLOTS)
      .describe(`How many slots (1 to ${MAX_FREE_SLOTS}, default ${DEFAULT_FREE_SLOTS})`),
    after: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("Slots after this time, ISO 8601 with a zone (default now)"),
  },
  output: { timeZone: z.string().describe("The plan's time zone"), slots: z.array(SlotViewSchema) },
  annotations: hints.readOnly,
  summary: (r) => `${r.slots.length} free slot${r.slots.length === 1 ? "" : "s"}`,
  handler: async ({ count, after }, { ctx }) => ({
    timeZone: (await ctx.queue.plan()).timeZone,
    slots: await ctx.queue.nextFreeSlots(count, after === undefined ? undefined : Date.parse(after)),
  }),
});

const QueueEntrySchema = SlotViewSchema.extend({
  note: NoteSchema.nullable().describe("The note, or null: a free slot"),
});
export type _QueueEntryAgrees = Checked<Agrees<z.output<typeof QueueEntrySchema>, QueueEntry>>;

const QueueViewSchema = {
  timeZone: z.string().describe("The plan's time zone"),
  from: z.string().meta({ format: "date-time" }),
  to: z.string().meta({ format: "date-time" }),
  entries: z.array(QueueEntrySchema),
  total: z.number().describe("Entries in the whole window"),
  hasMore: z.boolean(),
};
export type _QueueViewAgrees = Checked<Agrees<z.output<z.ZodObject<typeof QueueViewSchema>>, QueueView>>;

export const getQueue = tool({
  name: "get_queue",
  title: "Get the queue",
  description:
    "Shows the queue: the upcoming scheduled notes, each with its slot (or slot null when scheduled at a time of its own), and the free slots between them, earliest first, for the next days. Starting from now, overdue notes still waiting to be published come first.",
  input: {
    days: z
      .number()
      .int()
      .min(1)
      .max(MAX_QUEUE_DAYS)
      .default(DEFAULT_QUEUE_DAYS)
      .describe(`How many days ahead (1 to ${MAX_QUEUE_DAYS}, default ${DEFAULT_QUEUE_DAYS})`),
    from: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("Start here instead of now, ISO 8601 with a zone"),
    includeFreeSlots: z.boolean().default(true).describe("Also list the free slots (default true)"),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_QUEUE_ENTRIES)
      .default(DEFAULT_QUEUE_ENTRIES)
      .describe(`At most this many entries (1 to ${MAX_QUEUE_ENTRIES}, default ${DEFAULT_QUEUE_ENTRIES})`),
  },
  output: QueueViewSchema,
  annotations: hints.readOnly,
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

export const scheduleNotes = tool({
  name: "schedule_notes",
  title: "Schedule notes",
  description:
    "Puts notes on the queue, all or none. Each note goes at its own scheduledAt (a future time) or, without one, into the next free slot of the weekly plan, in the order given. Draft, ready and already scheduled notes can be scheduled (rescheduling moves a note; scheduling a draft whose publishing was given up retries it, with attempts and lastError cleared); published and evergreen notes cannot. At scheduledAt the note is handed to the publisher and becomes published; with autoRestackAfterHours it is handed over once more, as a restack, that many hours later.",
  input: {
    notes: z
      .array(
        z.strictObject({
          id: noteId(),
          scheduledAt: z.iso
            .datetime({ offset: true })
            .optional()
            .describe("When to publish, ISO 8601 with a zone (future); leave out for the next free slot"),
          autoRestackAfterHours: restackHours()
            .optional()
            .describe(
              `Restack this many hours after publishing (1 to ${MAX_RESTACK_HOURS}), null for never; left out keeps the note's`,
            ),
        }),
      )
      .min(1)
      .max(MAX_SCHEDULE_BATCH)
      .describe(`The notes to schedule, 1 to ${MAX_SCHEDULE_BATCH}`),
  },
  output: { notes: z.array(NoteSchema).describe("The scheduled notes, in the order given") },
  annotations: hints.additive,
  summary: (r) => `Scheduled ${r.notes.length} note${r.notes.length === 1 ? "" : "s"}`,
  handler: async ({ notes }, { ctx }) => ({ notes: (await ctx.notes.schedule(notes)).map(toListNote) }),
});

export const unscheduleNote = tool({
  name: "unschedule_note",
  title: "Unschedule a note",
  description:
    "Takes a scheduled note off the queue, back to ready (default) or draft, and frees its slot. Only scheduled notes can be unscheduled.",
  input: {
    id: noteId(),
    status: z
      .enum(UNSCHEDULED_STATUSES)
      .default("ready")
      .describe("The status it goes back to: ready (default) or draft"),
  },
  output: { note: NoteSchema },
  annotations: hints.idempotentWrite,
  summary: (r) => `Unscheduled note ${r.note.id} (${r.note.status})`,
  handler: async ({ id, status }, { ctx }) => ({
    note: toListNote(await ctx.notes.unschedule(id, status)),
  }),
});
