import { NotesError } from "./errors.js";

/**
 * The specification's five statuses. A note whose publishing the scheduler gives up on goes back to
 * draft with its attempts and lastError kept (get_note shows them), for the owner to decide what next.
 */
export const NOTE_STATUSES = ["draft", "ready", "scheduled", "published", "evergreen"] as const;
export type NoteStatus = (typeof NOTE_STATUSES)[number];

/** Who moves a note: a person through a tool, or the scheduler when it publishes. */
export type TransitionVia = "update_note" | "schedule_notes" | "unschedule_note" | "publisher";

/**
 * Every allowed status change, and the only way to make it. Anything not in this table is refused
 * with INVALID_TRANSITION. The README carries the same table.
 */
export const TRANSITIONS: ReadonlyArray<{ from: NoteStatus; to: NoteStatus; via: TransitionVia }> = [
  { from: "draft", to: "ready", via: "update_note" },
  { from: "draft", to: "evergreen", via: "update_note" },
  { from: "draft", to: "scheduled", via: "schedule_notes" },
  { from: "ready", to: "draft", via: "update_note" },
  { from: "ready", to: "evergreen", via: "update_note" },
  { from: "ready", to: "scheduled", via: "schedule_notes" },
  { from: "evergreen", to: "draft", via: "update_note" },
  { from: "evergreen", to: "ready", via: "update_note" },
  { from: "scheduled", to: "scheduled", via: "schedule_notes" },
  { from: "scheduled", to: "ready", via: "unschedule_note" },
  { from: "scheduled", to: "draft", via: "unschedule_note" },
  { from: "scheduled", to: "published", via: "publisher" },
  // The scheduler gave up on it: back in the owner's hands, lastError kept. Scheduling it again is the
  // retry (its attempts start from 0).
  { from: "scheduled", to: "draft", via: "publisher" },
  { from: "published", to: "evergreen", via: "update_note" },
];

export function canTransition(from: NoteStatus, to: NoteStatus, via: TransitionVia): boolean {
  return TRANSITIONS.some((t) => t.from === from && t.to === to && t.via === via);
}

/** Throws INVALID_TRANSITION with a message that says what would work instead. */
export function assertTransition(
  id: string,
  from: NoteStatus,
  to: NoteStatus,
  via: TransitionVia,
  publishedAt: string | null = null,
): void {
  if (from === to && via === "update_note") return; // setting the status a note already has changes nothing
  // A published note made evergreen is still the published one: back to draft or ready it could be
  // scheduled and posted a second time, under the delivery id of its first post (which receivers that
  // drop duplicates would drop). Its copies are what recycling posts again.
  if (from === "evergreen" && publishedAt !== null && to !== "evergreen")
    throw new NotesError(
      "INVALID_TRANSITION",
      `Note ${id} cannot go from evergreen to ${to}: it was published (${publishedAt}), and a published note cannot go back to draft, ready or the queue; recycling posts copies of it`,
    );
  if (canTransition(from, to, via)) return;
  const other = TRANSITIONS.find((t) => t.from === from && t.to === to);
  const why = other
    ? `use ${other.via === "publisher" ? "the scheduler" : other.via} for that`
    : from === "published"
      ? "a published note can only become evergreen"
      : from === "evergreen" && to === "scheduled"
        ? "evergreen notes are re-posted as scheduled copies by recycling; set it to ready first to schedule it itself"
        : `allowed from ${from}: ${
            TRANSITIONS.filter((t) => t.from === from)
              .map((t) => `${t.to} (${t.via})`)
              .join(", ") || "nothing"
          }`;
  throw new NotesError("INVALID_TRANSITION", `Note ${id} cannot go from ${from} to ${to}: ${why}`);
}
