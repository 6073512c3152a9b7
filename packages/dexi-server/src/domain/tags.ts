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
import type { TAG_KINDS } from "./limits.js";

export type TagKind = (typeof TAG_KINDS)[number];

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
    // Trailing - . _ dropped by a walk back from the end: `/[-._]+$/` backtracked over every run of
    // them, so a feed item's "#a" followed by 100,000 dashes and a letter held the server for seconds
    let stop = end;
    while (stop > at + 1 && "-._".includes(clean[stop - 1] as string)) stop--;
    let name = clean.slice(at + 1, stop);
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

/** A tag a person chose (a restriction, a review deck tag), as stored, or why it cannot be one. */
export type TagCheck =
  | { ok: true; tag: string }
  | { ok: false; tag: string; readAs: string[]; problem: string };

/**
 * Checks a tag given by a person against the parser itself: the text, written into a note (at its start
 * or after a space, as a restriction appends it), must parse back to exactly this one tag. Otherwise
 * notes written "with" it would carry another tag or none, and a boundary or deck built on it would
 * hold nothing. `#x`/`@x` are taken as written (lower-cased, NFC); a bare word means the hashtag.
 */
export function checkTag(input: string): TagCheck {
  const t = input.trim().normalize("NFC").toLowerCase();
  const tag = t.startsWith("#") || t.startsWith("@") ? t : `#${t}`;
  const alone = parseTags(tag).map((p) => p.tag);
  const appended = parseTags(`text ${tag}`).map((p) => p.tag);
  const exact = (got: string[]) => got.length === 1 && got[0] === tag;
  if (exact(alone) && exact(appended)) return { ok: true, tag };
  return { ok: false, tag, readAs: alone, problem: tagProblem(tag) };
}

/** The rule a candidate tag breaks, in words (the parser's rules above, from the most specific). */
function tagProblem(tag: string): string {
  const mention = tag.startsWith("@");
  const name = tag.slice(1);
  if (name === "") return "a tag needs a name after its sign";
  const bad = [...name].find((ch) => !(TAG_CHAR.test(ch) || (mention && ch === MENTION_EXTRA)));
  if (bad !== undefined) {
    const shown = /\s/u.test(bad) ? "a space" : `"${bad}"`;
    return `a ${mention ? "mention" : "hashtag"} ends at ${shown}`;
  }
  const tail = /[-._]$/u.exec(name);
  if (tail) return `a tag cannot end with "${tail[0]}"`;
  if (!HAS_LETTER.test(name)) return "a tag needs at least one letter";
  if ([...name].length > MAX_TAG_CHARS)
    return `a tag holds at most ${MAX_TAG_CHARS} characters after its sign`;
  return "the tag parser reads it differently";
}

/** A refused tag in words: `"#work.notes" is not one tag: Dexi reads it as #work (a hashtag ends at ".")`. */
export function tagCheckMessage(check: Extract<TagCheck, { ok: false }>): string {
  const read = check.readAs.length === 0 ? "no tag at all" : check.readAs.join(" ");
  return `"${check.tag}" is not one tag: Dexi reads it as ${read} (${check.problem})`;
}

/** Whether a body already carries a tag, by the same rules as the parser. */
export function hasTag(text: string, tag: string): boolean {
  return parseTags(text).some((t) => t.tag === tag);
}
