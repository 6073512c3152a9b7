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
    html = html.replace(/(<img\b[^>]*\bsrc=")([^"]*)(")/gi, (m, pre: string, src: string, post: string) => {
      const cid = opts.cids?.get(unescapeAttr(src));
      return cid ? `${pre}cid:${cid}${post}` : m;
    });
  }
  return { text, html };
}

const unescapeAttr = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
