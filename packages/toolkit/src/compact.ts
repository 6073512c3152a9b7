/**
 * Writes a tool's JSON Schema once per shape: a subschema that occurs more than once in the same
 * schema (the untrusted wrapper, a message, a batch outcome, the error) moves to the schema's own
 * `$defs` and every occurrence becomes `{"$ref": "#/$defs/Name"}`. Only refs into the same schema:
 * every client compiles each tool's schema on its own, and the MCP spec (2026-07-28, "`$ref`
 * Resolution") forbids clients to fetch anything else, so a ref across tools would not resolve.
 *
 * The result accepts and rejects exactly what the input did (test/compact.test.ts checks it with
 * ajv). Descriptions are kept: when the occurrences of a shape describe it differently (each
 * untrusted field says what its text is), each `$ref` keeps its own `description` beside it, which
 * JSON Schema 2020-12 allows and which validators read as an annotation only.
 */

type Node = Record<string, unknown>;

/** Keywords whose value is one subschema, a list of subschemas, or a map of name to subschema. */
const ONE = [
  "items",
  "additionalItems",
  "additionalProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "unevaluatedItems",
  "unevaluatedProperties",
];
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"];

/** Where a subschema sits: `container[key]`, and a name hint from the property or keyword above it. */
interface Site {
  container: Node | unknown[];
  key: string | number;
  node: Node;
  hint: string;
  /** A direct entry of the root's `$defs`: counted inside, never replaced itself. */
  isDef: boolean;
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `message_id` → `MessageId`; anything outside [A-Za-z0-9] separates words. */
function pascal(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  const name = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return /^[A-Za-z]/.test(name) ? name : `S${name}`;
}

/** Every subschema position below `node`, depth first, in document order. */
function collectSites(node: Node, hint: string, out: Site[], rootDefs: unknown): void {
  for (const [keyword, value] of Object.entries(node)) {
    if (ONE.includes(keyword) && isNode(value)) {
      const childHint =
        keyword === "items" ? `${hint}Item` : keyword === "additionalProperties" ? `${hint}Value` : hint;
      out.push({ container: node, key: keyword, node: value, hint: childHint, isDef: false });
      collectSites(value, childHint, out, rootDefs);
    } else if (LIST.includes(keyword) && Array.isArray(value)) {
      value.forEach((item, i) => {
        if (!isNode(item)) return;
        out.push({ container: value, key: i, node: item, hint, isDef: false });
        collectSites(item, hint, out, rootDefs);
      });
    } else if (MAP.includes(keyword) && isNode(value)) {
      for (const [name, item] of Object.entries(value)) {
        if (!isNode(item)) continue;
        const isDef = value === rootDefs;
        const childHint = isDef ? name : pascal(name);
        out.push({ container: value, key: name, node: item, hint: childHint, isDef });
        collectSites(item, childHint, out, rootDefs);
      }
    }
  }
}

/**
 * Gives every node an id such that two nodes have the same id exactly when they are the same JSON
 * (object keys in any order): `full` counts the node's own description, `core` leaves it out.
 * Children are named by their full id, so a pass costs one walk, not one serialization per node.
 */
class Interner {
  private readonly ids = new Map<string, number>();
  readonly full = new Map<Node, number>();
  readonly core = new Map<Node, number>();

  private idOf(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }

  intern(node: Node): number {
    const seen = this.full.get(node);
    if (seen !== undefined) return seen;
    const parts: string[] = [];
    for (const keyword of Object.keys(node).sort()) {
      if (keyword === "description") continue;
      const value = node[keyword];
      let part: unknown = value;
      if (ONE.includes(keyword) && isNode(value)) part = { $id: this.intern(value) };
      else if (LIST.includes(keyword) && Array.isArray(value))
        part = value.map((v) => (isNode(v) ? { $id: this.intern(v) } : v));
      else if (MAP.includes(keyword) && isNode(value))
        part = Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => {
              const v = value[k];
              return [k, isNode(v) ? { $id: this.intern(v) } : v];
            }),
        );
      else part = canonical(value);
      parts.push(`${JSON.stringify(keyword)}:${JSON.stringify(part)}`);
    }
    const core = this.idOf(`{${parts.join(",")}}`);
    const full = this.idOf(`${core}|${JSON.stringify(node["description"] ?? null)}`);
    this.core.set(node, core);
    this.full.set(node, full);
    return full;
  }
}

/** Plain JSON with object keys sorted, so `{a,b}` and `{b,a}` compare equal. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isNode(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical(value[k])]),
  );
}

function withoutDescription(node: Node): Node {
  const { description: _drop, ...rest } = node;
  return rest;
}

function refTo(name: string): string {
  return `#/$defs/${name}`;
}

/**
 * The description a shape's definition carries: the occurrences' own, when they all have the same
 * one. Otherwise the definition has none and each `$ref` keeps its occurrence's description, so
 * no field gains or loses a description (an untrusted field says what its text is; a shared
 * definition could only say it for one of them).
 */
function sharedDescription(group: readonly Site[]): string | undefined {
  const first = group[0]!.node["description"];
  if (typeof first !== "string") return undefined;
  return group.every((s) => s.node["description"] === first) ? first : undefined;
}

/** What replaces an occurrence: a `$ref`, with the occurrence's description when the definition's differs. */
function refFor(name: string, node: Node, defDescription: string | undefined): Node {
  const description = node["description"];
  return description === undefined || description === defDescription
    ? { $ref: refTo(name) }
    : { $ref: refTo(name), description };
}

/**
 * Returns `schema` with every shape that occurs more than once written once in `$defs`, when that
 * makes the schema shorter. The input is not changed. Deterministic: the same schema gives the
 * same bytes.
 */
export function compactSchema(schema: Record<string, unknown>): Record<string, unknown> {
  // A JSON copy, not structuredClone: that would keep one object shared by two places as one.
  const root = JSON.parse(JSON.stringify(schema)) as Node;
  if (!movable(root)) return root;
  const defs: Node = isNode(root["$defs"]) ? (root["$defs"] as Node) : {};
  // Each pass writes out the shape that saves the most bytes, then counts again: a shape that
  // contained a now-shared one may have become a shared shape itself.
  for (;;) {
    const sites: Site[] = [];
    collectSites(root, "", sites, defs);
    const interner = new Interner();
    interner.intern(root);
    for (const def of Object.values(defs)) if (isNode(def)) interner.intern(def);
    const groups = new Map<number, Site[]>();
    for (const site of sites) {
      if (site.isDef || typeof site.node["$ref"] === "string") continue;
      const id = interner.core.get(site.node)!;
      const group = groups.get(id);
      if (group) group.push(site);
      else groups.set(id, [site]);
    }
    let best: { sites: Site[]; name: string; description: string | undefined; saving: number } | undefined;
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      const first = group[0]!.node;
      const name = nameFor(group, defs);
      const description = sharedDescription(group);
      // Every occurrence is the shape plus, maybe, its own description: one serialization serves all.
      const core = JSON.stringify(withoutDescription(first)).length;
      const descBytes = (d: unknown) => (typeof d === "string" ? JSON.stringify(d).length + 15 : 0);
      const before = group.reduce((sum, s) => sum + core + descBytes(s.node["description"]), 0);
      const ref = JSON.stringify({ $ref: refTo(name) }).length;
      const after =
        core +
        descBytes(description) +
        name.length +
        4 +
        // The first definition also pays for `,"$defs":{}`.
        (Object.keys(defs).length === 0 ? 11 : 0) +
        group.reduce(
          (sum, s) => sum + ref + (description === undefined ? descBytes(s.node["description"]) : 0),
          0,
        );
      const saving = before - after;
      if (saving > 0 && (!best || saving > best.saving)) best = { sites: group, name, description, saving };
    }
    if (!best) break;
    const { sites: group, name, description } = best;
    const first = group[0]!.node;
    defs[name] = description === undefined ? withoutDescription(first) : { ...first, description };
    for (const site of group) {
      (site.container as Record<string | number, unknown>)[site.key] = refFor(name, site.node, description);
    }
    root["$defs"] = defs;
  }
  if (Object.keys(defs).length > 0) {
    // $defs last, sorted by name, so a reader meets the schema before its parts.
    const { $defs: _drop, ...rest } = root;
    return {
      ...rest,
      $defs: Object.fromEntries(
        Object.keys(defs)
          .sort()
          .map((k) => [k, defs[k]]),
      ),
    };
  }
  return root;
}

/**
 * Whether subschemas can move into `$defs` without changing what a ref means: not when the schema
 * names places of its own (`$id`, anchors) or points into itself other than at the root or a
 * `$defs` entry (`#/properties/a/items` would lose its target once `a` became a ref).
 */
function movable(root: Node): boolean {
  let ok = true;
  const walk = (value: unknown): void => {
    if (!ok) return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (!isNode(value)) return;
    for (const [key, v] of Object.entries(value)) {
      if (
        ["$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor"].includes(key)
      )
        ok = false;
      else if (key === "$ref" && (typeof v !== "string" || !/^#(\/\$defs\/[^/]+)?$/.test(v))) ok = false;
      else walk(v);
    }
  };
  walk(root);
  return ok;
}

/**
 * The shape's title when it has one (`Untrusted`), else the name of the property every occurrence
 * sits under (`refused_recipients` → `RefusedRecipients`), else a name from the shape itself
 * (`ObjectList`, `Enum`): a name taken from one of several properties (`from` for `to` and `cc`)
 * would mislead a reader.
 */
function nameFor(group: readonly Site[], defs: Node): string {
  const node = group[0]!.node;
  const hints = new Set(group.map((s) => s.hint));
  const base =
    typeof node["title"] === "string"
      ? pascal(node["title"])
      : hints.size === 1 && group[0]!.hint !== ""
        ? pascal(group[0]!.hint)
        : shapeName(node);
  let name = base;
  for (let i = 2; name in defs; i++) name = `${base}${i}`;
  return name;
}

function shapeName(node: Node): string {
  if (typeof node["title"] === "string") return pascal(node["title"]);
  const ref = node["$ref"];
  if (typeof ref === "string" && ref.startsWith("#/$defs/")) return ref.slice("#/$defs/".length);
  if (isNode(node["items"])) return `${shapeName(node["items"])}List`;
  if (Array.isArray(node["enum"])) return "Enum";
  if (isNode(node["properties"])) return "Object";
  if (Array.isArray(node["anyOf"]) || Array.isArray(node["oneOf"])) return "Union";
  const type = Array.isArray(node["type"]) ? node["type"].filter((t) => t !== "null") : [node["type"]];
  const nullable = Array.isArray(node["type"]) && node["type"].includes("null") ? "Nullable" : "";
  return typeof type[0] === "string" && type.length === 1 ? `${nullable}${pascal(type[0])}` : "Value";
}

/**
 * The inverse of compactSchema: every `#/$defs/...` ref written out in place (the ref's own
 * keywords, such as its description, over the definition's) and `$defs` dropped. For readers that
 * walk a schema's properties directly, such as a test looking for the untrusted wrapper. A
 * definition that refers to itself is left as a ref.
 */
export function inlineRefs(schema: Record<string, unknown>): Record<string, unknown> {
  const defs = isNode(schema["$defs"]) ? schema["$defs"] : {};
  const walk = (value: unknown, open: ReadonlySet<string>): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, open));
    if (!isNode(value)) return value;
    const { $ref, ...own } = value;
    const name = typeof $ref === "string" && $ref.startsWith("#/$defs/") ? $ref.slice(8) : undefined;
    const target = name !== undefined && !open.has(name) ? defs[name] : undefined;
    const base = isNode(target)
      ? (walk(target, new Set([...open, name!])) as Node)
      : $ref !== undefined
        ? { $ref }
        : {};
    for (const [k, v] of Object.entries(own)) base[k] = walk(v, open);
    return base;
  };
  const { $defs: _drop, ...rest } = walk(schema, new Set()) as Node;
  // Keep $defs only if a recursive definition still needs it.
  return JSON.stringify(rest).includes('"$ref":"#/$defs/') ? { ...rest, $defs: defs } : rest;
}
