import { QueryParseError } from "./errors.js";

export type Token =
  | { type: "lparen" | "rparen" | "lbrace" | "rbrace" | "minus" | "or" | "and" | "eof"; pos: number }
  | { type: "word"; value: string; phrase: boolean; pos: number }
  | { type: "field"; name: string; value: string; phrase: boolean; pos: number; valuePos: number }
  /** `name:(`: the group's terms follow, up to the matching ")", each a value of the field. */
  | { type: "fieldgroup"; name: string; pos: number; valuePos: number };

const SPECIAL = new Set(["(", ")", "{", "}", '"']);
const isSpace = (c: string) => /\s/u.test(c);
const isBare = (c: string) => !isSpace(c) && !SPECIAL.has(c);

/** Field names known to the grammar (lower case). Aliases map onto the canonical name. */
export const FIELDS = new Set([
  "from",
  "to",
  "cc",
  "bcc",
  "subject",
  "in",
  "label",
  "is",
  "has",
  "filename",
  "larger",
  "smaller",
  "newer_than",
  "older_than",
  "after",
  "before",
  "account",
  "item",
  "rfc822msgid",
]);

/**
 * Splits a query into tokens. Positions are 1-based. A bare run like `name:` whose name is made
 * only of letters and underscores is a field, and an unknown name is an error; runs such as
 * `10:30` stay words.
 */
export function tokenize(input: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = input.length;

  const readPhrase = (start: number): string => {
    // `start` indexes the opening quote
    const close = input.indexOf('"', start + 1);
    if (close < 0)
      throw new QueryParseError(n + 1, "'\"' to close the phrase opened at position " + (start + 1));
    const text = input.slice(start + 1, close);
    if (text.trim() === "") throw new QueryParseError(start + 2, "text inside the quotes");
    i = close + 1;
    return text;
  };
  const readBare = (): string => {
    const s = i;
    while (i < n && isBare(input[i] as string)) i++;
    return input.slice(s, i);
  };

  while (i < n) {
    const c = input[i] as string;
    if (isSpace(c)) {
      i++;
      continue;
    }
    const pos = i + 1;
    if (c === "(") {
      out.push({ type: "lparen", pos });
      i++;
      continue;
    }
    if (c === ")") {
      out.push({ type: "rparen", pos });
      i++;
      continue;
    }
    if (c === "{") {
      out.push({ type: "lbrace", pos });
      i++;
      continue;
    }
    if (c === "}") {
      out.push({ type: "rbrace", pos });
      i++;
      continue;
    }
    if (c === '"') {
      out.push({ type: "word", value: readPhrase(i), phrase: true, pos });
      continue;
    }
    if (c === "-") {
      const next = input[i + 1];
      if (next === undefined || isSpace(next) || next === ")" || next === "}") {
        throw new QueryParseError(pos + 1, 'a term after "-"');
      }
      out.push({ type: "minus", pos });
      i++;
      continue;
    }
    const start = i;
    // rfc822msgid is the one field name with digits (Gmail's), so it is named rather than allowed for.
    const m = /^(rfc822msgid|[A-Za-z_]+):/i.exec(input.slice(i, i + 40));
    if (m) {
      const name = (m[1] as string).toLowerCase();
      if (!FIELDS.has(name))
        throw new QueryParseError(pos, "a known field", `Unknown field "${m[1]}" at position ${pos}`);
      i += (m[0] as string).length;
      const valuePos = i + 1;
      if (input[i] === "(") {
        out.push({ type: "fieldgroup", name, pos, valuePos });
        i++;
        continue;
      }
      if (input[i] === '"') {
        out.push({ type: "field", name, value: readPhrase(i), phrase: true, pos, valuePos });
        continue;
      }
      const value = readBare();
      if (value === "") throw new QueryParseError(valuePos, `a value after "${m[0]}"`);
      out.push({ type: "field", name, value, phrase: false, pos, valuePos });
      continue;
    }
    const word = readBare();
    if (word === "OR") out.push({ type: "or", pos: start + 1 });
    else if (word === "AND") out.push({ type: "and", pos: start + 1 });
    else out.push({ type: "word", value: word, phrase: false, pos: start + 1 });
  }
  out.push({ type: "eof", pos: n + 1 });
  return out;
}
