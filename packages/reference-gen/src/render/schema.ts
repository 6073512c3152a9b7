import type { JsonSchema } from "../model.js";

/**
 * Helpers for reading JSON Schema as servers emit it (zod 4's `toJSONSchema`, hand-written schemas):
 * `$ref` into the same document, nullable written as `anyOf [.., {type:"null"}]` or `type: [.., "null"]`.
 */

export const UNTRUSTED_TITLE = "Untrusted";

/**
 * The kit's untrusted wrapper: an object titled "Untrusted" whose only property is `untrusted`.
 * Same rule as `isUntrustedSchema` in @mcpforge/toolkit, kept here so the generator does not load the
 * kit (and zod) at run time; a test checks both agree.
 */
export function isUntrusted(node: JsonSchema): boolean {
  const props = asSchema(node["properties"]);
  return (
    node["title"] === UNTRUSTED_TITLE && !!props && Object.keys(props).length === 1 && "untrusted" in props
  );
}

export function asSchema(value: unknown): JsonSchema | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonSchema)
    : undefined;
}

export function schemaList(value: unknown): JsonSchema[] {
  return Array.isArray(value) ? value.map((v) => asSchema(v) ?? (v === true ? {} : { not: {} })) : [];
}

/** Resolves `$ref`s against one root document; a node's own keywords win over its target's. */
export class SchemaDoc {
  constructor(private readonly root: JsonSchema) {}

  private resolveRef(node: JsonSchema, seen: ReadonlySet<string>): JsonSchema {
    let current = node;
    const visited = new Set(seen);
    for (let hops = 0; hops < 32; hops++) {
      const ref = current["$ref"];
      if (typeof ref !== "string" || visited.has(ref)) return current;
      visited.add(ref);
      const target = this.pointer(ref);
      if (!target) return current;
      const { $ref: _drop, ...own } = current;
      current = { ...target, ...own };
    }
    return current;
  }

  /** Resolves a node and folds an `allOf` of object shapes into one object (properties and required united). */
  resolve(node: JsonSchema, seen: ReadonlySet<string> = new Set()): JsonSchema {
    const s = this.resolveRef(node, seen);
    const inner = new Set([...seen, ...this.refsOf(node)]);
    const parts = schemaList(s["allOf"]).map((p) => this.resolve(p, inner));
    if (parts.length === 0 || !parts.every((p) => isObjectSchema(p))) return s;
    const { allOf: _drop, ...rest } = s;
    const properties: JsonSchema = {};
    const required: unknown[] = [];
    for (const part of [...parts, rest]) {
      Object.assign(properties, asSchema(part["properties"]) ?? {});
      if (Array.isArray(part["required"]))
        required.push(...part["required"].filter((r) => !required.includes(r)));
    }
    return { ...rest, type: "object", properties, ...(required.length > 0 ? { required } : {}) };
  }

  /** The `$ref` strings a node goes through, so recursive schemas are not flattened forever. */
  refsOf(node: JsonSchema): string[] {
    const out: string[] = [];
    let current: JsonSchema | undefined = node;
    while (current && typeof current["$ref"] === "string" && !out.includes(current["$ref"])) {
      out.push(current["$ref"]);
      current = this.pointer(current["$ref"]);
    }
    return out;
  }

  private pointer(ref: string): JsonSchema | undefined {
    if (!ref.startsWith("#")) return undefined;
    const parts = ref
      .slice(1)
      .split("/")
      .filter((p, i) => i > 0 || p !== "")
      .map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~"));
    let node: unknown = this.root;
    for (const part of parts) {
      const obj = asSchema(node) ?? (Array.isArray(node) ? (node as unknown as JsonSchema) : undefined);
      if (!obj) return undefined;
      node = obj[part];
    }
    return asSchema(node);
  }
}

function isNullSchema(node: JsonSchema): boolean {
  return node["type"] === "null" || ("const" in node && node["const"] === null);
}

/**
 * Splits a node into the alternatives it allows besides null. `{type: ["string","null"]}` gives
 * `[{type: "string"}]` and nullable; a plain node gives itself.
 */
export function alternatives(doc: SchemaDoc, node: JsonSchema): { options: JsonSchema[]; nullable: boolean } {
  const s = doc.resolve(node);
  const union = schemaList(s["anyOf"] ?? s["oneOf"]);
  if (union.length > 0) {
    const { anyOf: _a, oneOf: _o, ...rest } = s;
    const options: JsonSchema[] = [];
    let nullable = false;
    for (const branch of union) {
      // Keywords next to anyOf (a description, a default) belong to every branch.
      const merged = doc.resolve({ ...rest, ...doc.resolve(branch) });
      const inner = alternatives(doc, merged);
      nullable ||= inner.nullable || isNullSchema(merged);
      if (!isNullSchema(merged)) options.push(...inner.options);
    }
    return { options, nullable };
  }
  const type = s["type"];
  if (Array.isArray(type)) {
    const nonNull = type.filter((t) => t !== "null");
    const nullable = nonNull.length < type.length;
    return { options: nonNull.map((t) => ({ ...s, type: t })), nullable };
  }
  if (Array.isArray(s["enum"]) && s["enum"].includes(null)) {
    const values = s["enum"].filter((v) => v !== null);
    return { options: values.length > 0 ? [{ ...s, enum: values }] : [], nullable: true };
  }
  if (isNullSchema(s)) return { options: [], nullable: true };
  return { options: [s], nullable: s["nullable"] === true };
}

/** The single non-null shape of a node, when it has exactly one (the common "T or null" case). */
export function soleOption(doc: SchemaDoc, node: JsonSchema): JsonSchema | undefined {
  const { options } = alternatives(doc, node);
  return options.length === 1 ? options[0] : undefined;
}

export function isObjectSchema(node: JsonSchema): boolean {
  return (
    node["type"] === "object" || (node["type"] === undefined && asSchema(node["properties"]) !== undefined)
  );
}

export function isArraySchema(node: JsonSchema): boolean {
  return node["type"] === "array" || (node["type"] === undefined && node["items"] !== undefined);
}

/**
 * The success branch of an output schema. The kit advertises `{anyOf: [result, ToolError]}` so that
 * SDK clients accept error results; the docs describe the result and mention failures separately.
 */
export function successSchema(output: JsonSchema | undefined): {
  schema: JsonSchema | undefined;
  hasErrorBranch: boolean;
} {
  if (!output) return { schema: undefined, hasErrorBranch: false };
  const union = schemaList(output["anyOf"] ?? output["oneOf"]);
  const errors = union.filter((b) => b["title"] === "ToolError");
  if (errors.length === 0) return { schema: output, hasErrorBranch: false };
  const rest = union.filter((b) => b["title"] !== "ToolError");
  const { anyOf: _a, oneOf: _o, $schema: _s, type: _t, ...shared } = output;
  // $defs stay on the merged node so `#/$defs/...` refs still resolve against the original root.
  const schema = rest.length === 1 ? { ...shared, ...rest[0] } : { ...shared, anyOf: rest };
  return { schema, hasErrorBranch: true };
}
