/**
 * Tags are parsed from a note's body on every write. The rules (also in the README):
 *
 * 1. A hashtag is `#` followed by tag characters; a mention is `@` followed by tag characters.
 *    Tag characters are Unicode letters, digits (any script), `_` and `-`; a mention may also hold
 *    `.` (as in `@ada.lovelace`).
 * 2. A tag ends at the first other character (space, punctuation, emoji, `#`, `@`, …). Trailing `-`,
 *    `.` and `_` are not part of it, so `#idea.` at the end of a sentence is `#idea`.
 * 3. The sign must start the text or follow a character that is neither a letter, digit, `_`, nor one of
 *    `# @ & / \ . : - + = ~` so `C#`, `a#b`, `ann@example.com`, `&#123;` and `path/#x` are not tags.
 * 4. Nothing inside a URL counts: `http(s)://…`, `ftp://…`, `mailto:…` and `www.…` are skipped whole,
 *    so `https://x.org/#intro` gives no `#intro`.
 * 5. A tag needs at least one letter (`#1`, `#2024` are issue numbers and years, not tags), and holds at
 *    most 64 characters after the sign (a longer run is not a tag).
 * 6. Tags are case-insensitive: stored and shown lower-cased (Unicode-aware, NFC), so `#ML` is `#ml`.
 * 7. Each tag counts once per note, in order of first appearance.
 */

export type TagKind = "hashtag" | "mention";

export interface ParsedTag {
  tag: string;
  kind: TagKind;
}

const MAX_TAG_CHARS = 64;
const URL_RE = /\b(?:https?|ftp):\/\/[^\s<>"')\]]*|\bmailto:[^\s<>"')\]]*|\bwww\.[^\s<>"')\]]*/giu;
const SIGN_RE = /[#@]/gu;
const TAG_CHAR = /[\p{L}\p{N}\p{M}_-]/u;
const MENTION_EXTRA = ".";
const BLOCKING_PREV = /[\p{L}\p{N}\p{M}_#@&/\\.:\-+=~]/u;
const HAS_LETTER = /\p{L}/u;

export function parseTags(text: string): ParsedTag[] {
  const clean = text.normalize("NFC").replace(URL_RE, (m) => " ".repeat(m.length));
  const out: ParsedTag[] = [];
  const seen = new Set<string>();
  for (const match of clean.matchAll(SIGN_RE)) {
    const at = match.index;
    const sign = match[0];
    const prev = at > 0 ? clean[at - 1]! : "";
    if (prev !== "" && BLOCKING_PREV.test(prev)) continue;
    const kind: TagKind = sign === "#" ? "hashtag" : "mention";
    let end = at + 1;
    for (const ch of clean.slice(at + 1)) {
      if (TAG_CHAR.test(ch) || (kind === "mention" && ch === MENTION_EXTRA)) end += ch.length;
      else break;
    }
    let name = clean.slice(at + 1, end).replace(/[-._]+$/u, "");
    if (name === "" || !HAS_LETTER.test(name)) continue;
    if ([...name].length > MAX_TAG_CHARS) continue;
    name = name.toLowerCase();
    const tag = sign + name;
    if (seen.has(tag)) continue;
    seen.add(tag);
    out.push({ tag, kind });
  }
  return out;
}

/**
 * Normalises a tag given by a caller (a filter or a restriction). `"#x"` and `"@x"` are taken as
 * written (lower-cased); a bare word matches either kind, so it returns both forms.
 */
export function tagCandidates(input: string): string[] {
  const t = input.trim().normalize("NFC").toLowerCase();
  if (t.startsWith("#") || t.startsWith("@")) return [t];
  return [`#${t}`, `@${t}`];
}

/** Whether a body already carries a tag, by the same rules as the parser. */
export function hasTag(text: string, tag: string): boolean {
  return parseTags(text).some((t) => t.tag === tag);
}
