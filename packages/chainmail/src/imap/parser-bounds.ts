/**
 * mailparser's bounds and how a message past them is still read. Its splitter (mailsplit) refuses a
 * message of more than 1,000 MIME parts, or whose header passes 1 MB (each line counted at 64 bytes
 * at least), both with code EMAXLEN: they keep a crafted message from holding the daemon's memory.
 * Such a message is read by its text parts (messages.ts readByTextParts), and of a header past
 * the bound only the lines a Message is made of are parsed (messageFields).
 */
import type { MessageStructureObject } from "imapflow";

/** Whether mailparser refused a message for its number of MIME parts. */
export function tooManyParts(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return pastParserBounds(err) && typeof e?.message === "string" && e.message.includes("child nodes");
}

/** Whether mailparser refused a message for either of its bounds (see tooManyParts). */
export function pastParserBounds(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === "EMAXLEN";
}

/** The header fields a Message is made of (parseFetched), and those that say how its body is sent. */
const MESSAGE_FIELDS =
  /^(from|to|cc|bcc|reply-to|subject|date|message-id|in-reply-to|references|mime-version|content-type|content-transfer-encoding)\s*:/i;

/**
 * A header block with only the lines of MESSAGE_FIELDS (each with its folded continuation lines):
 * what is left of a header past the parser's bound (thousands of Received or X- lines a sender can
 * add) for get_message to read. A header whose kept fields alone pass the bound stays refused.
 */
export function messageFields(header: Buffer): Buffer {
  const kept: string[] = [];
  let keeping = false;
  for (const line of header.toString("latin1").split(/\r?\n/)) {
    if (line === "") break;
    if (line.startsWith(" ") || line.startsWith("\t")) {
      if (keeping) kept.push(line);
      continue;
    }
    keeping = MESSAGE_FIELDS.test(line);
    if (keeping) kept.push(line);
  }
  return Buffer.from(`${kept.join("\r\n")}\r\n\r\n`, "latin1");
}

/** mailsplit's bound on a message's MIME parts (see tooManyParts). */
export const PARSER_MAX_PARTS = 1000;

/** The MIME parts of a message's structure, containers included, as mailsplit counts them. */
export function partsIn(n: MessageStructureObject | undefined): number {
  return n ? 1 + (n.childNodes ?? []).reduce((sum, c) => sum + partsIn(c), 0) : 0;
}
