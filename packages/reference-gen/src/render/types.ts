import type { JsonSchema } from "../model.js";
import {
  alternatives,
  asSchema,
  isArraySchema,
  isObjectSchema,
  isUntrusted,
  type SchemaDoc,
} from "./schema.js";

/**
 * The short type a table shows: `string`, `integer`, `string[]`, `object[]`, `string | null`,
 * `"asc" | "desc"`, `untrusted string`. An enum shows its base type; its values go in the
 * description ("One of: ..."), as in the seed's pages.
 */
export function typeLabel(doc: SchemaDoc, node: JsonSchema, depth = 0): string {
  if (depth > 8) return "any";
  const { options, nullable } = alternatives(doc, node);
  const labels = unique(options.map((o) => optionLabel(doc, o, depth)));
  if (labels.length === 0) return nullable ? "null" : "never";
  if (nullable) labels.push("null");
  return labels.join(" | ");
}

function optionLabel(doc: SchemaDoc, raw: JsonSchema, depth: number): string {
  const s = doc.resolve(raw);
  if (isUntrusted(s)) return "untrusted string";
  if ("const" in s) return JSON.stringify(s["const"]) ?? "any";
  if (Array.isArray(s["enum"]) && s["type"] === undefined) {
    return unique(s["enum"].map(jsonType)).join(" | ");
  }
  if (isArraySchema(s)) {
    const items = asSchema(s["items"]);
    if (!items) return "array";
    const inner = typeLabel(doc, items, depth + 1);
    return inner.includes(" | ") ? `(${inner})[]` : `${inner}[]`;
  }
  if (isObjectSchema(s)) return "object";
  if (typeof s["type"] === "string") return s["type"];
  if (Array.isArray(s["allOf"])) return "object";
  if (s["not"] !== undefined && Object.keys(s).length === 1) return "never";
  return "any";
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
