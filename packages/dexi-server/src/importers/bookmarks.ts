import { type ImportItem, parseDate, withTags } from "./types.js";

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === "#") {
      const code = e[1] === "x" || e[1] === "X" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

function attr(attrs: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(attrs);
  return m ? decodeEntities(m[2] ?? m[3] ?? m[4] ?? "") : undefined;
}

/**
 * A browser's bookmarks export (the Netscape bookmark file every browser writes): each link becomes a
 * bookmark note with source_url; its folder is the innermost bookmark folder; TAGS become hashtags and
 * the <DD> description the body.
 */
export function parseBookmarks(html: string): ImportItem[] {
  const out: ImportItem[] = [];
  const stack: string[] = [];
  let pendingFolder: string | undefined;
  let last: ImportItem | undefined;
  const re =
    /<(h3)\b([^>]*)>([\s\S]*?)<\/h3>|<(dl)\b[^>]*>|<\/(dl)>|<(a)\b([^>]*)>([\s\S]*?)<\/a>|<(dd)>([^<]*)/gi;
  for (const m of html.matchAll(re)) {
    if (m[1]) {
      pendingFolder = decodeEntities(m[3]!.trim());
      last = undefined;
    } else if (m[4]) {
      stack.push(pendingFolder ?? stack[stack.length - 1] ?? "");
      pendingFolder = undefined;
    } else if (m[5]) {
      stack.pop();
    } else if (m[6]) {
      const url = attr(m[7]!, "href");
      if (!url || /^(javascript|place):/i.test(url)) continue;
      const added = parseDate(attr(m[7]!, "add_date"));
      const tags = (attr(m[7]!, "tags") ?? "").split(",").filter(Boolean);
      const folder = stack[stack.length - 1] || null;
      last = {
        key: `bookmark:${url}`,
        title: decodeEntities(m[8]!.replace(/<[^>]*>/g, "").trim()).slice(0, 500) || url.slice(0, 500),
        body: withTags("", tags),
        source: "bookmark",
        sourceUrl: url,
        folder,
        createdMs: added,
        record: { kind: "bookmark", url, addedMs: added },
      };
      out.push(last);
    } else if (m[9] && last) {
      const desc = decodeEntities(m[10]!.trim());
      if (desc) last.body = last.body ? `${desc}\n\n${last.body}` : desc;
      last = undefined;
    }
  }
  return out;
}
