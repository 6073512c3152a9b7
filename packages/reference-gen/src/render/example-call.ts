import type { JsonSchema, ListedTool } from "../model.js";
import { compareStrings } from "../model.js";
import { alternatives, asSchema, isArraySchema, isObjectSchema, isUntrusted, SchemaDoc } from "./schema.js";

/**
 * The smallest valid `tools/call` request: required arguments only, each a placeholder that the
 * input schema accepts (bounds, lengths, enums, simple patterns, common formats). Tests validate every
 * generated call with ajv; this module itself has no validator so the generator stays light.
 */
export function exampleCall(tool: ListedTool): Record<string, unknown> {
  const doc = new SchemaDoc(tool.inputSchema);
  const args = placeholderObject(doc, doc.resolve(tool.inputSchema), 0, 0) ?? {};
  return { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool.name, arguments: args } };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MAX_DEPTH = 10;

/** Placeholders for string formats, all accepted by ajv-formats' full mode. */
const FORMAT_SAMPLES: Readonly<Record<string, string>> = {
  uuid: "00000000-0000-4000-8000-000000000000",
  "date-time": "2025-01-31T09:00:00Z",
  date: "2025-01-31",
  time: "09:00:00Z",
  duration: "P1D",
  email: "user@example.com",
  "idn-email": "user@example.com",
  hostname: "example.com",
  "idn-hostname": "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  uri: "https://example.com/",
  "uri-reference": "https://example.com/",
  iri: "https://example.com/",
  "iri-reference": "https://example.com/",
  url: "https://example.com/",
  "uri-template": "https://example.com/{id}",
  "json-pointer": "/example",
  "relative-json-pointer": "0",
  regex: "^example$",
  byte: "ZXhhbXBsZQ==",
  base64: "ZXhhbXBsZQ==",
  int32: "1",
  int64: "1",
  cuid: "cjld2cjxh0000qzrmn831i7rn",
  cuid2: "tz4a98xxat96iws9zmbrgj3a",
  ulid: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
  nanoid: "V1StGXR8_Z5jdHi6B-myT",
  emoji: "🙂",
};

function placeholder(
  doc: SchemaDoc,
  raw: JsonSchema,
  depth: number,
  index: number,
  refs: ReadonlySet<string> = new Set(),
): Json | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const s = doc.resolve(raw);
  const path = new Set([...refs, ...doc.refsOf(raw)]);
  const fixed = fixedValue(s, index);
  if (fixed !== undefined) return fixed;
  const { options, nullable } = alternatives(doc, s);
  for (const option of options) {
    const value = placeholderOption(doc, option, depth, index, path);
    if (value !== undefined) return value;
  }
  return nullable ? null : undefined;
}

/** A value the schema spells out: its const, an enum value, or its first example. */
function fixedValue(s: JsonSchema, index: number): Json | undefined {
  if ("const" in s) return s["const"] as Json;
  if (Array.isArray(s["enum"]) && s["enum"].length > 0) {
    const values = s["enum"].filter((v) => v !== null);
    return (values[index % Math.max(values.length, 1)] ?? s["enum"][0]) as Json;
  }
  if (Array.isArray(s["examples"]) && s["examples"].length > 0 && index === 0)
    return s["examples"][0] as Json;
  return undefined;
}

function placeholderOption(
  doc: SchemaDoc,
  s: JsonSchema,
  depth: number,
  index: number,
  refs: ReadonlySet<string>,
): Json | undefined {
  const fixed = fixedValue(s, index);
  if (fixed !== undefined) return fixed;
  if (Array.isArray(s["allOf"]) && s["allOf"].length > 0) {
    const merged = Object.assign({}, ...s["allOf"].map((p) => doc.resolve(asSchema(p) ?? {})), s);
    delete merged["allOf"];
    return placeholder(doc, merged, depth + 1, index, refs);
  }
  if (isUntrusted(s)) return { untrusted: "example" };
  if (isObjectSchema(s)) return placeholderObject(doc, s, depth, index, refs);
  if (isArraySchema(s)) return placeholderArray(doc, s, depth, refs);
  switch (s["type"]) {
    case "string":
      return placeholderString(s, index);
    case "integer":
      return placeholderNumber(s, true, index);
    case "number":
      return placeholderNumber(s, false, index);
    case "boolean":
      return index % 2 === 0;
    case "null":
      return null;
    case undefined:
      return "example";
    default:
      return undefined;
  }
}

function placeholderObject(
  doc: SchemaDoc,
  s: JsonSchema,
  depth: number,
  index: number,
  refs: ReadonlySet<string> = new Set(),
): { [k: string]: Json } | undefined {
  const props = asSchema(s["properties"]) ?? {};
  const required = Array.isArray(s["required"])
    ? s["required"].filter((k): k is string => typeof k === "string")
    : [];
  const out: { [k: string]: Json } = {};
  for (const key of [...new Set(required)].sort(compareStrings)) {
    const value = placeholder(doc, asSchema(props[key]) ?? {}, depth + 1, index, refs);
    if (value === undefined) return undefined;
    out[key] = value;
  }
  // Fill up to minProperties with optional properties, in name order.
  const min = typeof s["minProperties"] === "number" ? s["minProperties"] : 0;
  for (const key of Object.keys(props).sort(compareStrings)) {
    if (Object.keys(out).length >= min) break;
    if (key in out) continue;
    const value = placeholder(doc, asSchema(props[key]) ?? {}, depth + 1, index, refs);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * One item shows the item shape (more when minItems asks, none when maxItems is 0). Items of a
 * recursive schema (a tree's children) stay at minItems, so the example does not nest forever.
 */
function placeholderArray(
  doc: SchemaDoc,
  s: JsonSchema,
  depth: number,
  refs: ReadonlySet<string>,
): Json[] | undefined {
  const min = typeof s["minItems"] === "number" ? s["minItems"] : 0;
  const max = typeof s["maxItems"] === "number" ? s["maxItems"] : Number.POSITIVE_INFINITY;
  const items = asSchema(s["items"]) ?? {};
  const recursive = doc.refsOf(items).some((r) => refs.has(r));
  const count = recursive ? min : Math.min(Math.max(min, 1), max);
  const prefix = Array.isArray(s["prefixItems"]) ? s["prefixItems"].map((p) => asSchema(p) ?? {}) : [];
  const out: Json[] = [];
  for (let i = 0; i < Math.max(count, prefix.length); i++) {
    const value = placeholder(doc, prefix[i] ?? items, depth + 1, i, refs);
    if (value === undefined) return min === 0 && prefix.length === 0 ? [] : undefined;
    out.push(value);
  }
  return out;
}

function placeholderString(s: JsonSchema, index: number): string {
  const min = typeof s["minLength"] === "number" ? s["minLength"] : 0;
  const max = typeof s["maxLength"] === "number" ? s["maxLength"] : Number.POSITIVE_INFINITY;
  const format = typeof s["format"] === "string" ? formatSample(s["format"], index) : undefined;
  const pattern = typeof s["pattern"] === "string" ? s["pattern"] : undefined;
  const suffix = index > 0 ? String(index + 1) : "";
  const candidates: string[] = [];
  if (format !== undefined) candidates.push(format);
  if (pattern !== undefined) {
    for (const v of fromPattern(pattern, min, max, index)) candidates.push(v);
  }
  candidates.push(fit(`example${suffix}`, min, max));
  for (const value of candidates) {
    const lengthOk = [...value].length >= min && [...value].length <= max;
    if (lengthOk && (pattern === undefined || safeTest(pattern, value))) return value;
  }
  return candidates[candidates.length - 1]!;
}

/** A sample for a format; the n-th item of a unique array gets a different one where it matters. */
function formatSample(format: string, index: number): string | undefined {
  const base = FORMAT_SAMPLES[format];
  if (base === undefined || index === 0) return base;
  if (format === "uuid") return base.slice(0, -12) + index.toString(16).padStart(12, "0");
  if (format === "email" || format === "idn-email") return `user${index + 1}@example.com`;
  return base;
}

/** Pads or cuts a word to fit the length bounds (counted in code points, as JSON Schema does). */
function fit(word: string, min: number, max: number): string {
  let out = word;
  while ([...out].length < min) out += "x";
  return [...out].slice(0, Math.max(min, Math.min(max, [...out].length))).join("");
}

function safeTest(pattern: string, value: string): boolean {
  try {
    // redos-ok: a pattern of the documented server's own schema, tried on the short values made here
    return new RegExp(pattern, "u").test(value);
  } catch {
    return false;
  }
}

function placeholderNumber(s: JsonSchema, integer: boolean, index: number): number {
  const num = (k: string) => (typeof s[k] === "number" ? (s[k] as number) : undefined);
  const step = num("multipleOf") ?? (integer ? 1 : undefined);
  let lo = num("minimum") ?? Number.NEGATIVE_INFINITY;
  let hi = num("maximum") ?? Number.POSITIVE_INFINITY;
  const xlo = num("exclusiveMinimum");
  const xhi = num("exclusiveMaximum");
  // Exclusive bounds move inward by one step (or a fraction of the gap for plain numbers).
  if (xlo !== undefined) lo = Math.max(lo, xlo + (step ?? Math.min(1, gap(xlo, hi, xhi) / 2)));
  if (xhi !== undefined) hi = Math.min(hi, xhi - (step ?? Math.min(1, gap(lo, xhi, xhi) / 2)));
  let value = Math.min(Math.max(1 + index, lo), hi);
  if (step !== undefined) {
    value = Math.ceil(value / step - 1e-9) * step;
    if (value > hi) value = Math.floor(hi / step + 1e-9) * step;
  }
  return value;
}

function gap(lo: number, hi: number, xhi: number | undefined): number {
  const top = Math.min(hi, xhi ?? Number.POSITIVE_INFINITY);
  return Number.isFinite(top) && Number.isFinite(lo) ? top - lo : 2;
}

/**
 * Builds values for simple patterns: anchored sequences of literals, escapes (\d \w), classes
 * ([a-z0-9_]) and quantifiers (? * + {n} {n,m}), with one level of groups and alternation taken
 * as its first branch. Anything fancier yields nothing and the caller falls back to a plain word.
 */
export function fromPattern(pattern: string, minLength: number, maxLength: number, index = 0): string[] {
  const atoms = parsePattern(pattern);
  if (!atoms) return [];
  const results: string[] = [];
  for (const extra of [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]) {
    let out = "";
    for (const atom of atoms) {
      const reps = atom.min + Math.min(extra, atom.max - atom.min);
      for (let r = 0; r < reps; r++) out += atom.pick(index + r);
    }
    const length = [...out].length;
    if (length >= minLength && length <= maxLength && !results.includes(out)) results.push(out);
  }
  return results;
}

interface Atom {
  pick: (i: number) => string;
  min: number;
  max: number;
}

function parsePattern(pattern: string): Atom[] | undefined {
  let src = pattern;
  if (src.startsWith("^")) src = src.slice(1);
  if (src.endsWith("$") && !src.endsWith("\\$")) src = src.slice(0, -1);
  const atoms: Atom[] = [];
  let i = 0;
  while (i < src.length) {
    let chars: string | undefined;
    const c = src[i]!;
    if (c === "\\") {
      const e = src[i + 1];
      if (e === undefined) return undefined;
      chars =
        e === "d"
          ? "0123456789"
          : e === "w"
            ? "abcxyz"
            : e === "s"
              ? " "
              : /[A-Za-z0-9]/.test(e)
                ? undefined
                : e;
      if (chars === undefined) return undefined;
      i += 2;
    } else if (c === "[") {
      const end = src.indexOf("]", i + 1);
      if (end < 0 || src[i + 1] === "^") return undefined;
      chars = expandClass(src.slice(i + 1, end));
      if (!chars) return undefined;
      i = end + 1;
    } else if (c === "(") {
      const end = closingParen(src, i);
      if (end < 0) return undefined;
      let body = src.slice(i + 1, end);
      if (body.startsWith("?:")) body = body.slice(2);
      else if (body.startsWith("?")) return undefined;
      const inner = parsePattern(firstAlternative(body));
      if (!inner) return undefined;
      i = end + 1;
      const q = quantifier(src, i);
      if (!q) return undefined;
      i = q.next;
      // A group repeats as a whole: each repetition writes every inner atom at least once.
      const pick = (n: number) => inner.map((a) => a.pick(n).repeat(Math.max(a.min, 1))).join("");
      atoms.push({ pick, min: q.min, max: q.max });
      continue;
    } else if (c === ".") {
      chars = "x";
      i += 1;
    } else if ("*+?{}|)^$".includes(c)) {
      return undefined;
    } else {
      chars = c;
      i += 1;
    }
    const q = quantifier(src, i);
    if (!q) return undefined;
    i = q.next;
    const set = [...chars];
    atoms.push({ pick: (n) => set[n % set.length]!, min: q.min, max: q.max });
  }
  return atoms;
}

function closingParen(src: string, open: number): number {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    if (src[i] === "\\") i++;
    else if (src[i] === "[") i = Math.max(i, src.indexOf("]", i + 1));
    else if (src[i] === "(") depth++;
    else if (src[i] === ")" && --depth === 0) return i;
  }
  return -1;
}

/** The first branch of `a|b|c` at the top level of a group body. */
function firstAlternative(body: string): string {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\") i++;
    else if (c === "[") i = Math.max(i, body.indexOf("]", i + 1));
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return body.slice(0, i);
  }
  return body;
}

function quantifier(src: string, at: number): { min: number; max: number; next: number } | undefined {
  const c = src[at];
  if (c === "?") return { min: 0, max: 1, next: at + 1 };
  if (c === "*") return { min: 0, max: 64, next: at + 1 };
  if (c === "+") return { min: 1, max: 64, next: at + 1 };
  if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(at));
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? min + 64 : Number(m[3]);
    return { min, max, next: at + m[0].length };
  }
  return { min: 1, max: 1, next: at };
}

function expandClass(body: string): string | undefined {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\") {
      const e = body[i + 1];
      if (e === "d") out += "0123456789";
      else if (e === "w") out += "abcxyz";
      else if (e !== undefined && !/[A-Za-z0-9]/.test(e)) out += e;
      else return undefined;
      i++;
    } else if (body[i + 1] === "-" && body[i + 2] !== undefined && body[i + 2] !== "]") {
      const from = c.codePointAt(0)!;
      const to = body[i + 2]!.codePointAt(0)!;
      if (to < from) return undefined;
      for (let cp = from; cp <= Math.min(to, from + 25); cp++) out += String.fromCodePoint(cp);
      i += 2;
    } else {
      out += c;
    }
  }
  return out || undefined;
}
