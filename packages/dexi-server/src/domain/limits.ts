/**
 * The bounds and value sets of Dexi's operations, in one place: the tool schemas advertise exactly
 * these, and the domain's types are derived from them.
 */

/** The scope that lets a connection read notes (search, list, get, review queue). */
export const NOTES_READ = "notes:read";
/** The scope that lets a connection change notes (create, update, delete, grade). */
export const NOTES_WRITE = "notes:write";
/** Every scope, in the order a default grant lists them. */
export const NOTES_SCOPES = [NOTES_READ, NOTES_WRITE] as const;

/** Where a note came from. */
export const SOURCES = ["note", "bookmark", "email", "feed"] as const;
export type Source = (typeof SOURCES)[number];
/** list_notes' `source` filter: one source, or all. */
export const SOURCE_FILTERS = ["all", "bookmark", "email", "feed", "note"] as const;
export type SourceFilter = (typeof SOURCE_FILTERS)[number];

/** list_notes' order: newest first by this timestamp. */
export const SORTS = ["created", "updated"] as const;
export type Sort = (typeof SORTS)[number];
/** update_note's `mode`. */
export const UPDATE_MODES = ["replace", "append"] as const;
export type UpdateMode = (typeof UPDATE_MODES)[number];
/** The two kinds of tag (see tags.ts). */
export const TAG_KINDS = ["hashtag", "mention"] as const;

export const MAX_TITLE = 500;
/** A note's text is bounded so that one call cannot fill the disk or stall the embedder's input. */
export const MAX_TEXT = 1_000_000;
export const MAX_SEARCH_QUERY = 200;
export const MAX_SEMANTIC_QUERY = 500;
/** Results per page (and per window for semantic_search, find_similar, get_due_reviews). */
export const MAX_PAGE_SIZE = 50;
export const DEFAULT_PAGE_SIZE = 10;
export const MAX_TAG_FILTER = 200;
export const MAX_FOLDER_NAME = 500;
export const MAX_TAG_LIST = 200;
export const DEFAULT_TAG_LIST = 50;
