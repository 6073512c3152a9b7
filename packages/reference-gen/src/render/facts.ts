import type { JsonSchema } from "../model.js";
import { code, jsonValue, mdText } from "./markdown.js";
import { alternatives, asSchema, isArraySchema, isUntrusted, type SchemaDoc } from "./schema.js";

export const UNTRUSTED_NOTE = `Untrusted: text from outside, wrapped as ${code('{"untrusted": ...}')}.`;

/** zod writes these for every `.int()`; they say nothing a reader needs. */
const SAFE_INT = Number.MAX_SAFE_INTEGER;

/**
 * The Description cell of an argument or result row: the schema's own description word for word,
 * then the facts a caller needs: default, format, bounds, pattern, allowed values, untrusted marker.
 */
export function describeCell(doc: SchemaDoc, node: JsonSchema): string {
  const s = doc.resolve(node);
  const { options } = alternatives(doc, s);
  const sole = options.length === 1 ? options[0] : undefined;
  const description = stringOr(s["description"]) ?? (sole ? stringOr(sole["description"]) : undefined);
  const parts: string[] = [];
  if (description !== undefined && description.trim() !== "") parts.push(mdText(description.trim()));
  const dflt = "default" in s ? s["default"] : sole && "default" in sole ? sole["default"] : undefined;
  if (dflt !== undefined) parts.push(`Default ${code(jsonValue(dflt))}.`);
  if (sole) {
    if (isUntrusted(sole)) parts.push(UNTRUSTED_NOTE);
    else parts.push(...constraintFacts(doc, sole));
  }
  return parts.join(" ");
}

/** Format, bounds, pattern and allowed values of one (non-null) shape; array items get their own sentence. */
export function constraintFacts(doc: SchemaDoc, s: JsonSchema, level = 0): string[] {
  const facts: string[] = [];
  if (typeof s["format"] === "string") facts.push(`Format ${code(s["format"])}.`);
  facts.push(...numberBounds(s), ...lengthBounds(s, "minLength", "maxLength", "character"));
  if (isArraySchema(s)) {
    facts.push(...lengthBounds(s, "minItems", "maxItems", "item"));
    if (s["uniqueItems"] === true) facts.push("Items are unique.");
  }
  if (typeof s["pattern"] === "string") facts.push(`Pattern ${code(s["pattern"])}.`);
  if (Array.isArray(s["enum"])) {
    facts.push(`One of: ${s["enum"].map((v) => code(jsonValue(v))).join(", ")}.`);
  }
  const items = isArraySchema(s) ? asSchema(s["items"]) : undefined;
  const item = items ? alternatives(doc, items).options : [];
  if (item.length === 1 && item[0] && level < 4) {
    if (isUntrusted(item[0])) facts.push(UNTRUSTED_NOTE);
    else {
      const inner = constraintFacts(doc, item[0], level + 1);
      const lead = level === 0 ? "Each item" : "Each inner item";
      if (inner.length > 0) facts.push(`${lead}: ${inner.join(" ")}`);
    }
  }
  return facts;
}

function numberBounds(s: JsonSchema): string[] {
  const out: string[] = [];
  const min = num(s["minimum"]);
  const max = num(s["maximum"]);
  const xmin = num(s["exclusiveMinimum"]);
  const xmax = num(s["exclusiveMaximum"]);
  if (min !== undefined && min !== -SAFE_INT) out.push(`Minimum ${min}.`);
  if (xmin !== undefined) out.push(`Greater than ${xmin}.`);
  if (max !== undefined && max !== SAFE_INT) out.push(`Maximum ${max}.`);
  if (xmax !== undefined) out.push(`Less than ${xmax}.`);
  const step = num(s["multipleOf"]);
  if (step !== undefined) out.push(`Multiple of ${step}.`);
  return out;
}

function lengthBounds(s: JsonSchema, minKey: string, maxKey: string, unit: string): string[] {
  const min = num(s[minKey]);
  const max = num(s[maxKey]);
  const units = (n: number) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (min !== undefined && max !== undefined) {
    return [min === max ? `Exactly ${units(max)}.` : `${min} to ${units(max)}.`];
  }
  if (min !== undefined && min > 0) return [`At least ${units(min)}.`];
  if (max !== undefined) return [`At most ${units(max)}.`];
  return [];
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function stringOr(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
