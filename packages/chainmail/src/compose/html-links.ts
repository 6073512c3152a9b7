// Where an HTML body points: the addresses of its links and of what it loads (images, styles,
// frames). A question about a held send shows them, since none is in the text it shows: a link whose
// words say "the minutes" can carry the data in its address, and an image loaded from a stranger's
// server tells them who read the mail, and when. Read by htmlparser2, which decodes entities in
// attribute values as a mail program does (`&#104;ttps:` is https:).
import { Parser } from "htmlparser2";

/** Attributes whose value is an address a mail program follows or loads. */
const URL_ATTRIBUTES = new Set([
  "href",
  "src",
  "srcset",
  "background",
  "action",
  "formaction",
  "poster",
  "cite",
  "longdesc",
  "data",
  "xlink:href",
  "lowsrc",
  "dynsrc",
]);

/** An address in CSS (`url(...)`), as a style attribute or element gives it. */
const CSS_URL = /url\(\s*["']?([^"')]*)/gi;

/** How many addresses a question names; the rest are counted. */
export const MAX_LINKS_SHOWN = 10;

/**
 * The distinct addresses `html` links to or loads, in order of first appearance, at most
 * MAX_LINKS_SHOWN of them, and how many more there are. An inline image's `cid:` (a part of this
 * message) and a link within the page (`#name`) go nowhere and are left out.
 */
export function htmlLinks(html: string): { links: string[]; more: number } {
  const seen = new Set<string>();
  const add = (value: string) => {
    const v = value.trim();
    if (v === "" || v.startsWith("#") || /^cid:/i.test(v)) return;
    seen.add(v);
  };
  const fromCss = (css: string) => {
    for (const m of css.matchAll(CSS_URL)) add(m[1] ?? "");
  };
  // (a style element's text may come in pieces: read whole at its end)
  let style: string | null = null;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "style") style = "";
        for (const [key, value] of Object.entries(attributes)) {
          const attr = key.toLowerCase();
          if (attr === "srcset" || attr === "imagesrcset")
            for (const candidate of value.split(",")) add(candidate.trim().split(/\s+/)[0] ?? "");
          else if (URL_ATTRIBUTES.has(attr)) add(value);
          else if (attr === "style") fromCss(value);
        }
      },
      ontext(text) {
        if (style !== null) style += text;
      },
      onclosetag(name) {
        if (name === "style" && style !== null) fromCss(style);
        if (name === "style") style = null;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  if (style !== null) fromCss(style); // (a style element the HTML never closed)
  const all = [...seen];
  return { links: all.slice(0, MAX_LINKS_SHOWN), more: Math.max(0, all.length - MAX_LINKS_SHOWN) };
}
