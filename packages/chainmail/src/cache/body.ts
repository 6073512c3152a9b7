import type { ImapFlow, MessageStructureObject } from "imapflow";
import { simpleParser } from "mailparser";
import { htmlToPlain, MAILPARSER_TEXT, parsedBody } from "../imap/body.js";

export { htmlToPlain };

/** Longest body text kept per message; the rest is cut (search then misses words past it). */
export const MAX_BODY_CHARS = 100_000;

/** A body's text as the cache stores and indexes it, and whether it was made from HTML. */
export interface BodyText {
  text: string;
  fromHtml: boolean;
}

/**
 * Body text of a whole RFC 5322 message: the text part, or the HTML part turned into text where
 * there is none (parsedBody).
 */
export async function bodyFromSource(source: Buffer): Promise<BodyText> {
  const plain = plainFastPath(source);
  if (plain !== null) return { text: plain.slice(0, MAX_BODY_CHARS), fromHtml: false };
  const parsed = await simpleParser(source, {
    ...MAILPARSER_TEXT,
    skipTextToHtml: true,
    skipTextLinks: true,
  });
  const body = parsedBody(parsed, htmlToPlain);
  return { text: body.text.slice(0, MAX_BODY_CHARS), fromHtml: body.fromHtml };
}

/** The text alone of bodyFromSource. */
export async function textFromSource(source: Buffer): Promise<string> {
  return (await bodyFromSource(source)).text;
}

/**
 * Most mail is one text/plain part in 7bit/8bit UTF-8 or ASCII: its body is the bytes after the
 * header, so mailparser (the slow step of a backfill) is skipped. Anything else returns null.
 */
function plainFastPath(source: Buffer): string | null {
  let end = source.indexOf("\r\n\r\n");
  let sep = 4;
  if (end < 0) {
    end = source.indexOf("\n\n");
    sep = 2;
  }
  if (end < 0) return null;
  const header = source
    .subarray(0, end)
    .toString("latin1")
    .replace(/\r?\n[ \t]+/g, " ");
  const field = (name: string) =>
    // redos-ok: a field name of ours; a line of any length is read once at each line start
    new RegExp(`^${name}:[ \t]*(.*)$`, "im").exec(header)?.[1]?.trim().toLowerCase() ?? "";
  const type = field("content-type");
  if (type && !/^text\/plain\s*(;|$)/.test(type)) return null;
  const charset = /charset\s*=\s*"?([^";\s]+)/.exec(type)?.[1] ?? "us-ascii";
  if (!["us-ascii", "utf-8", "utf8"].includes(charset)) return null;
  const cte = field("content-transfer-encoding");
  if (cte && cte !== "7bit" && cte !== "8bit") return null;
  if (/format\s*=\s*"?flowed/.test(type)) return null;
  return source.subarray(end + sep).toString("utf8");
}

/** A leaf of a message's structure (no multipart), as the walks below read it. */
export interface LeafPart {
  node: MessageStructureObject;
  /** Its lowercase MIME type. */
  type: string;
  /** Its IMAP part number ("1" for a message that is one part). */
  part: string;
  /** It lies within a multipart/alternative. */
  alternative: boolean;
}

/** Every leaf of a message's structure, in order: the one walk the body readers share. */
export function* leafParts(root: MessageStructureObject | undefined): Generator<LeafPart> {
  if (!root) return;
  const stack: { n: MessageStructureObject; part: string; alternative: boolean }[] = [
    { n: root, part: "1", alternative: false },
  ];
  while (stack.length > 0) {
    const { n, part, alternative } = stack.pop() as (typeof stack)[number];
    const type = (n.type ?? "").toLowerCase();
    if (!type.startsWith("multipart/")) {
      yield { node: n, type, part, alternative };
      continue;
    }
    const within = alternative || type === "multipart/alternative";
    const children = n.childNodes ?? [];
    for (let i = children.length - 1; i >= 0; i--) {
      const c = children[i] as MessageStructureObject;
      stack.push({ n: c, part: c.part ?? part, alternative: within });
    }
  }
}

/** The part holding the readable body: the first inline text/plain, else the first text/html. */
export function textPart(root: MessageStructureObject | undefined): { part: string; html: boolean } | null {
  let html: string | null = null;
  for (const { node, type, part } of leafParts(root)) {
    if ((node.disposition ?? "").toLowerCase() === "attachment") continue;
    if (type === "text/plain") return { part, html: false };
    if (type === "text/html" && html === null) html = part;
  }
  return html === null ? null : { part: html, html: true };
}

/** Where a message's body text is, kept at sync so the backfill can fetch that part alone. */
export interface TextPartRef {
  part: string;
  html: boolean;
  /**
   * An HTML body that is the whole message (its part is all of it). Once also how its text was made
   * (mailparser's own conversion), and get_message then read such a message whole; kept in stored refs.
   */
  root: boolean;
  /** The part's charset, lowercase ("" when its Content-Type names none): UTF-8 or ASCII. */
  charset: string;
  /** Its transfer encoding, lowercase. */
  encoding: string;
}

/**
 * The stored form of a `TextPartRef` (`message_meta.text_part`): a JSON array of its fields in a
 * fixed order, `["1",1,0,"utf-8","7bit"]`, about 25 bytes where the object's JSON took 75 (2 MiB of
 * the 100,000-message scale run's cache.db, issue 34). Rows written before keep the object form,
 * which `decodeTextPart` reads as well; a message's next full header fetch rewrites its row.
 */
export function encodeTextPart(ref: TextPartRef): string {
  return JSON.stringify([ref.part, ref.html ? 1 : 0, ref.root ? 1 : 0, ref.charset, ref.encoding]);
}

/** The `TextPartRef` a stored `text_part` holds, in either form (`encodeTextPart`). */
export function decodeTextPart(stored: string): TextPartRef {
  const v = JSON.parse(stored) as TextPartRef | [string, number, number, string, string];
  if (!Array.isArray(v)) return v;
  const [part, html, root, charset, encoding] = v;
  return { part, html: html === 1, root: root === 1, charset, encoding };
}

// Charsets decoded here exactly as mailparser (iconv-lite) decodes them; others take the whole path
const UTF8 = new Set(["", "utf-8", "utf8", "us-ascii", "ascii"]);

/**
 * The part to fetch for the body text of a message whose body is more than one text/plain part
 * (attachments, alternatives, HTML only), so the backfill downloads neither attachments nor the
 * other alternative and gets the text `textFromSource` gives for the whole message. Null where
 * the part alone could give other text, for the whole-message path: one text/plain part (its
 * text is the body after the header anyway), several readable parts (mailparser joins them), an
 * embedded message, format=flowed text (mailparser reflows it), a charset other than UTF-8 or
 * ASCII, or no readable part.
 */
export function textPartRef(root: MessageStructureObject | undefined): TextPartRef | null {
  if (!root) return null;
  const rootType = (root.type ?? "").toLowerCase();
  if (!rootType.startsWith("multipart/") && rootType !== "text/html") return null;
  const plain: { n: MessageStructureObject; part: string }[] = [];
  const html: { n: MessageStructureObject; part: string; alternative: boolean }[] = [];
  let simple = true;
  for (const { node: n, type, part, alternative } of leafParts(root)) {
    if (type === "message/rfc822" || type === "message/delivery-status") simple = false;
    if ((n.disposition ?? "").toLowerCase() === "attachment") continue;
    if (type === "text/plain") plain.push({ n, part });
    else if (type === "text/html") html.push({ n, part, alternative });
  }
  // The shapes whose text is one part: one text/plain (with or without an HTML alternative to it),
  // or one text/html and no text/plain
  const one =
    plain.length === 1 && html.every((h) => h.alternative)
      ? { ...(plain[0] as (typeof plain)[number]), html: false }
      : plain.length === 0 && html.length === 1
        ? { ...(html[0] as (typeof html)[number]), html: true }
        : null;
  if (!simple || !one) return null;
  const charset = (one.n.parameters?.charset ?? "").toLowerCase();
  if ((one.n.parameters?.format ?? "").toLowerCase() === "flowed" || !UTF8.has(charset)) return null;
  return {
    part: one.part,
    html: one.html,
    root: one.html && rootType === "text/html",
    charset,
    encoding: (one.n.encoding ?? "").toLowerCase(),
  };
}

/** The text of a fetched part (`bytes` with the transfer encoding undone), as `textFromSource` gives it. */
export function textFromPartBytes(
  bytes: Buffer,
  ref: Pick<TextPartRef, "html">,
  maxChars = MAX_BODY_CHARS,
): string {
  // mailparser ends lines with LF
  const raw = bytes.toString("utf8").replace(/\r\n/g, "\n");
  const text = ref.html ? htmlToPlain(raw) : raw;
  return text.slice(0, maxChars);
}

/** Downloads one decoded body part (for messages too large to fetch whole). */
export async function textFromPart(
  client: ImapFlow,
  uid: number,
  part: string,
  html: boolean,
  maxBytes: number,
): Promise<{ text: string; bytes: number }> {
  const got = await downloadPartBytes(client, uid, part, maxBytes);
  return { text: textFromPartBytes(got, { html }), bytes: got.length };
}

/** One body part, decoded, at most `maxBytes` of it (a text part: an attachment is streamed instead). */
export async function downloadPartBytes(
  client: ImapFlow,
  uid: number,
  part: string,
  maxBytes: number,
): Promise<Buffer> {
  const dl = await client.download(String(uid), part, { uid: true, maxBytes });
  const chunks: Buffer[] = [];
  for await (const c of (dl.content ?? []) as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}
