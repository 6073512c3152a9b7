/**
 * How a search page's rows are read and shaped (./search.ts): one statement for the page's rows
 * (and their body text with snippets) that reads only the columns a shape names, in raw mode
 * (arrays: better-sqlite3 builds an object per row key by key, which took half the statement's
 * time), and the shape's `make` turns each array into its row. The full CacheRow is one shape; the
 * search service reads its narrower row straight from the columns it shows
 * (src/service/search/cache-row.ts) instead of parsing every stored JSON column of a CacheRow.
 */
import type { AttachmentInfo } from "../query/index.js";
import { decodeBody } from "./body-store.js";
import { type CacheDb, stmt } from "./schema.js";
import type { Address, CacheRow } from "./search.js";

/** What a shape's `make` gets beside the columns: the page walk's facts about the row. */
export interface PageRowFacts {
  /** With `threads` (and only then): how many matching messages the thread has. */
  thread_count?: number;
  /** With `snippets`: the body window, null when no body text is stored; absent without snippets. */
  snippet?: string | null;
}

export interface RowShape<R> {
  /**
   * Columns of `messages m`, `message_meta x` and `folders f` (joined by the message's folder), in
   * the order `make` reads them (m.id before them, and the body columns after, are read by
   * readPageRows).
   */
  readonly columns: readonly string[];
  make(values: readonly unknown[], facts: PageRowFacts): R;
}

export const FLAG_COLS = ["seen", "flagged", "answered", "draft", "deleted"] as const;

/** A window of the body around the first query word found in it, at most 200 characters. */
export function makeSnippet(body: string, words: string[]): string {
  const text = body.replace(/\s+/g, " ").trim();
  if (text.length <= 200) return text;
  const lower = text.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  let start = at < 0 ? 0 : Math.max(0, at - 60);
  // Do not cut a surrogate pair in half
  if (start > 0 && /[\uDC00-\uDFFF]/.test(text[start] ?? "")) start++;
  let out = text.slice(start, start + 200);
  if (/[\uD800-\uDBFF]$/.test(out)) out = out.slice(0, -1);
  return out;
}

/**
 * The rows of the page's messages, in the page's order, shaped by `shape`; with `snippets` each
 * row's facts carry its snippet from the stored body text around `words`.
 */
export function readPageRows<R>(
  db: CacheDb,
  page: readonly { id: number; thread_count?: number }[],
  shape: RowShape<R>,
  options: { threads: boolean; snippets: { words: string[] } | null },
): R[] {
  const { snippets } = options;
  const n = shape.columns.length;
  // m.id first (to put the rows in the page's order), the body text and its encoding last
  const statement = stmt(
    db,
    `SELECT m.id, ${shape.columns.join(", ")}${snippets ? ", b.text, b.enc" : ""}
     FROM messages m JOIN message_meta x ON x.id = m.id JOIN folders f ON f.id = m.folder_id
     ${snippets ? "LEFT JOIN bodies b ON b.message_rowid = m.id" : ""}
     WHERE m.id IN (SELECT value FROM json_each(?))`,
  );
  const found = statement.raw(true).all(JSON.stringify(page.map((h) => h.id))) as unknown[][];
  const byId = new Map(found.map((r) => [r[0] as number, r]));
  return page.map((hit) => {
    const r = byId.get(hit.id) as unknown[];
    const facts: PageRowFacts = options.threads ? { thread_count: hit.thread_count as number } : {};
    if (snippets) {
      const stored = r[n + 1] as string | Buffer | null | undefined;
      facts.snippet =
        stored === null || stored === undefined
          ? null
          : makeSnippet(decodeBody(stored, r[n + 2] as number), snippets.words);
    }
    // (the shape's columns start after m.id)
    return shape.make(r.slice(1, n + 1), facts);
  });
}

/** Every field of a cached message a search row may need: what searchCache returns by default. */
export const CACHE_ROW: RowShape<CacheRow> = {
  columns: [
    "m.account",
    "m.uid",
    "m.thread_key",
    "m.internal_date",
    ...FLAG_COLS.map((c) => `m.${c}`),
    "m.size",
    "m.has_attachment",
    "x.message_id",
    "x.date",
    "x.from_json",
    "x.to_json",
    "x.cc_json",
    "x.subject",
    "x.keywords_json",
    "x.labels_json",
    "x.attachments_json",
    "x.in_reply_to",
    "x.refs",
    "x.gm_thread_id",
    "f.path",
    "f.uidvalidity",
  ],
  make(v, facts) {
    // In the order of `columns`
    let i = 0;
    const next = <T>() => v[i++] as T;
    const account = next<string>();
    const uid = next<number>();
    const thread_key = next<string>();
    const internal_date = next<number>();
    const flags = FLAG_COLS.filter(() => next<number>() === 1);
    const size = next<number>();
    const has_attachment = next<number>() === 1;
    const message_id = next<string | null>();
    const date = next<number | null>();
    const from = JSON.parse(next<string>()) as Address[];
    const to = JSON.parse(next<string>()) as Address[];
    const cc = JSON.parse(next<string>()) as Address[];
    const subject = next<string>();
    const keywords = JSON.parse(next<string>()) as string[];
    const labels = JSON.parse(next<string>()) as string[];
    const attachments = JSON.parse(next<string>()) as AttachmentInfo[];
    const in_reply_to = next<string | null>();
    const references = JSON.parse(next<string>()) as string[];
    const gm_thread_id = next<string | null>();
    const folder = next<string>();
    const uidvalidity = next<string>();
    const row: CacheRow = {
      account,
      folder,
      uid,
      uidvalidity,
      message_id: message_id ?? null,
      thread_key,
      date: new Date(date ?? internal_date).toISOString(),
      received: new Date(internal_date).toISOString(),
      from: from[0] ?? null,
      to,
      cc,
      subject,
      flags,
      keywords,
      labels,
      size,
      has_attachment,
      attachments,
      in_reply_to: in_reply_to ?? null,
      references,
      gm_thread_id: gm_thread_id ?? null,
    };
    if ("thread_count" in facts) row.thread_count = facts.thread_count as number;
    if ("snippet" in facts) row.snippet = facts.snippet as string | null;
    return row;
  },
};
