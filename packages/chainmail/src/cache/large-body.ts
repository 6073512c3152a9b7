// The backfill's read of a message it does not download whole: a large one (attachments, photos),
// or one the parser refused whole (more than 1,000 MIME parts, a header past 1 MB). Its body text
// must be the one get_message gives from the server, or the cache answers otherwise than the server
// would (a text search missing words, a body missing its end).
import type { ImapFlow, MessageStructureObject } from "imapflow";
import { bodyFromSource, MAX_BODY_CHARS, textFromPart, textPart } from "./body.js";
import { pastParserBounds } from "../imap/parser-bounds.js";
import { joinedTextParts, readJoinedText, readsPastFirstPart } from "./joined-text.js";

/**
 * A message of a shape its parts cannot give (./joined-text.ts: an empty part between others, a
 * part in another charset) is downloaded whole up to this size, so its body is the whole read's.
 * Larger ones keep their first text part (`partial`): such shapes are rare, and a whole download
 * costs the daily budget its attachments.
 */
export const WHOLE_FALLBACK_BYTES = 4 * 1024 * 1024;

export interface LargeBody {
  text: string;
  /** Bytes downloaded (the daily budget counts them). */
  bytes: number;
  fromHtml: boolean;
  /** The text is less than the message's body (its first text part): get_message asks the server. */
  partial: boolean;
}

/**
 * The body text of message `uid` of structure `tree`, by the cheapest read that gives the whole
 * read's text: its one text part (the common case), its text parts joined, or the message whole
 * (up to WHOLE_FALLBACK_BYTES, within `budgetLeft`, and not when `parserRefused` it). Null when
 * it has no readable part.
 */
export async function readLargeBody(
  client: ImapFlow,
  uid: number,
  size: number,
  tree: MessageStructureObject | undefined,
  budgetLeft: number,
  parserRefused: boolean,
): Promise<LargeBody | null> {
  const tp = textPart(tree);
  if (!tp) return null;
  const maxBytes = Math.min(MAX_BODY_CHARS * 4, budgetLeft);
  const pieces = joinedTextParts(tree);
  const joined = pieces && (await readJoinedText(client, uid, pieces, maxBytes));
  if (joined)
    return {
      text: joined.text.slice(0, MAX_BODY_CHARS),
      bytes: joined.bytes,
      fromHtml: false,
      partial: joined.cut,
    };
  const more = readsPastFirstPart(tree);
  if (more && !parserRefused && size <= Math.min(WHOLE_FALLBACK_BYTES, budgetLeft)) {
    const got = await client.fetchOne(String(uid), { uid: true, source: true }, { uid: true });
    const source = got ? got.source : undefined;
    if (source) {
      const body = await bodyFromSource(source).catch((err: unknown) => {
        // (past the parser's bounds after all: read by its first part below)
        if (pastParserBounds(err)) return null;
        throw err;
      });
      if (body) return { ...body, bytes: source.length, partial: false };
    }
  }
  const first = await textFromPart(client, uid, tp.part, tp.html, maxBytes);
  return { ...first, fromHtml: tp.html, partial: more };
}
