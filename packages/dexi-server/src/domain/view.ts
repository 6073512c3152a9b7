import type { NoteRow } from "../store/index.js";
import { SNIPPET_CHARS } from "../store/index.js";
import { isoUtc } from "./time.js";

/**
 * A note in a result list. Conditional keys appear only when they apply: `folder` on the viewer's own
 * filed notes, `shared` and `owner` on a team-mate's shared note, `similarity` from a search by meaning.
 */
export interface NoteItem {
  id: string;
  title: string;
  snippet: string;
  tags: string[];
  source: NoteRow["source"];
  source_url: string | null;
  created: string;
  updated: string;
  folder?: string;
  shared?: true;
  owner?: string;
  similarity?: number;
}

/** One note in full: the item's keys with the whole body as `text` instead of a snippet. */
export type NoteFull = Omit<NoteItem, "snippet" | "similarity"> & { text: string };

/** One page of a ranked or sorted list. */
export interface NotePage {
  items: NoteItem[];
  total: number;
  page: number;
}

/** A window of notes nearest in meaning; no paging. */
export interface NoteWindow {
  items: NoteItem[];
}

export interface TagCounts {
  tags: { tag: string; count: number }[];
}

export interface FolderCounts {
  folders: { name: string; note_count: number }[];
  unfiled_count: number;
}

export interface Deleted {
  deleted: true;
  id: string;
  title: string;
}

/** A due review card: the note's text and its SM-2 state. */
export interface DueCard {
  id: string;
  title: string;
  text: string;
  due_at: string;
  interval_days: number;
  repetitions: number;
  is_new: boolean;
}

export interface DueReviews {
  items: DueCard[];
  due_count: number;
}

/** A graded card's next review. */
export interface Graded {
  id: string;
  grade: number;
  due_at: string;
  interval_days: number;
  ease_factor: number;
  repetitions: number;
}

/** First 300 characters (code points) of the body, with `…` when there was more. */
export function snippetOf(body: string): string {
  const chars = [...body];
  return chars.length > SNIPPET_CHARS ? `${chars.slice(0, SNIPPET_CHARS).join("")}…` : body;
}

/**
 * Cosine similarity mapped onto 0..1: similarity = (1 + cos) / 2, rounded to 4 places. Unrelated text
 * (cos ~ 0.1-0.2 with USE lite) lands near 0.55-0.6; close paraphrases (cos > 0.5) above 0.75.
 */
export function similarityOf(cosine: number): number {
  const s = (1 + cosine) / 2;
  return Math.round(Math.min(1, Math.max(0, s)) * 10_000) / 10_000;
}

function common(row: NoteRow, tags: string[]) {
  return {
    id: row.uuid,
    title: row.title,
    tags,
    source: row.source,
    source_url: row.source_url,
    created: isoUtc(row.created_ms),
    updated: isoUtc(row.updated_ms),
  };
}

function conditional(row: NoteRow, viewerId: number): Partial<NoteItem> {
  if (row.user_id !== viewerId) return { shared: true, owner: row.owner_name };
  return row.folder_name !== null ? { folder: row.folder_name } : {};
}

export function toItem(row: NoteRow, tags: string[], viewerId: number, cosine?: number): NoteItem {
  const { id, title, tags: t, source, source_url, created, updated } = common(row, tags);
  return {
    id,
    title,
    snippet: snippetOf(row.body),
    tags: t,
    source,
    source_url,
    created,
    updated,
    ...conditional(row, viewerId),
    ...(cosine !== undefined ? { similarity: similarityOf(cosine) } : {}),
  };
}

export function toFull(row: NoteRow, tags: string[], viewerId: number): NoteFull {
  const { id, title, tags: t, source, source_url, created, updated } = common(row, tags);
  return {
    id,
    title,
    text: row.body,
    tags: t,
    source,
    source_url,
    created,
    updated,
    ...conditional(row, viewerId),
  } as NoteFull;
}
