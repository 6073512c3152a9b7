/**
 * Expected failures of the domain, each with the hint a caller is given and the exit code the admin CLI
 * exits with. The domain stays free of MCP: a tool lets a DexiError through untouched, and the kit
 * reports any Error whose `reason` the server declared as that reason, message and hint (anything
 * else as INTERNAL); the CLI prints the message and exits with the reason's code.
 */
export const DEXI_REASONS = {
  NOT_FOUND: {
    hint: "Check the id or name: use search_notes, list_notes or list_folders to find it.",
    exitCode: 3,
  },
  READ_ONLY: { hint: "Team-shared notes are read-only for you; create your own note instead.", exitCode: 4 },
  NOTHING_TO_UPDATE: { hint: "Pass title and/or text.", exitCode: 2 },
  LIMIT_REACHED: {
    hint: "Delete notes you no longer need, or ask the owner to raise the plan's cap.",
    exitCode: 5,
  },
  RESTRICTED_TAG: {
    hint: "This connection is limited to notes with that tag; keep the tag in the text (or use mode append).",
    exitCode: 4,
  },
  NOT_IN_REVIEW: {
    hint: "Only notes tagged with a review deck tag are in review; call get_due_reviews.",
    exitCode: 3,
  },
  EMBEDDINGS_UNAVAILABLE: {
    hint: "The embedding model could not run; full-text search_notes still works. Check the embeddings settings.",
    exitCode: 69,
  },
} as const;

/** Dexi's own reasons, and the kit's INVALID_ARGUMENT for a bad value the schemas cannot catch. */
export type DexiReason = keyof typeof DEXI_REASONS | "INVALID_ARGUMENT";

/** An expected failure, reported by its reason wherever it surfaces (a tool's error body, a CLI exit code). */
export class DexiError extends Error {
  constructor(
    readonly reason: DexiReason,
    message: string,
  ) {
    super(message);
    this.name = "DexiError";
  }
}

export const noteNotFound = () => new DexiError("NOT_FOUND", "Note not found");
export const folderNotFound = (name: string) => new DexiError("NOT_FOUND", `Folder not found: ${name}`);
