import { Parser } from "htmlparser2";
import { type ImportItem, parseDate, withTags } from "./types.js";

/**
 * A browser's bookmarks export (the Netscape bookmark file every browser writes): each link becomes a
 * bookmark note with source_url; its folder is the innermost bookmark folder; TAGS become hashtags and
 * the <DD> description the body. Read by htmlparser2's tokenizer, in one pass: the regular
 * expressions this once used backtracked over the rest of the file at each `<H3>` or `<A` without an
 * end, quadratic on a crafted file.
 */
export function parseBookmarks(html: string): ImportItem[] {
  const out: ImportItem[] = [];
  const stack: string[] = [];
  let pendingFolder: string | undefined;
  let last: ImportItem | undefined;
  // The element whose text is being read: a folder's <H3>, a link's <A>, a description's <DD>
  let reading: { tag: "h3" | "a" | "dd"; text: string; attrs: Record<string, string> } | undefined;

  /** A <DD>'s text runs to the next tag, open or close (it is never closed in these files). */
  const endDescription = () => {
    if (reading?.tag !== "dd") return;
    const desc = reading.text.trim();
    if (desc && last) last.body = last.body ? `${desc}\n\n${last.body}` : desc;
    last = undefined;
    reading = undefined;
  };
  const link = (attrs: Record<string, string>, text: string) => {
    const url = attrs["href"];
    if (!url || /^(javascript|place):/i.test(url)) return;
    const added = parseDate(attrs["add_date"]);
    const tags = (attrs["tags"] ?? "").split(",").filter(Boolean);
    last = {
      key: `bookmark:${url}`,
      title: text.trim().slice(0, 500) || url.slice(0, 500),
      body: withTags("", tags),
      source: "bookmark",
      sourceUrl: url,
      folder: stack[stack.length - 1] || null,
      createdMs: added,
      record: { kind: "bookmark", url, addedMs: added },
    };
    out.push(last);
  };

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        endDescription();
        if (name === "dl") {
          stack.push(pendingFolder ?? stack[stack.length - 1] ?? "");
          pendingFolder = undefined;
        } else if (name === "h3" || name === "a" || name === "dd") {
          if (name === "h3") last = undefined;
          reading = { tag: name, text: "", attrs };
        }
      },
      ontext(text) {
        if (reading) reading.text += text;
      },
      onclosetag(name, implied) {
        endDescription();
        if (name === "dl") stack.pop();
        // A link or a folder name counts once its end tag is there (not closed by the file's end)
        else if (name === reading?.tag && !implied) {
          if (name === "h3") pendingFolder = reading.text.trim();
          else link(reading.attrs, reading.text);
          reading = undefined;
        }
      },
    },
    { lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  endDescription();
  return out;
}
