import type { Shape } from "@mcpforge/toolkit";
import { z } from "zod";
import type { Viewer } from "../../domain/access.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, SOURCES } from "../../domain/limits.js";
import type { NotesService } from "../../domain/notes.js";

export interface DexiContext {
  notes: NotesService;
  viewer: Viewer;
}

/** Objects compared key by key, so `A & B` and the same keys written out count as one type. */
type Flat<T> = T extends readonly (infer E)[]
  ? Flat<E>[]
  : T extends object
    ? { [K in keyof T]: Flat<T[K]> }
    : T;
/** True only when A and B are the same type: the same keys, each as optional and of the same type. */
export type Same<A, B> =
  (<T>() => T extends Flat<A> ? 1 : 2) extends <T>() => T extends Flat<B> ? 1 : 2 ? true : false;

/**
 * A result schema tied to the domain type it describes: `tiedTo<T>()(shape)` compiles only when the
 * shape's parsed output is exactly `T` (a missing, extra or differently typed key is "Expected 2
 * arguments"), so a domain change cannot leave the advertised schema behind.
 */
export const tiedTo =
  <T>() =>
  <S extends Shape>(
    shape: S,
    ..._mismatch: Same<z.output<z.ZodObject<S>>, T> extends true ? [] : [schemaDiffersFrom: never]
  ): S =>
    shape;

const itemBase = {
  id: z.string().describe("The note's UUID."),
  title: z.string().describe("The note's title (may be empty)."),
  tags: z.array(z.string()).describe("Tags parsed from the text: #hashtags and @mentions, lower-case."),
  source: z.enum(SOURCES).describe("Where the note came from."),
  source_url: z
    .string()
    .nullable()
    .describe("The original URL, for bookmarks and feed articles; otherwise null."),
  created: z.string().describe("When the note was created (ISO 8601, UTC)."),
  updated: z.string().describe("When the note last changed (ISO 8601, UTC)."),
  folder: z.string().optional().describe("Folder name; only on your own notes that are filed."),
  shared: z
    .literal(true)
    .optional()
    .describe("Present only on a team-mate's note shared with your team (read-only)."),
  owner: z.string().optional().describe("Who owns a shared note; present together with shared."),
};

export const NoteItem = z.object({
  ...itemBase,
  snippet: z.string().describe("The first 300 characters of the body, with … when cut."),
  similarity: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("0-1 closeness in meaning; only from semantic_search and find_similar."),
});

export const NoteFull = {
  ...itemBase,
  text: z.string().describe("The full plain-text body."),
};

const sentence = (what: string) => (what.endsWith(".") ? what : `${what}.`);
export const noteId = (what = "The note's UUID, from search or list results") =>
  z.uuid().describe(sentence(what));
export const size = (max: number, def: number, what: string) =>
  z.number().int().min(1).max(max).default(def).describe(sentence(what));
/** A page or window size with the domain's bounds. */
export const pageSize = (what: string) => size(MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, what);
export const page = () => z.number().int().min(1).default(1).describe("Page number, from 1.");

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
