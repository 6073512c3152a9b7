import type { JsonSchema } from "../model.js";
import { compareStrings } from "../model.js";
import {
  alternatives,
  asSchema,
  isArraySchema,
  isObjectSchema,
  isUntrusted,
  type SchemaDoc,
} from "./schema.js";

/** One row of an Arguments or Result table: a dotted path such as `notes[].createdAt`. */
export interface FieldRow {
  path: string;
  node: JsonSchema;
  required: boolean;
}

interface Segment {
  name: string;
  /** How many `[]` follow the name (array nesting). */
  arrays: number;
}

interface Collected {
  segments: Segment[];
  node: JsonSchema;
  required: boolean;
}

const MAX_DEPTH = 12;

/**
 * Flattens an object schema into rows: every property, then the properties of nested objects
 * (`a.b`), of array items (`a[].b`, `a[][].b`) and of maps (`a.*`). Untrusted wrappers stay one row.
 * Rows sort by path segment, so a field's children follow it directly.
 */
export function flattenObject(doc: SchemaDoc, node: JsonSchema): FieldRow[] {
  const out: Collected[] = [];
  collectObject(doc, node, [], out, new Set(), 0);
  const byPath = new Map<string, Collected & { merged?: boolean }>();
  for (const row of out) {
    const path = pathOf(row.segments);
    const seen = byPath.get(path);
    // The same path from two union branches: required only if every branch requires it.
    if (seen) {
      seen.required &&= row.required;
      // Show every branch's type (a discriminator reads `"user" | "group"`), keeping the first description.
      if (JSON.stringify(seen.node) !== JSON.stringify(row.node)) {
        const branches = Array.isArray(seen.node["anyOf"]) && seen.merged ? seen.node["anyOf"] : [seen.node];
        const description = seen.node["description"] ?? row.node["description"];
        seen.node = { anyOf: [...branches, row.node], ...(description !== undefined ? { description } : {}) };
        seen.merged = true;
      }
    } else byPath.set(path, { ...row });
  }
  return [...byPath.values()]
    .sort((a, b) => compareSegments(a.segments, b.segments))
    .map((r) => ({ path: pathOf(r.segments), node: r.node, required: r.required }));
}

function collectObject(
  doc: SchemaDoc,
  raw: JsonSchema,
  prefix: Segment[],
  out: Collected[],
  refs: ReadonlySet<string>,
  depth: number,
): void {
  if (depth > MAX_DEPTH) return;
  const nextRefs = new Set([...refs, ...doc.refsOf(raw)]);
  const { options } = alternatives(doc, raw);
  const objects = options.filter((o) => isObjectSchema(o) && !isUntrusted(o));
  for (const obj of objects) {
    const props = asSchema(obj["properties"]) ?? {};
    const required = Array.isArray(obj["required"]) ? (obj["required"] as unknown[]) : [];
    for (const [key, value] of Object.entries(props)) {
      const child = asSchema(value) ?? {};
      const segments = [...prefix, { name: key, arrays: 0 }];
      // When only some union branches have a field, it cannot be required.
      const inAll = objects.every((o) => asSchema(o["properties"])?.[key] !== undefined);
      out.push({ segments, node: child, required: inAll && required.includes(key) });
      collectChildren(doc, child, segments, out, nextRefs, depth + 1);
    }
    const extra = asSchema(obj["additionalProperties"]);
    if (Object.keys(props).length === 0 && extra && Object.keys(extra).length > 0) {
      const segments = [...prefix, { name: "*", arrays: 0 }];
      out.push({ segments, node: extra, required: false });
      collectChildren(doc, extra, segments, out, nextRefs, depth + 1);
    }
  }
}

/** Descends into a field's object or array-of-objects shape, unless it recurses or is untrusted. */
function collectChildren(
  doc: SchemaDoc,
  raw: JsonSchema,
  segments: Segment[],
  out: Collected[],
  refs: ReadonlySet<string>,
  depth: number,
): void {
  if (doc.refsOf(raw).some((r) => refs.has(r))) return;
  const { options } = alternatives(doc, raw);
  if (options.some((o) => isObjectSchema(o) && !isUntrusted(o))) {
    collectObject(doc, raw, segments, out, refs, depth);
    return;
  }
  const arrays = options.filter((o) => isArraySchema(o));
  if (arrays.length !== 1) return;
  const items = asSchema(arrays[0]!["items"]);
  if (!items) return;
  const last = segments[segments.length - 1]!;
  const itemSegments = [...segments.slice(0, -1), { name: last.name, arrays: last.arrays + 1 }];
  collectChildren(doc, items, itemSegments, out, new Set([...refs, ...doc.refsOf(raw)]), depth + 1);
}

function pathOf(segments: readonly Segment[]): string {
  return segments.map((s) => s.name + "[]".repeat(s.arrays)).join(".");
}

function compareSegments(a: readonly Segment[], b: readonly Segment[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    const c = compareStrings(x.name, y.name) || x.arrays - y.arrays;
    if (c !== 0) return c;
  }
  return a.length - b.length;
}
