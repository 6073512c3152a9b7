/**
 * compactSchema writes a repeated shape once in $defs and refers to it. It must not change what a
 * schema means: the compact schema accepts and rejects exactly the values the written-out one
 * does (ajv 2020, and ajv's draft-07 default as the v1 SDK client runs it), inlining its refs gives
 * the written-out schema back, and every description stays where it was.
 */
import { Ajv, type AnySchema } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactSchema, inlineRefs as inline } from "../src/compact.js";
import { createExampleServer } from "../src/example/app.js";
import { compileSchemas, ERROR_SCHEMA } from "../src/schema.js";
import { Untrusted, untrustedField } from "../src/untrusted.js";
import { tool, z } from "./helpers.js";

type Json = Record<string, unknown>;

function isNode(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** JSON with sorted keys: equal exactly when the two values are the same JSON. */
function canonical(v: unknown): string {
  const sort = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sort)
      : isNode(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sort(x[k])]),
          )
        : x;
  return JSON.stringify(sort(v));
}

const UNTRUSTED = z.toJSONSchema(Untrusted) as Json;
delete UNTRUSTED["$schema"];

/** Schemas in the kit's style whose shapes repeat: a pool of shapes, used again and again. */
const description = fc.option(fc.constantFrom("What went wrong", "The sender", "When (RFC 3339)"), {
  nil: undefined,
});
const described = (node: fc.Arbitrary<Json>) =>
  fc.tuple(node, description).map(([n, d]) => (d === undefined ? n : { ...n, description: d }));
const leaf: fc.Arbitrary<Json> = fc.constantFrom(
  { type: "string" },
  { type: "string", minLength: 1, maxLength: 4 },
  { type: "integer", minimum: 0 },
  { type: ["string", "null"] },
  { type: "boolean" },
  { type: "string", enum: ["sent", "held", "draft"] },
  { type: "string", const: "sent" },
  UNTRUSTED,
);
const { shape } = fc.letrec<{ shape: Json; object: Json; array: Json; union: Json }>((tie) => ({
  shape: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    described(leaf),
    tie("object"),
    tie("array"),
    tie("union"),
  ),
  object: fc
    .dictionary(fc.constantFrom("name", "address", "error", "ref", "at"), tie("shape"), { maxKeys: 4 })
    .chain((properties) =>
      fc
        .subarray(Object.keys(properties))
        .map((required) => ({ type: "object", properties, required, additionalProperties: false })),
    ),
  array: described(tie("shape").map((items) => ({ type: "array", items }))),
  union: fc.array(tie("shape"), { minLength: 2, maxLength: 3 }).map((anyOf) => ({ anyOf })),
}));
const repeating: fc.Arbitrary<Json> = fc
  .tuple(
    fc.array(shape, { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(fc.nat(), description, fc.boolean()), { minLength: 1, maxLength: 8 }),
  )
  .map(([pool, uses]) => {
    const properties: Json = {};
    uses.forEach(([i, d, listed], n) => {
      const base = pool[i % pool.length]!;
      const node = listed ? { type: "array", items: base } : base;
      properties[`f${n}`] = d === undefined ? node : { ...node, description: d };
    });
    const result = {
      type: "object",
      properties,
      required: Object.keys(properties),
      additionalProperties: false,
    };
    return { type: "object", anyOf: [result, ERROR_SCHEMA] };
  });

/** Values near a schema: mostly shaped like it, sometimes not (a wrong type, a key missing or extra). */
function valuesFor(schema: Json): fc.Arbitrary<unknown> {
  const wrong = fc.constantFrom<unknown>(null, 0, 1.5, "", "x", true, {}, [], { untrusted: 1 });
  const options = (s: Json): fc.Arbitrary<unknown>[] => {
    if (Array.isArray(s["anyOf"])) return (s["anyOf"] as Json[]).map(valuesFor);
    if (Array.isArray(s["enum"])) return [fc.constantFrom(...(s["enum"] as unknown[]), "bogus")];
    if ("const" in s) return [fc.constant(s["const"])];
    const types = Array.isArray(s["type"]) ? (s["type"] as string[]) : [s["type"] as string];
    return types.map((t) => {
      switch (t) {
        case "object": {
          const props = (s["properties"] ?? {}) as Record<string, Json>;
          const record = Object.fromEntries(Object.entries(props).map(([k, p]) => [k, valuesFor(p)]));
          const required = (s["required"] ?? []) as string[];
          return fc.oneof(
            { weight: 6, arbitrary: fc.record(record, { requiredKeys: required }) },
            { weight: 1, arbitrary: fc.record(record, { requiredKeys: [] }) },
            {
              weight: 1,
              arbitrary: fc.record(record, { requiredKeys: required }).map((o) => ({ ...o, extra: 1 })),
            },
          );
        }
        case "array":
          return fc.array(valuesFor((s["items"] ?? {}) as Json), { maxLength: 3 });
        case "string":
          return fc.string({ maxLength: 6 });
        case "integer":
          return fc.integer({ min: -3, max: 3 });
        case "number":
          return fc.double({ noNaN: true, noDefaultInfinity: true });
        case "boolean":
          return fc.boolean();
        case "null":
          return fc.constant(null);
        default:
          return fc.anything();
      }
    });
  };
  return fc.oneof({ weight: 9, arbitrary: fc.oneof(...options(schema)) }, { weight: 1, arbitrary: wrong });
}

/** Both validators the era matrix's clients run: ajv 2020 (v2) and ajv's draft-07 default (v1). */
const validators = [
  new Ajv2020({ strict: false }),
  new Ajv({ strict: false, validateSchema: false, allErrors: true }),
];

/** Checks that `compact` decides every generated value as `original` does, and that both kinds occur. */
function agree(original: Json, compact: Json, runs: number): { accepted: number; rejected: number } {
  const tally = { accepted: 0, rejected: 0 };
  for (const ajv of validators) {
    const before = ajv.compile(original as AnySchema);
    const after = ajv.compile(compact as AnySchema);
    fc.assert(
      fc.property(valuesFor(original), (value) => {
        const verdict = before(value);
        tally[verdict ? "accepted" : "rejected"]++;
        expect(after(value)).toBe(verdict);
      }),
      { numRuns: runs },
    );
    ajv.removeSchema(original as AnySchema);
    ajv.removeSchema(compact as AnySchema);
  }
  return tally;
}

describe("compactSchema", () => {
  it("writes a repeated shape once in $defs, keeping each occurrence's own description beside its $ref", () => {
    const address = { type: "object", properties: { name: UNTRUSTED }, required: ["name"] };
    const compact = compactSchema({
      type: "object",
      properties: {
        from: { type: "array", items: address, description: "Who sent it" },
        to: { type: "array", items: address, description: "Who it went to" },
        subject: { ...UNTRUSTED, description: "The subject (untrusted)" },
      },
    });
    expect(compact).toEqual({
      type: "object",
      properties: {
        from: { $ref: "#/$defs/ObjectList", description: "Who sent it" },
        to: { $ref: "#/$defs/ObjectList", description: "Who it went to" },
        subject: { $ref: "#/$defs/Untrusted", description: "The subject (untrusted)" },
      },
      $defs: {
        ObjectList: {
          type: "array",
          items: {
            type: "object",
            // The wrapper's own description, which the subject's differs from.
            properties: { name: { $ref: "#/$defs/Untrusted", description: UNTRUSTED["description"] } },
            required: ["name"],
          },
        },
        // Every occurrence's description differed, so the definition has none of them.
        Untrusted: {
          type: "object",
          properties: { untrusted: { type: "string" } },
          required: ["untrusted"],
          additionalProperties: false,
          title: "Untrusted",
        },
      },
    });
  });

  it("names a shape after the one property it always sits under, and leaves a schema without repeats alone", () => {
    const outcome = {
      type: "object",
      properties: { ref: { type: "string" }, reason: { type: "string", enum: ["NOT_FOUND", "REFUSED"] } },
    };
    const compact = compactSchema({
      anyOf: [
        { type: "object", properties: { outcomes: { type: "array", items: outcome } } },
        {
          type: "object",
          properties: { outcomes: { type: "array", items: outcome }, more: { type: "string" } },
        },
      ],
    });
    expect(Object.keys(compact["$defs"] as Json)).toEqual(["Outcomes"]);
    const plain = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } } };
    expect(compactSchema(plain)).toEqual(plain);
  });

  it("leaves alone a schema whose refs point into its own properties, or that names places with $id", () => {
    const shape = { type: "object", properties: { x: { type: "string", minLength: 1, maxLength: 9 } } };
    const pointing = {
      type: "object",
      properties: { a: shape, b: shape, c: { $ref: "#/properties/a/properties/x" } },
    };
    expect(compactSchema(pointing)).toEqual(pointing);
    const named = { type: "object", properties: { a: { ...shape, $id: "urn:a" }, b: shape, c: shape } };
    expect(compactSchema(named)).toEqual(named);
    // The same shapes with no such refs or ids are compacted.
    expect(compactSchema({ type: "object", properties: { a: shape, b: shape } })).toHaveProperty("$defs");
  });

  it("inlineRefs leaves a definition that refers to itself as a ref, with the $defs it needs", () => {
    const tree = {
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } },
    };
    const schema = { type: "object", properties: { root: { $ref: "#/$defs/Node" } }, $defs: { Node: tree } };
    expect(inline(schema)).toEqual({
      type: "object",
      properties: {
        root: {
          type: "object",
          properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } },
        },
      },
      $defs: { Node: tree },
    });
  });

  it("gives back the written-out schema when its refs are inlined, never longer, the same bytes every time", () => {
    fc.assert(
      fc.property(repeating, (schema) => {
        const compact = compactSchema(schema);
        expect(canonical(inline(compact))).toBe(canonical(schema));
        expect(JSON.stringify(compact).length).toBeLessThanOrEqual(JSON.stringify(schema).length);
        expect(JSON.stringify(compactSchema(schema))).toBe(JSON.stringify(compact));
        // Refs stay inside the schema.
        for (const ref of JSON.stringify(compact).match(/"\$ref":"[^"]*"/g) ?? [])
          expect(ref).toMatch(/^"\$ref":"#\/\$defs\/[A-Za-z0-9]+"$/);
      }),
      { numRuns: 300 },
    );
  });

  it("accepts and rejects exactly what the written-out schema does, for generated schemas and values", () => {
    const tally = { accepted: 0, rejected: 0 };
    fc.assert(
      fc.property(repeating, (schema) => {
        const t = agree(schema, compactSchema(schema), 30);
        tally.accepted += t.accepted;
        tally.rejected += t.rejected;
      }),
      { numRuns: 60 },
    );
    // Neither verdict may be missing, or the comparison would prove nothing.
    expect(tally.accepted).toBeGreaterThan(100);
    expect(tally.rejected).toBeGreaterThan(100);
  });

  it("accepts and rejects what the written-out schema does for the example server's and mail-like tools", () => {
    const Address = z.object({ name: untrustedField("The name"), address: untrustedField("The address") });
    const Outcome = z.object({
      ref: z.string(),
      error: z.object({ reason: z.string(), message: untrustedField("What went wrong") }).optional(),
    });
    const mail = tool({
      name: "mail",
      title: "Mail",
      group: "Test",
      description: "Reads mail.",
      scope: null,
      input: {},
      output: {
        from: z.array(Address),
        to: z.array(Address),
        labels: z.array(Untrusted),
        keywords: z.array(Untrusted),
        outcomes: z.array(Outcome),
        retried: z.array(Outcome),
        status: z.enum(["sent", "held"]),
        was: z.enum(["sent", "held"]),
      },
      annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
      summary: () => "mail",
      handler: () => {
        throw new Error("not called");
      },
    });
    const tools = [...createExampleServer().declarations(), mail];
    let compacted = 0;
    for (const def of tools) {
      const schemas = compileSchemas(def);
      const original = { type: "object", anyOf: [schemas.resultSchema, ERROR_SCHEMA] };
      if (schemas.outputSchema["$defs"]) compacted++;
      expect(canonical(inline(schemas.outputSchema))).toBe(canonical(original));
      const tally = agree(original, schemas.outputSchema, 200);
      expect(tally.accepted, def.name).toBeGreaterThan(0);
      expect(tally.rejected, def.name).toBeGreaterThan(0);
    }
    expect(compacted).toBeGreaterThanOrEqual(2);
  });
});
