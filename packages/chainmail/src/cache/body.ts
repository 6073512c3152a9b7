import type { ImapFlow, MessageStructureObject } from "imapflow";
import { convert } from "html-to-text";
import { simpleParser } from "mailparser";

/** Longest body text kept per message; the rest is cut (search then misses words past it). */
export const MAX_BODY_CHARS = 100_000;

export function htmlToPlain(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: "img", format: "skip" },
      { selector: "a", options: { ignoreHref: true } },
    ],
  });
}

/**
 * Body text of a whole RFC 5322 message: the text part, or the HTML part turned into text when
 * the text is empty (mailparser leaves .text empty for HTML-only mail with an attachment).
 */
export async function textFromSource(source: Buffer): Promise<string> {
  const plain = plainFastPath(source);
  if (plain !== null) return plain.slice(0, MAX_BODY_CHARS);
  const parsed = await simpleParser(source, {
    skipImageLinks: true,
    skipTextToHtml: true,
    skipTextLinks: true,
  });
  let text = parsed.text ?? "";
  if (!text.trim() && typeof parsed.html === "string") text = htmlToPlain(parsed.html);
  return text.slice(0, MAX_BODY_CHARS);
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

/** The part holding the readable body: the first inline text/plain, else the first text/html. */
export function textPart(root: MessageStructureObject | undefined): { part: string; html: boolean } | null {
  let plain: string | null = null;
  let html: string | null = null;
  const walk = (n: MessageStructureObject, part: string) => {
    const type = (n.type ?? "").toLowerCase();
    if (type.startsWith("multipart/")) {
      for (const c of n.childNodes ?? []) walk(c, c.part ?? part);
      return;
    }
    if ((n.disposition ?? "").toLowerCase() === "attachment") return;
    if (type === "text/plain" && plain === null) plain = part;
    if (type === "text/html" && html === null) html = part;
  };
  if (root) walk(root, "1");
  if (plain !== null) return { part: plain, html: false };
  if (html !== null) return { part: html, html: true };
  return null;
}

/** Downloads one decoded body part (for messages too large to fetch whole). */
export async function textFromPart(
  client: ImapFlow,
  uid: number,
  part: string,
  html: boolean,
  maxBytes: number,
): Promise<{ text: string; bytes: number }> {
  const dl = await client.download(String(uid), part, { uid: true, maxBytes });
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const c of dl.content as AsyncIterable<Buffer>) {
    chunks.push(c);
    bytes += c.length;
  }
  const raw = Buffer.concat(chunks).toString("utf8");
  return { text: (html ? htmlToPlain(raw) : raw).slice(0, MAX_BODY_CHARS), bytes };
}
