import { z } from "zod";
import { toListNote } from "../domain/shape.js";
import { NoteSchema, noteId, notesTool, restackHours } from "./define.js";

export const scheduleNotes = notesTool({
  name: "schedule_notes",
  title: "Schedule notes",
  group: "Queue",
  description:
    "Puts notes on the queue, all or none. Each note goes at its own scheduledAt (a future time) or, without one, into the next free slot of the weekly plan, in the order given. Draft, ready, failed and already scheduled notes can be scheduled (rescheduling moves a note; scheduling a failed one retries it, with attempts from 0); published and evergreen notes cannot. At scheduledAt the note is handed to the publisher and becomes published; with autoRestackAfterHours it is handed over once more, as a restack, that many hours later.",
  scope: null,
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
              "Restack this many hours after publishing (1 to 720), null for never; left out keeps the note's",
            ),
        }),
      )
      .min(1)
      .max(50)
      .describe("The notes to schedule, 1 to 50"),
  },
  output: { notes: z.array(NoteSchema).describe("The scheduled notes, in the order given") },
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  summary: (r) => `Scheduled ${r.notes.length} note${r.notes.length === 1 ? "" : "s"}`,
  handler: ({ notes }, { ctx }) => ({ notes: ctx.notes.schedule(notes).map(toListNote) }),
});

export const unscheduleNote = notesTool({
  name: "unschedule_note",
  title: "Unschedule a note",
  group: "Queue",
  description:
    "Takes a scheduled note off the queue, back to ready (default) or draft, and frees its slot. Only scheduled notes can be unscheduled.",
  scope: null,
  input: {
    id: noteId(),
    status: z
      .enum(["ready", "draft"])
      .default("ready")
      .describe("The status it goes back to: ready (default) or draft"),
  },
  output: { note: NoteSchema },
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  summary: (r) => `Unscheduled note ${r.note.id} (${r.note.status})`,
  handler: ({ id, status }, { ctx }) => ({ note: toListNote(ctx.notes.unschedule(id, status)) }),
});
