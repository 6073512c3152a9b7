import type { NoteDetail } from "../types.js";

export type PublishKind = "post" | "restack";

/** What a publisher receives: the note as it goes out, and whether this is its first post or a restack. */
export interface PublishEvent {
  kind: PublishKind;
  /** When the scheduler handed it over (ISO 8601). */
  at: string;
  note: NoteDetail;
}

/** How many tries a successful publish took (a publisher without retries may return nothing: 1). */
export interface PublishOutcome {
  attempts: number;
}

/** A publisher sends one note out; it throws when it could not (after its own retries). */
export interface Publisher {
  readonly name: string;
  publish(event: PublishEvent): Promise<PublishOutcome | undefined>;
}

/** A failure after `attempts` tries; the scheduler records both on the note. */
export class PublishError extends Error {
  readonly attempts: number;
  constructor(message: string, attempts: number) {
    super(message);
    this.name = "PublishError";
    this.attempts = attempts;
  }
}

/** The JSON every built-in publisher writes: the outbox line and the webhook body are the same. */
export function payloadOf(event: PublishEvent) {
  const n = event.note;
  return {
    event: event.kind === "post" ? "note.published" : "note.restacked",
    deliveryId: `${n.id}:${event.kind}`,
    at: event.at,
    note: {
      id: n.id,
      content: n.content,
      tags: n.tags,
      scheduledAt: n.scheduledAt,
      publishedAt: n.publishedAt,
      autoRestackAfterHours: n.autoRestackAfterHours,
      sourceNoteId: n.sourceNoteId,
    },
  };
}
