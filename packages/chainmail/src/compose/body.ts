/**
 * The body parts of a new message: Markdown (the default) becomes an HTML part and a plain-text
 * part (the Markdown itself, which reads as text); `text` is a plain-text part only; `html` is the
 * HTML given with `html_text` or a text part converted from it. The signature goes under the new
 * text in each part, above any quoted original.
 */
import { micromark } from "micromark";
import { MailError } from "../errors.js";
import { htmlToText } from "../imap/body.js";

export type BodyFormat = "markdown" | "text" | "html";

export interface BodyParts {
  text: string;
  html: string | undefined;
}

export interface Quote {
  /** The attribution line, such as "On <date>, Ann <a@b> wrote:". */
  intro: string;
  text: string;
  /** quote: each line behind "> "; forward: the original as it was, under the intro's header block. */
  style: "quote" | "forward";
}

export const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const textToHtml = (s: string) => escapeHtml(s).replace(/\r?\n/g, "<br>\n");

export function bodyParts(opts: {
  body: string;
  format: BodyFormat;
  htmlText?: string | undefined;
  signature?: string | undefined;
  /** The original, quoted under the new text (reply) or shown as forwarded (forward). */
  quote?: Quote | undefined;
  /** Inline image names and the cid each is sent under, for the HTML's img src. */
  cids?: Map<string, string>;
}): BodyParts {
  if (opts.htmlText && opts.format !== "html")
    throw new MailError("INVALID_ARGUMENT", "html_text is only for body_format html");
  let text: string;
  let html: string | undefined;
  if (opts.format === "text") {
    text = opts.body;
  } else if (opts.format === "markdown") {
    // micromark leaves raw HTML in the Markdown escaped (allowDangerousHtml is off).
    html = micromark(opts.body);
    text = opts.body;
  } else {
    html = opts.body;
    text = opts.htmlText || htmlToText(opts.body);
  }
  const sig = opts.signature;
  // (trimEnd, not /\s+$/: that backtracked over every run of white space in the body, quadratic on
  // a body that carries a hostile message's text)
  if (sig) {
    text = `${text.trimEnd()}\n\n${sig}`;
    if (html !== undefined) html = `${html}\n<div class="signature">${textToHtml(sig)}</div>`;
  }
  const q = opts.quote;
  if (q) {
    const plain = q.text.replace(/\r\n/g, "\n");
    const quoted = q.style === "quote" ? plain.replace(/^/gm, "> ") : plain;
    text = `${text.trimEnd()}\n\n${q.intro}\n${quoted}\n`;
    if (html !== undefined) {
      // The original's own HTML is not carried over: quoted as escaped text, nothing in it runs.
      const inner = textToHtml(q.text);
      html =
        q.style === "quote"
          ? `${html}\n<div>${escapeHtml(q.intro)}</div>\n<blockquote type="cite">${inner}</blockquote>`
          : `${html}\n<div>${textToHtml(q.intro)}</div>\n<div>${inner}</div>`;
    }
  }
  if (html !== undefined && opts.cids?.size) {
    const cids = opts.cids;
    html = rewriteImgSources(html, (src) => {
      const cid = cids.get(unescapeAttr(src));
      return cid === undefined ? undefined : `cid:${cid}`;
    });
  }
  return { text, html };
}

/**
 * Each `<img ...>` tag's `src` value passed through `rewrite` (undefined keeps it). One scan from tag
 * to tag, linear in the HTML's length: the regular expression it replaces backtracked over the rest
 * of the text at each `<img` with no `>` after it, quadratic on the agent's megabyte of HTML, and
 * could take a `src="` inside another attribute's value for the attribute.
 */
function rewriteImgSources(html: string, rewrite: (src: string) => string | undefined): string {
  const open = /<img(?=[\s/>])/gi;
  let out = "";
  let done = 0;
  for (let m = open.exec(html); m; m = open.exec(html)) {
    const tag = scanAttributes(html, m.index + 4);
    if (!tag) break;
    const src = tag.attributes.find((a) => a.name.toLowerCase() === "src");
    const next = src && rewrite(html.slice(src.start, src.end));
    if (src && next !== undefined) {
      out += `${html.slice(done, src.start)}${next}`;
      done = src.end;
    }
    open.lastIndex = tag.end;
  }
  return out + html.slice(done);
}

interface Attribute {
  name: string;
  /** The value's span in the HTML, inside its quotes (empty for an attribute without a value). */
  start: number;
  end: number;
}

/**
 * The attributes of the tag whose name ends at `from`, as HTML's tokenizer reads them (names up to
 * white space, `/`, `=` or `>`; values in double or single quotes, or bare up to white space or
 * `>`), and where the tag ends (after its `>`); undefined for a tag that never ends.
 */
function scanAttributes(html: string, from: number): { attributes: Attribute[]; end: number } | undefined {
  const attributes: Attribute[] = [];
  const space = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f";
  let i = from;
  for (;;) {
    while (space(html[i]) || html[i] === "/") i++;
    if (i >= html.length) return undefined;
    if (html[i] === ">") return { attributes, end: i + 1 };
    const nameStart = i;
    while (i < html.length && !space(html[i]) && !"/=>".includes(html[i] as string)) i++;
    if (i === nameStart) i++; // a lone "=": no name, read on
    const name = html.slice(nameStart, i);
    while (space(html[i])) i++;
    if (html[i] !== "=") {
      attributes.push({ name, start: i, end: i });
      continue;
    }
    i++;
    while (space(html[i])) i++;
    const quote = html[i];
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, i + 1);
      if (close < 0) return undefined;
      attributes.push({ name, start: i + 1, end: close });
      i = close + 1;
    } else {
      const start = i;
      while (i < html.length && !space(html[i]) && html[i] !== ">") i++;
      attributes.push({ name, start, end: i });
    }
  }
}

const unescapeAttr = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
