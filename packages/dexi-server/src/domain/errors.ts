/**
 * Expected failures of the domain, with the reason the MCP layer and the CLI report. The domain stays
 * free of MCP: tools/ turns a DexiError into the kit's ToolError with the same reason and message.
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

export type DexiReason = keyof typeof DEXI_REASONS;

/** An expected failure. The kit reports any Error with a declared `reason` as that reason, so this module needs no kit. */
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
