import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateReference } from "../src/generate.js";
import type { ListedTool } from "../src/model.js";
import { readTools } from "../src/read.js";
import { exampleCall } from "../src/render/example-call.js";
import { isUntrusted } from "../src/render/schema.js";
import { EXAMPLE_CLI, ensureKitBuilt, loadFixture, openGate, tempDir } from "./helpers.js";

// ajv's CJS default export needs unwrapping under NodeNext typings.
const Ajv = Ajv2020 as unknown as typeof Ajv2020.default;
const formats = addFormats as unknown as typeof addFormats.default;

function validator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  formats(ajv);
  return ajv;
}

/** The example call as the page shows it: parsed back out of the ```json block. */
function callOnPage(page: string): { params: { name: string; arguments: Record<string, unknown> } } {
  const m = /## Example call \[#example-call\][\s\S]*?```json\n([\s\S]*?)\n```/.exec(page);
  if (!m) throw new Error("no example call on the page");
  return JSON.parse(m[1]!);
}

function expectValid(tools: readonly ListedTool[], pages: ReadonlyMap<string, string>): void {
  const ajv = validator();
  for (const tool of tools) {
    const call = callOnPage(pages.get(`${tool.name}.mdx`)!);
    expect(call.params.name).toBe(tool.name);
    const validate = ajv.compile(tool.inputSchema);
    const ok = validate(call.params.arguments);
    expect(
      ok,
      `${tool.name}: ${JSON.stringify(call.params.arguments)} -> ${ajv.errorsText(validate.errors)}`,
    ).toBe(true);
  }
}

describe("example calls validate against the input schema", () => {
  const tmp = tempDir("calls");
  beforeAll(() => ensureKitBuilt());
  afterAll(() => tmp.remove());

  it("for every tool of the kit's example server", async () => {
    const listing = await readTools({
      kind: "stdio",
      command: "node",
      args: [EXAMPLE_CLI, "--output-schemas", "--gate-file", openGate(tmp.path)],
    });
    expect(listing.tools).toHaveLength(9);
    expectValid(listing.tools, generateReference(listing.tools, listing.server));

    // The generator's untrusted check is a copy of the kit's; both must agree on every schema node.
    const { inlineRefs, isUntrustedSchema } = await import("@mcpforge/toolkit");
    const nodes: Record<string, unknown>[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (typeof v === "object" && v !== null) {
        nodes.push(v as Record<string, unknown>);
        Object.values(v).forEach(walk);
      }
    };
    // With the refs written out (tools/list has read_message's wrapper once, in its $defs):
    // read_message's two untrusted fields, and each tool's error branch's untrusted detail.
    walk(listing.tools.map((t) => inlineRefs(t.outputSchema ?? {})));
    expect(nodes.filter((n) => isUntrusted(n))).toHaveLength(2 + listing.tools.length);
    // And as listed: the wrapper in read_message's $defs, and the other tools' details.
    const inlined = nodes.length;
    walk(listing.tools.map((t) => t.outputSchema));
    expect(nodes.slice(inlined).filter((n) => isUntrusted(n))).toHaveLength(listing.tools.length);
    for (const node of nodes) expect(isUntrusted(node)).toBe(isUntrustedSchema(node));
  });

  it("for every tool of the tricky fixture (nested arrays, nullables, enums, patterns, formats, bounds, refs)", () => {
    const { tools, server } = loadFixture("tricky-tools.json");
    expectValid(tools, generateReference(tools, server));
  });

  it("uses required arguments only, with values that respect the rules", () => {
    const { tools } = loadFixture("tricky-tools.json");
    const byName = new Map(tools.map((t) => [t.name, t]));
    const args = (name: string) =>
      (exampleCall(byName.get(name)!).params as { arguments: Record<string, unknown> }).arguments;
    expect(args("no_args")).toEqual({});
    const rules = args("enums_and_patterns");
    expect(rules["status"]).toBe("draft");
    expect(rules["sort"]).toBe("asc");
    expect(rules["code"]).toMatch(/^[A-Z]{3}-\d{4}$/);
    expect(rules["slug"]).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
    expect(rules["id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(rules["ratio"]).toBeGreaterThan(0);
    expect(rules["ratio"]).toBeLessThanOrEqual(0.5);
    expect(rules["step"]).toBe(10);
    expect(rules["neg"]).toBe(-3);
    expect(new Set(rules["ids"] as string[]).size).toBe(3);
    expect(rules["nums"]).toEqual([1, 2, 3]);
    expect(rules["long"]).toHaveLength(20);
    expect(rules["kind"]).toBe("fixed");
    const items = args("create_items")["items"] as Record<string, unknown>[];
    expect(items).toHaveLength(2);
    expect(Object.keys(items[0]!).sort()).toEqual(["dims", "name", "owner", "parts"]);
    expect(args("create_items")).not.toHaveProperty("dry_run");
    expect(args("bare")["x"]).toBeGreaterThan(2);
    expect(args("bare")["x"]).toBeLessThan(3);
  });

  it("the JSON-RPC envelope is a tools/call request", () => {
    const { tools } = loadFixture("seed-list-notes.json");
    expect(exampleCall(tools[0]!)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "list_notes", arguments: {} },
    });
  });
});

describe("a schema that writes repeated shapes once ($defs + $ref)", () => {
  const tmp = tempDir("compact");
  beforeAll(() => ensureKitBuilt());
  afterAll(() => tmp.remove());

  it("gets the same pages as the schema it was made from, and example calls that validate", async () => {
    const { compactSchema } = await import("@mcpforge/toolkit");
    const example = await readTools({
      kind: "stdio",
      command: "node",
      args: [EXAMPLE_CLI, "--output-schemas", "--gate-file", openGate(tmp.path)],
    });
    let shrunk = 0;
    for (const { tools, server } of [example, loadFixture("tricky-tools.json")]) {
      // Inputs too: the kit leaves them written out, but other servers may not. (The fixture's
      // recursive trees already use $defs; their repeated shapes join them.)
      const compact = tools.map((t) => ({
        ...t,
        inputSchema: compactSchema(t.inputSchema),
        ...(t.outputSchema ? { outputSchema: compactSchema(t.outputSchema) } : {}),
      }));
      const written = tools;
      if (JSON.stringify(compact).length < JSON.stringify(written).length) shrunk++;
      const pagesOf = (listed: ListedTool[]) =>
        [...generateReference(listed, server)].filter(([name]) => name !== "mcp-tools.json");
      expect(pagesOf(compact)).toEqual(pagesOf(written));
      expectValid(compact, generateReference(compact, server));
    }
    // The example's read_message repeats the untrusted wrapper, so it does get $refs.
    expect(shrunk).toBeGreaterThan(0);
  });
});
