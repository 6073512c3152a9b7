/**
 * The domain's failures. The domain knows nothing of MCP, and no tool translates a NotesError: the kit
 * reports any Error that carries a reason the server declared (these, through `defineReasons`) with
 * its message and hint, and any other error as INTERNAL. The exit codes are what a command over this
 * domain would exit with; the only one today, `publish-due`, exits 1 when publishing failed.
 */
export const NOTES_REASONS = {
  NOT_FOUND: { hint: "Check the id with list_notes or get_queue.", exitCode: 3 },
  INVALID_TRANSITION: {
    hint: "See the allowed status changes in the tool description; a published note cannot change back.",
    exitCode: 4,
  },
  PAST_TIME: {
    hint: "Give a time in the future (ISO 8601 with a zone, such as 2030-01-01T09:00:00Z).",
    exitCode: 5,
  },
  INVALID_TIME_ZONE: {
    hint: "Use an IANA time zone name, such as Europe/Berlin or America/New_York.",
    exitCode: 6,
  },
  NO_FREE_SLOT: {
    hint: "Add weekly slots with set_queue_slots, or give explicit scheduledAt times.",
    exitCode: 7,
  },
  INVALID_SLOT: { hint: 'Slot times are "HH:MM" in 24-hour form, 00:00 to 23:59.', exitCode: 2 },
  NOT_EDITABLE: {
    hint: "A published note is history: only its tags can change (or make it evergreen).",
    exitCode: 4,
  },
} as const;

/** INVALID_ARGUMENT is the kit's own reason; the domain raises it for rules a schema cannot say. */
export type NotesReason = keyof typeof NOTES_REASONS | "INVALID_ARGUMENT";

export class NotesError extends Error {
  readonly reason: NotesReason;
  readonly hint: string | undefined;
  constructor(reason: NotesReason, message: string, hint?: string) {
    super(message);
    this.name = "NotesError";
    this.reason = reason;
    this.hint = hint;
  }
}

export function notFound(id: string): NotesError {
  return new NotesError("NOT_FOUND", `Note not found: ${id}`);
}
