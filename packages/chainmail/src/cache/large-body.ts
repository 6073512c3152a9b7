// The backfill's read of a message it does not download whole: a large one (attachments, photos),
// or one the parser refused whole (more than 1,000 MIME parts, a header past 1 MB). Its body text
// must be the one get_message gives from the server, or the cache answers otherwise than the server
// would (a text search missing words, a body missing its end).
import type { ImapFlow, MessageStructureObject } from "imapflow";
import { bodyFromSource, leafParts, MAX_BODY_CHARS, textFromPart, textPart } from "./body.js";
import { pastParserBounds } from "../imap/parser-bounds.js";
import { joinedTextParts, MAX_JOINED_PARTS, readJoinedText, readsPastFirstPart } from "./joined-text.js";

/**
 * A message of a shape its parts cannot give (./joined-text.ts: an empty part between others, a
 * part in another charset) is downloaded whole up to this size, so its body is the whole read's.
 * Larger ones are kept `partial`, by every text part's words (`indexText`): such shapes are rare,
 * and a whole download costs the daily budget its attachments.
 */
export const WHOLE_FALLBACK_BYTES = 4 * 1024 * 1024;

export interface LargeBody {
  text: string;
  /** Bytes downloaded (the daily budget counts them). */
  bytes: number;
  fromHtml: boolean;
  /**
   * The text is not the message's body as the whole read gives it (the texts of its parts, for the
   * word index only): get_message asks the server.
   */
  partial: boolean;
}

/**
 * The body text of message `uid` of structure `tree`, by the cheapest read that gives the whole
 * read's text: its one text part (the common case), its text parts joined, or the message whole
 * (up to WHOLE_FALLBACK_BYTES, within `budgetLeft`, and not when `parserRefused` it); else, marked
 * partial, the texts of all its parts for the word index. Null when it has no readable part.
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
  if (more) {
    const all = await indexText(client, uid, tree, maxBytes);
    if (all) return { ...all, partial: true };
  }
  const first = await textFromPart(client, uid, tp.part, tp.html, maxBytes);
  return { ...first, fromHtml: tp.html, partial: more };
}

/**
 * The parts whose words a partial body is indexed by: every inline text/plain part, an embedded
 * message's too (a text search from the cache then finds a word of any of them, as the server's
 * search does; before, the first part's words alone), or where there is none, every inline HTML
 * part. At most MAX_JOINED_PARTS of them.
 */
export function indexParts(root: MessageStructureObject | undefined): { part: string; html: boolean }[] {
  const plain: string[] = [];
  const html: string[] = [];
  // `single`: the part number of `node` itself when it is one part (an embedded message's body is
  // part P.1 in IMAP; imapflow's structure numbers it P, as the message/rfc822 part around it)
  const walk = (node: MessageStructureObject | undefined, single: string) => {
    for (const { node: n, type, part } of leafParts(node)) {
      const number = n === node ? single : part;
      if (type.startsWith("message/")) {
        for (const c of n.childNodes ?? []) walk(c, `${number}.1`);
        continue;
      }
      const disposition = (n.disposition ?? "").toLowerCase();
      if (disposition !== "" && disposition !== "inline") continue;
      if (type === "text/plain") plain.push(number);
      else if (type === "text/html") html.push(number);
    }
  };
  walk(root, "1");
  const parts =
    plain.length > 0
      ? plain.map((part) => ({ part, html: false }))
      : html.map((part) => ({ part, html: true }));
  return parts.slice(0, MAX_JOINED_PARTS);
}

/** The texts of `indexParts`, joined by an empty line, within `maxBytes`; null when all are empty. */
async function indexText(
  client: ImapFlow,
  uid: number,
  tree: MessageStructureObject | undefined,
  maxBytes: number,
): Promise<{ text: string; bytes: number; fromHtml: boolean } | null> {
  const parts = indexParts(tree);
  const texts: string[] = [];
  let bytes = 0;
  for (const { part, html } of parts) {
    if (bytes >= maxBytes) break;
    const got = await textFromPart(client, uid, part, html, maxBytes - bytes);
    bytes += got.bytes;
    if (got.text.trim() !== "") texts.push(got.text);
  }
  if (texts.length === 0) return null;
  return { text: texts.join("\n\n").slice(0, MAX_BODY_CHARS), bytes, fromHtml: parts[0]?.html ?? false };
}
