// The body text of a message whose text is in several parts, read part by part. Apple Mail writes
// text, an inline photo, then the rest of the text, each a part of a multipart/mixed; a read by the
// first text part alone (a large message: the backfill, get_message past its whole-read bound; a
// message past the parser's bounds) lost everything after the photo.
//
// The whole read (mailparser with MAILPARSER_TEXT) makes a body of such a message by walking its
// parts in order: each inline text/plain part adds its text (an empty one adds nothing), each inline
// text/html part outside a multipart/alternative adds an empty text (its conversion skipped), and
// the texts are joined with "\n". An empty part (size 0) adds a line or nothing by where it stands,
// so a shape with one is not joined. The parts read alone give each text exactly where a part is
// UTF-8 or ASCII and not format=flowed (textFromPartBytes, as for one text part: ./body.ts); a
// message/* part (an embedded message, a delivery report) adds header lines and text of its own,
// so a shape holding one is not joined here.
import type { ImapFlow, MessageStructureObject } from "imapflow";
import { downloadPartBytes, leafParts, textFromPartBytes } from "./body.js";

/** More text parts than this are not read one by one (a FETCH each): the first stands for them. */
export const MAX_JOINED_PARTS = 20;

/** A text/plain part to read, or an HTML part beside the text (an empty text in the join). */
export type JoinedPiece = { part: string } | { blank: true };

const UTF8 = new Set(["", "utf-8", "utf8", "us-ascii", "ascii"]);

/**
 * The pieces whose texts joined make the body, from BODYSTRUCTURE; null where the whole read
 * would make it otherwise (see above), where fewer than two text/plain parts hold it (one part is
 * read as one: ./body.ts textPart), or more than MAX_JOINED_PARTS.
 */
export function joinedTextParts(root: MessageStructureObject | undefined): JoinedPiece[] | null {
  if (!root) return null;
  const pieces: JoinedPiece[] = [];
  let joinable = true;
  let plain = 0;
  for (const { node: n, type, part, alternative } of leafParts(root)) {
    if (type.startsWith("message/")) joinable = false;
    if (!inline(n)) continue;
    const text = type === "text/plain" || (type === "text/html" && !alternative);
    // (an empty part adds a line or nothing, by where it stands: mailparser's own way)
    if (text && !((n.size ?? 0) > 0)) joinable = false;
    if (type === "text/plain") {
      const charset = (n.parameters?.charset ?? "").toLowerCase();
      if (!UTF8.has(charset) || (n.parameters?.format ?? "").toLowerCase() === "flowed") joinable = false;
      pieces.push({ part });
      plain++;
    } else if (text) pieces.push({ blank: true });
  }
  return joinable && plain >= 2 && plain <= MAX_JOINED_PARTS ? pieces : null;
}

/**
 * Whether the whole read makes more of the body than the first text part (./body.ts textPart):
 * another inline text/plain part (in an alternative too: mailparser takes every one), an HTML
 * part beside the text and outside an alternative (an empty line), HTML parts alone of which
 * there are several, or an embedded message or report, which adds text of its own.
 */
export function readsPastFirstPart(root: MessageStructureObject | undefined): boolean {
  let plain = 0;
  let htmlBeside = 0;
  let html = 0;
  let embedded = false;
  for (const { node: n, type, alternative } of leafParts(root)) {
    if (type.startsWith("message/")) embedded = true;
    if (!inline(n)) continue;
    if (type === "text/plain") plain++;
    if (type === "text/html") {
      html++;
      if (!alternative) htmlBeside++;
    }
  }
  return embedded || plain + (plain > 0 ? htmlBeside : 0) > 1 || (plain === 0 && html > 1);
}

/** mailparser takes a part with any disposition but inline, or none, for an attachment. */
function inline(n: MessageStructureObject): boolean {
  const disposition = (n.disposition ?? "").toLowerCase();
  return disposition === "" || disposition === "inline";
}

/**
 * The body the whole read makes of `pieces`, given each text part's decoded bytes (`bytesOf`,
 * undefined past what was read: the join stops there). Null when the texts are blank: the whole
 * read then makes the body of the HTML, which a join cannot give.
 */
export function joinPieces(
  pieces: readonly JoinedPiece[],
  bytesOf: (part: string) => Buffer | undefined,
): string | null {
  const texts: string[] = [];
  for (const piece of pieces) {
    if (!("part" in piece)) {
      texts.push("");
      continue;
    }
    const bytes = bytesOf(piece.part);
    if (bytes === undefined) break;
    const text = textFromPartBytes(bytes, { html: false }, Number.POSITIVE_INFINITY);
    if (text !== "") texts.push(text);
  }
  const text = texts.join("\n");
  return text.trim() === "" ? null : text;
}

/**
 * Downloads the text parts of `pieces` (at most `maxBytes` of them in all) and joins them
 * (`joinPieces`). `cut`: the bytes ran out before the last part was whole.
 */
export async function readJoinedText(
  client: ImapFlow,
  uid: number,
  pieces: readonly JoinedPiece[],
  maxBytes: number,
): Promise<{ text: string; bytes: number; cut: boolean } | null> {
  const got = new Map<string, Buffer>();
  let bytes = 0;
  let cut = false;
  for (const piece of pieces) {
    if (!("part" in piece)) continue;
    const room = maxBytes - bytes;
    if (room <= 0) {
      cut = true;
      break;
    }
    const part = await downloadPartBytes(client, uid, piece.part, room);
    got.set(piece.part, part);
    bytes += part.length;
    if (part.length >= room) {
      cut = true;
      break;
    }
  }
  const text = joinPieces(pieces, (part) => got.get(part));
  return text === null ? null : { text, bytes, cut };
}
