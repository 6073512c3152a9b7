import { type AgeUnit, type FlagState, type QueryNode, ALL, and, not, or } from "./ast.js";
import { QueryParseError } from "./errors.js";
import { type Token, tokenize } from "./lexer.js";

/** Deeper nesting than this is refused, so a hostile query cannot exhaust the stack. */
export const MAX_DEPTH = 64;

const IS_VALUES: Record<string, FlagState> = {
  unread: "unread",
  read: "read",
  flagged: "flagged",
  starred: "flagged",
  answered: "answered",
  draft: "draft",
};

/** The field a parenthesized group's words belong to (`subject:(dinner movie)`). */
interface Within {
  name: string;
}

const SIZE_UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/**
 * Parses a query (grammar in README.md). The empty query is `{kind:"all"}`. Throws only
 * QueryParseError.
 */
export function parseQuery(input: string): QueryNode {
  const tokens = tokenize(input);
  let k = 0;
  const peek = (): Token => tokens[k] as Token;
  const next = (): Token => tokens[k++] as Token;
  const startsTerm = (t: Token) =>
    t.type === "word" ||
    t.type === "field" ||
    t.type === "fieldgroup" ||
    t.type === "lparen" ||
    t.type === "lbrace" ||
    t.type === "minus";

  // and_expr = or_expr { ["AND"] or_expr }
  const andExpr = (depth: number, within?: Within): QueryNode => {
    const parts: QueryNode[] = [];
    for (;;) {
      const t = peek();
      if (t.type === "and") {
        next();
        if (!startsTerm(peek())) throw new QueryParseError(peek().pos, 'a term after "AND"');
        continue;
      }
      if (!startsTerm(t)) break;
      parts.push(orExpr(depth, within));
    }
    return and(parts);
  };

  // or_expr = unary { "OR" unary }
  const orExpr = (depth: number, within?: Within): QueryNode => {
    const parts = [unary(depth, within)];
    while (peek().type === "or") {
      next();
      parts.push(unary(depth, within));
    }
    return or(parts);
  };

  // unary = "-" unary | primary
  const unary = (depth: number, within?: Within): QueryNode => {
    const t = peek();
    if (t.type === "minus") {
      next();
      if (depth >= MAX_DEPTH) throw new QueryParseError(t.pos, `at most ${MAX_DEPTH} nested terms`);
      return not(unary(depth + 1, within));
    }
    return primary(depth, within);
  };

  const primary = (depth: number, within?: Within): QueryNode => {
    const t = next();
    switch (t.type) {
      case "lparen":
      case "fieldgroup": {
        if (depth >= MAX_DEPTH) throw new QueryParseError(t.pos, `at most ${MAX_DEPTH} nested groups`);
        if (t.type === "fieldgroup" && within)
          throw new QueryParseError(t.pos, `a word or phrase inside ${within.name}:( )`);
        if (!startsTerm(peek())) throw new QueryParseError(peek().pos, "a term");
        const inner = andExpr(depth + 1, t.type === "fieldgroup" ? { name: t.name } : within);
        const close = next();
        if (close.type !== "rparen") throw new QueryParseError(close.pos, '")"');
        return inner;
      }
      case "lbrace": {
        if (depth >= MAX_DEPTH) throw new QueryParseError(t.pos, `at most ${MAX_DEPTH} nested groups`);
        const members: QueryNode[] = [];
        while (startsTerm(peek())) members.push(orExpr(depth + 1, within));
        const close = next();
        if (close.type !== "rbrace") throw new QueryParseError(close.pos, members.length ? '"}"' : "a term");
        if (members.length === 0) throw new QueryParseError(close.pos, "a term");
        return or(members);
      }
      case "word":
        // Inside name:( ), each word or phrase is a value of that field.
        if (within)
          return field({
            type: "field",
            name: within.name,
            value: t.value,
            phrase: t.phrase,
            pos: t.pos,
            valuePos: t.pos,
          });
        return { kind: "text", value: t.value, phrase: t.phrase, pos: t.pos };
      case "field":
        if (within) throw new QueryParseError(t.pos, `a word or phrase inside ${within.name}:( )`);
        return field(t);
      default:
        throw new QueryParseError(t.pos, "a term");
    }
  };

  const root = andExpr(0);
  const end = peek();
  if (end.type !== "eof") {
    // Only a stray closer or a dangling OR can stop the top level early
    throw new QueryParseError(end.pos, end.type === "or" ? 'a term before "OR"' : "end of query");
  }
  return root ?? ALL;
}

function field(t: Extract<Token, { type: "field" }>): QueryNode {
  const { name, value, phrase, pos, valuePos } = t;
  switch (name) {
    case "from":
    case "to":
    case "cc":
    case "bcc":
      return { kind: "address", field: name, value, phrase, pos };
    case "subject":
      return { kind: "subject", value, phrase, pos };
    case "in":
      return { kind: "in", value, pos };
    case "label":
      return { kind: "label", value, pos };
    case "filename":
      return { kind: "filename", value, pos };
    case "account":
      return { kind: "account", value, pos };
    case "item":
      return { kind: "item", value, pos };
    case "rfc822msgid": {
      // Gmail's spelling takes the ID without its angle brackets; either is accepted.
      const id = value.trim().replace(/^<(.*)>$/, "$1");
      if (!id || /[<>\s]/.test(id))
        throw new QueryParseError(valuePos, "a Message-ID like <abc@example.com>");
      return { kind: "msgid", value: `<${id}>`, pos };
    }
    case "is": {
      const flag = IS_VALUES[value.toLowerCase()];
      if (!flag)
        throw new QueryParseError(valuePos, "one of unread, read, flagged, starred, answered, draft");
      return { kind: "is", flag, pos };
    }
    case "has":
      if (value.toLowerCase() !== "attachment") throw new QueryParseError(valuePos, '"attachment"');
      return { kind: "has_attachment", pos };
    case "larger":
    case "smaller": {
      const m = /^(\d{1,12})([kmg]?)b?$/i.exec(value);
      const bytes = m ? Number(m[1]) * (SIZE_UNITS[(m[2] as string).toLowerCase()] as number) : Number.NaN;
      if (!Number.isSafeInteger(bytes) || bytes > 2 ** 40)
        throw new QueryParseError(valuePos, "a size like 500, 10K or 2M");
      return { kind: "size", op: name, bytes, pos };
    }
    case "newer_than":
    case "older_than": {
      const m = /^(\d{1,5})([dmy])$/i.exec(value);
      if (!m) throw new QueryParseError(valuePos, "an age like 7d, 3m or 1y");
      return {
        kind: "age",
        op: name === "newer_than" ? "newer" : "older",
        amount: Number(m[1]),
        unit: (m[2] as string).toLowerCase() as AgeUnit,
        pos,
      };
    }
    case "after":
    case "before": {
      const date = parseDate(value);
      if (!date) throw new QueryParseError(valuePos, "a date like 2024/01/31 or 2024-01-31");
      return { kind: "date", op: name, date, pos };
    }
    default:
      // The lexer admits only names in FIELDS; this keeps the switch honest if one is added
      throw new QueryParseError(pos, "a known field", `Unknown field "${name}" at position ${pos}`);
  }
}

/** YYYY/MM/DD or YYYY-MM-DD (one-digit month and day allowed) -> YYYY-MM-DD, or null if no such day. */
export function parseDate(value: string): string | null {
  const m = /^(\d{4})([/-])(\d{1,2})\2(\d{1,2})$/.exec(value);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[3]), Number(m[4])];
  const dt = new Date(Date.UTC(y, mo - 1, d));
  if (dt.getUTCFullYear() !== y || dt.getUTCMonth() !== mo - 1 || dt.getUTCDate() !== d) return null;
  return `${m[1]}-${String(mo).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}
