import { XMLParser } from "fast-xml-parser";
import { convert } from "html-to-text";
import { type ImportItem, parseDate } from "./types.js";

export interface ParsedFeed {
  title: string | null;
  items: ImportItem[];
}

type Node = Record<string, unknown>;

function text(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string" || typeof v === "number") return String(v);
  if (Array.isArray(v)) return text(v[0]);
  if (typeof v === "object") return text((v as Node)["#text"]);
  return "";
}

function list(v: unknown): Node[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]) as Node[];
}

/**
 * Whether a feed's text holds a tag: `<` and a letter with a `>` somewhere after it, which is what
 * /<[a-z][^>]*>/i asks, decided in one pass (that expression read to the end of the text again at
 * each `<a` with no `>` after it: quadratic on a stranger's feed item).
 */
export function looksLikeHtml(text: string): boolean {
  const open = /<[a-z]/i.exec(text);
  return open !== null && text.indexOf(">", open.index + 2) >= 0;
}

function htmlText(html: string): string {
  return looksLikeHtml(html)
    ? // maxDepth: html-to-text recurses, and a feed item of 10,000 nested elements overflowed the stack
      convert(html, {
        wordwrap: false,
        limits: { maxDepth: 1000 },
        selectors: [{ selector: "img", format: "skip" }],
      }).trim()
    : html.trim();
}

function atomLink(v: unknown): string | null {
  const links = list(v);
  const alt = links.find((l) => !l["@_rel"] || l["@_rel"] === "alternate") ?? links[0];
  return alt ? text(alt["@_href"]) || text(alt) || null : null;
}

/**
 * Where a feed came from: a subscription (`dexi feeds add`) or a file (`dexi import`, its real path).
 * Articles are keyed within their feed, so two feeds that both number their items 1, 2, 3 stay apart.
 */
export type FeedOrigin = { feedId: number } | { file: string };

/** An article's content key: its id (guid, else link, else title) within its feed. */
export function feedKey(origin: FeedOrigin, id: string): string {
  return "feedId" in origin ? `feed#${origin.feedId}:${id}` : `feedfile:${origin.file}:${id}`;
}

/** RSS 2.0 / RSS 1.0 (RDF) / Atom into feed-article notes, keyed by guid (else link, else title). */
export function parseFeed(xml: string, origin: FeedOrigin): ParsedFeed {
  const feedId = "feedId" in origin ? origin.feedId : null;
  const doc = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    processEntities: true,
    htmlEntities: true,
  }).parse(xml) as Node;
  const rss = (doc["rss"] as Node | undefined)?.["channel"] as Node | undefined;
  const rdf = doc["rdf:RDF"] as Node | undefined;
  const atom = doc["feed"] as Node | undefined;
  const items: ImportItem[] = [];
  let title: string | null = null;
  const push = (guid: string, link: string | null, t: string, body: string, published: number | null) => {
    const id = guid || link || t;
    if (!id) return;
    items.push({
      key: feedKey(origin, id),
      // Before keys were per feed, a file's articles were keyed by id alone.
      ...("file" in origin ? { legacyKey: `feed:${id}` } : {}),
      title: t.slice(0, 500) || (link ?? "").slice(0, 500),
      body: htmlText(body),
      source: "feed",
      sourceUrl: link,
      folder: null,
      createdMs: published,
      record: { kind: "feed", feedId, guid: id, url: link, publishedMs: published },
    });
  };
  if (rss || rdf) {
    const channel = (rss ?? (rdf?.["channel"] as Node | undefined) ?? {}) as Node;
    title = text(channel["title"]) || null;
    for (const it of list(rss ? channel["item"] : rdf?.["item"])) {
      push(
        text(it["guid"]),
        text(it["link"]) || null,
        htmlText(text(it["title"])),
        text(it["content:encoded"]) || text(it["description"]),
        parseDate(text(it["pubDate"]) || text(it["dc:date"])),
      );
    }
  } else if (atom) {
    title = text(atom["title"]) || null;
    for (const e of list(atom["entry"])) {
      push(
        text(e["id"]),
        atomLink(e["link"]),
        htmlText(text(e["title"])),
        text(e["content"]) || text(e["summary"]),
        parseDate(text(e["published"]) || text(e["updated"])),
      );
    }
  } else {
    throw new Error("not an RSS or Atom feed");
  }
  return { title, items };
}
