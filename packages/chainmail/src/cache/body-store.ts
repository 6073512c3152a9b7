// How a body's text is stored in `bodies`: `enc` says the form of `text`. Rows written before the
// encoding column (and bodies that do not shrink) are the text itself (0); the rest are the UTF-8
// text compressed with raw DEFLATE (1), which at 100,000 generated messages took the bodies table
// from 158 MiB to about a third of that. Reading one back costs about 20 microseconds (inflateRaw
// of a ~600-byte blob on a loaded core), paid by get_message and snippets only: search never
// reads bodies.
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { type CacheDb, stmt } from "./schema.js";

export const BODY_TEXT = 0;
export const BODY_DEFLATE = 1;

/**
 * Level 6 (zlib's default): at 100,000 generated bodies 0.424 of the text against level 3's 0.429,
 * 0.9 MiB of the scale run's cache.db (issue 34), for about 60 microseconds a body against 45 on
 * a loaded core, which the backfill pays (bodies stored before at level 3 read back the same:
 * inflating does not depend on the level). Level 9 compressed no smaller; Brotli (text mode)
 * compressed these bodies larger at quality 4 to 10 (0.438-0.450) and to 0.427 at quality 11, for
 * 23 times the time (src/cache/README.md, "The second step").
 */
const LEVEL = 6;
/** Shorter texts are stored as they are: DEFLATE's framing would eat what it saves. */
const MIN_COMPRESS = 64;

/** A UTF-16 surrogate without its other half (code units, hence no `u` flag). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The stored form of `text`. A text with a lone surrogate (a body cut at MAX_BODY_CHARS inside a
 * pair) is stored as TEXT, as before: SQLite reads that back as three U+FFFD where the UTF-8 of
 * Buffer.from has one, and both forms must read back the same string.
 */
export function encodeBody(text: string): { value: string | Buffer; enc: number } {
  if (text.length < MIN_COMPRESS || LONE_SURROGATE.test(text)) return { value: text, enc: BODY_TEXT };
  const utf8 = Buffer.from(text, "utf8");
  const packed = deflateRawSync(utf8, { level: LEVEL });
  return packed.length < utf8.length ? { value: packed, enc: BODY_DEFLATE } : { value: text, enc: BODY_TEXT };
}

/** The text of a stored body (`text` and `enc` as the row has them). */
export function decodeBody(value: string | Buffer, enc: number): string {
  if (enc === BODY_TEXT) return typeof value === "string" ? value : value.toString("utf8");
  if (enc === BODY_DEFLATE) return inflateRawSync(value).toString("utf8");
  throw new Error(`bodies.enc ${enc} is not known to this chainmail`);
}

/**
 * Stores (or replaces) a message's body text, compressed when that makes it smaller. `bytes` stays
 * the text's UTF-8 length, as before: what the body is, not how it is kept. `fromHtml`: the text was
 * made from the message's HTML for the word index, without its links' addresses, so get_message
 * reads such a message from the server, whose text keeps them (src/service/cached-read.ts); rows
 * stored before the column say NULL. `partial`: the text is one part of several the message reads
 * as (a shape ./joined-text.ts cannot join), kept for the word index; get_message asks the server.
 */
export function putBody(
  db: CacheDb,
  id: number,
  text: string,
  now: number,
  fromHtml = false,
  partial = false,
): void {
  const { value, enc } = encodeBody(text);
  stmt(
    db,
    "INSERT OR REPLACE INTO bodies (message_rowid, text, bytes, fetched_at, enc, from_html, partial) VALUES (?, ?, ?, ?, ?, ?, ?)",
  ).run(id, value, Buffer.byteLength(text), now, enc, fromHtml ? 1 : 0, partial ? 1 : 0);
}

/** A message's stored body text, or undefined when none is stored. */
export function readBody(db: CacheDb, id: number): string | undefined {
  const row = stmt(db, "SELECT text, enc FROM bodies WHERE message_rowid = ?").get(id) as
    | { text: string | Buffer; enc: number }
    | undefined;
  return row ? decodeBody(row.text, row.enc) : undefined;
}
