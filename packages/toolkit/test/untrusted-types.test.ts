import { describe, expect, it } from "vitest";
import { isUntrustedSchema, untrusted } from "../src/untrusted.js";
import { tool, z } from "./helpers.js";
import { untrustedField } from "../src/untrusted.js";

const common = {
  title: "Mail",
  group: "Test",
  description: "Reads a subject.",
  scope: null,
  input: {},
  output: { subject: untrustedField("The subject") },
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  summary: () => "",
};

// These declarations are checked by `tsc` (the typecheck task runs over test/): the kit's types must
// refuse a plain string, or a hand-made look-alike, where untrusted text is declared.
export const wrapped = tool({ ...common, name: "wrapped", handler: () => ({ subject: untrusted("hello") }) });
// biome-ignore format: @ts-expect-error must sit on the line before the whole declaration
// @ts-expect-error a plain string is not untrusted text
export const plain = tool({ ...common, name: "plain", handler: () => ({ subject: "hello" }) });
// biome-ignore format: @ts-expect-error must sit on the line before the whole declaration
// @ts-expect-error an object of the same shape without the brand is refused too
export const forged = tool({ ...common, name: "forged", handler: () => ({ subject: { untrusted: "hello" } }) });

describe("untrusted text", () => {
  it("wraps text as {untrusted}", () => {
    expect(untrusted("x")).toEqual({ untrusted: "x" });
  });

  it("is recognisable in JSON Schema by its marker", () => {
    const schema = z.toJSONSchema(
      z.object({ s: untrustedField("S"), t: z.object({ untrusted: z.string() }) }),
    ) as {
      properties: Record<string, unknown>;
    };
    expect(isUntrustedSchema(schema.properties["s"])).toBe(true);
    expect(isUntrustedSchema(schema.properties["t"])).toBe(false);
  });
});
