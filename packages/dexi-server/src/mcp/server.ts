import { type Caller, createServer, defineReasons, type KitServer, packageVersion } from "@mcpforge/toolkit";
import type { Viewer } from "../domain/access.js";
import { DEXI_REASONS } from "../domain/errors.js";
import { NOTES_SCOPES } from "../domain/limits.js";
import type { NotesService } from "../domain/notes.js";
import { type DexiContext, dexiTools } from "./tools/index.js";

export const DEXI_VERSION = packageVersion(import.meta.url);
export const DEXI_SCOPES = NOTES_SCOPES;
export const dexiReasons = defineReasons(DEXI_REASONS);

export interface DexiServerOptions {
  notes: NotesService;
  /** Who a call acts for; the caller's granted scopes come with it. */
  viewerFor: (caller: Caller) => Viewer | Promise<Viewer>;
  log?: (line: string) => void;
}

const INSTRUCTIONS = `Dexi holds the user's personal notes, including saved bookmarks, emails and feed articles.
Use search_notes for exact words, semantic_search for ideas, list_notes to browse by date, tag or folder.
Tags are #hashtags and @mentions written in the note text. Prefer update_note with mode "append" over
"replace". Review tools run spaced-repetition sessions: quiz first, then grade_review.`;

export function createDexiServer(options: DexiServerOptions): KitServer<DexiContext> {
  return createServer<DexiContext>({
    name: "dexi",
    version: DEXI_VERSION,
    instructions: INSTRUCTIONS,
    tools: dexiTools,
    reasons: dexiReasons,
    context: async (caller) => ({ notes: options.notes, viewer: await options.viewerFor(caller) }),
    ...(options.log ? { log: options.log } : {}),
  });
}
