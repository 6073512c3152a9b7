/** Body text shaping: HTML to text, quoted text and signatures cut, the body limit. */
import { compile } from "html-to-text";

/**
 * Table cells kept apart, one row a line, in reading order. html-to-text's default ran a row's
 * cells together (`<td>Order</td><td>Shipped</td>` read "OrderShipped", and a search for "shipped"
 * missed the message); its data-table layout would interleave the lines of a layout table's
 * columns, which most HTML mail is built of.
 */
const TABLES = [
  { selector: "table", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
  { selector: "tr", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
  { selector: "td", format: "inlineSurround", options: { suffix: " " } },
  { selector: "th", format: "inlineSurround", options: { suffix: " " } },
];
const IMAGES = { selector: "img", format: "skip" };

/**
 * Elements nested deeper than this are shown as "...": html-to-text walks the tree by recursion,
 * and a hostile message of 10,000 nested `<div>`s overflowed the stack (get_message failed, the
 * backfill gave up on the body). mailparser bounds its own conversion at the same depth.
 */
const LIMITS = { maxDepth: 1000 };

// Compiled once: convert() compiles its options on every call, a tenth of a backfill's CPU
const forReading = compile({ wordwrap: false, limits: LIMITS, selectors: [IMAGES, ...TABLES] });
const forIndex = compile({
  wordwrap: false,
  limits: LIMITS,
  selectors: [IMAGES, { selector: "a", options: { ignoreHref: true } }, ...TABLES],
});

/**
 * The cells' separating spaces at the ends of lines, and the blank lines empty cells leave. Line by
 * line, never a regular expression over the text: `/ +$/gm` backtracks over every run of spaces
 * not at a line's end, so a hostile message's `<pre>` (or a row of empty cells) of 50,000 spaces
 * before a letter took 6 s of the daemon's thread, and the time grows with the square.
 */
const tidy = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd();

/** HTML mail as text to read: links keep their address (`the report [https://…]`), images go. */
export function htmlToText(html: string): string {
  return tidy(forReading(html));
}

/** HTML mail as text for the cache's word index: as htmlToText, without the links' addresses. */
export function htmlToPlain(html: string): string {
  return tidy(forIndex(html));
}

/**
 * The body text of a message mailparser parsed with `skipHtmlToText` (MAILPARSER_TEXT): its text
 * part, or where it has none its HTML through `convert`. mailparser's own conversion (which it
 * makes of an HTML body that is the whole message, wrapped at 80 columns, its cells run together)
 * is never used, so an HTML-only message reads the same with or without attachments, and the same
 * whole as by its part (src/imap/messages.ts, src/cache/body.ts).
 */
export function parsedBodyText(
  parsed: { text?: string | undefined; html?: string | false | undefined },
  convert: (html: string) => string,
): string {
  return parsedBody(parsed, convert).text;
}

/** parsedBodyText, and whether the text is the HTML's (the cache keeps that: src/cache/body-store.ts). */
export function parsedBody(
  parsed: { text?: string | undefined; html?: string | false | undefined },
  convert: (html: string) => string,
): { text: string; fromHtml: boolean } {
  const text = parsed.text ?? "";
  return !text.trim() && typeof parsed.html === "string"
    ? { text: convert(parsed.html), fromHtml: true }
    : { text, fromHtml: false };
}

/** The simpleParser options every body read uses: see parsedBodyText. */
export const MAILPARSER_TEXT = { skipHtmlToText: true, skipImageLinks: true } as const;

/** Drops quoted lines (and the "On ... wrote:" line before them) and everything after a "-- " line. */
export function cutQuotesAndSignature(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const sig = lines.findIndex((l) => l === "-- " || l === "--");
  const kept = sig >= 0 ? lines.slice(0, sig) : lines;
  // The first non-blank line after each line, in one pass from the end: a copy of the rest per
  // line was quadratic (a hostile message of 40,000 empty lines took 3 s of the daemon's thread, a
  // megabyte of them minutes)
  const nextNonBlank: (string | undefined)[] = new Array(kept.length);
  let seen: string | undefined;
  for (let i = kept.length - 1; i >= 0; i--) {
    nextNonBlank[i] = seen;
    if (kept[i]!.trim() !== "") seen = kept[i];
  }
  const out: string[] = [];
  for (let i = 0; i < kept.length; i++) {
    const line = kept[i]!;
    if (line.startsWith(">")) continue;
    if (/wrote:\s*$/i.test(line) && nextNonBlank[i]?.startsWith(">")) continue;
    out.push(line);
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd();
}

export function shapeBody(text: string, full: boolean, limit: number): { body: string; truncated: boolean } {
  const body = full ? text : cutQuotesAndSignature(text);
  if (full || body.length <= limit) return { body, truncated: false };
  return { body: body.slice(0, limit), truncated: true };
}
