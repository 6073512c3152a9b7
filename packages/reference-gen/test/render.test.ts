import { describe, expect, it } from "vitest";
import { parseArgs, splitCommandLine, UsageError } from "../src/args.js";
import { generateReference, normaliseBasePath } from "../src/generate.js";
import type { JsonSchema, ListedTool } from "../src/model.js";
import { accessOf } from "../src/render/access.js";
import { fromPattern } from "../src/render/example-call.js";
import { describeCell } from "../src/render/facts.js";
import { flattenObject } from "../src/render/flatten.js";
import { blockquote, cell, code, mdText, yamlString } from "../src/render/markdown.js";
import { SchemaDoc, successSchema } from "../src/render/schema.js";
import { typeLabel } from "../src/render/types.js";
import { loadFixture } from "./helpers.js";

const tricky = loadFixture("tricky-tools.json");
const tool = (name: string) => tricky.tools.find((t) => t.name === name)!;
const label = (schema: JsonSchema) => typeLabel(new SchemaDoc(schema), schema);

describe("types", () => {
  it("renders base types, arrays, nullables, literals and untrusted text", () => {
    expect(label({ type: "number" })).toBe("number");
    expect(label({ type: "integer" })).toBe("integer");
    expect(label({ type: "array", items: { type: "string" } })).toBe("string[]");
    expect(label({ type: "array", items: { type: "object", properties: {} } })).toBe("object[]");
    expect(label({ type: "array", items: { type: "array", items: { type: "number" } } })).toBe("number[][]");
    expect(label({ anyOf: [{ type: "string" }, { type: "null" }] })).toBe("string | null");
    expect(label({ type: ["integer", "null"] })).toBe("integer | null");
    expect(label({ anyOf: [{ const: "a" }, { const: "b" }] })).toBe('"a" | "b"');
    expect(label({ type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } })).toBe(
      "(string | number)[]",
    );
    expect(label({ type: "string", enum: ["x", "y"] })).toBe("string");
    expect(label({ enum: ["x", 1, null] })).toBe("string | integer | null");
    expect(label({})).toBe("any");
    const untrusted = {
      type: "object",
      title: "Untrusted",
      properties: { untrusted: { type: "string" } },
      required: ["untrusted"],
    };
    expect(label(untrusted)).toBe("untrusted string");
    expect(label({ anyOf: [untrusted, { type: "null" }] })).toBe("untrusted string | null");
    // A title alone does not make a field untrusted.
    expect(label({ type: "object", title: "Untrusted", properties: { a: {}, untrusted: {} } })).toBe(
      "object",
    );
  });

  it("follows $ref into $defs", () => {
    const root = {
      $defs: { Id: { type: "string", format: "uuid" } },
      type: "object",
      properties: { id: { $ref: "#/$defs/Id" } },
    };
    const doc = new SchemaDoc(root);
    expect(typeLabel(doc, { $ref: "#/$defs/Id" })).toBe("string");
    expect(describeCell(doc, { $ref: "#/$defs/Id", description: "The id" })).toBe("The id Format `uuid`.");
  });
});

describe("description cells", () => {
  const doc = new SchemaDoc({});
  it("adds default, bounds, pattern and allowed values after the description", () => {
    expect(
      describeCell(doc, { type: "number", default: 20, minimum: 1, maximum: 50, description: "Max" }),
    ).toBe("Max Default `20`. Minimum 1. Maximum 50.");
    expect(describeCell(doc, { type: "string", minLength: 1, maxLength: 200 })).toBe("1 to 200 characters.");
    expect(describeCell(doc, { type: "array", minItems: 1, maxItems: 500, items: {} })).toBe(
      "1 to 500 items.",
    );
    expect(describeCell(doc, { type: "string", enum: ["draft", "ready"] })).toBe(
      'One of: `"draft"`, `"ready"`.',
    );
    expect(describeCell(doc, { type: "string", pattern: "^a|b$" })).toBe("Pattern `^a|b$`.");
  });

  it("leaves out zod's safe-integer bounds, which say nothing", () => {
    expect(
      describeCell(doc, { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 }),
    ).toBe("");
    expect(describeCell(doc, { type: "integer", minimum: 1, maximum: 9007199254740991 })).toBe("Minimum 1.");
  });

  it("marks untrusted fields and arrays of them", () => {
    const rows = flattenObject(
      new SchemaDoc(successSchema(tool("nullable_things").outputSchema).schema!),
      successSchema(tool("nullable_things").outputSchema).schema!,
    );
    const lines = rows.find((r) => r.path === "lines")!;
    expect(describeCell(doc, lines.node)).toContain(
      'Untrusted: text from outside, wrapped as `{"untrusted": ...}`.',
    );
    // The wrapper's own `untrusted` property is not a row.
    expect(rows.map((r) => r.path)).not.toContain("sender.untrusted");
  });
});

describe("flattening", () => {
  it("walks nested objects, arrays of objects, arrays of arrays and maps, children after their parent", () => {
    const input = tool("create_items").inputSchema;
    const rows = flattenObject(new SchemaDoc(input), input);
    expect(rows.map((r) => `${r.path}:${r.required ? "Yes" : "No"}`)).toEqual([
      "dry_run:No",
      "items:Yes",
      "items[].dims:Yes",
      "items[].name:Yes",
      "items[].owner:Yes",
      "items[].owner.email:Yes",
      "items[].owner.id:Yes",
      "items[].owner.note:No",
      "items[].parts:Yes",
      "items[].parts[].qty:Yes",
      "items[].parts[].sku:Yes",
      "items[].tags:No",
    ]);
  });

  it("stops at recursion and merges union branches", () => {
    const tree = tool("tree_walk");
    const out = successSchema(tree.outputSchema).schema!;
    expect(flattenObject(new SchemaDoc(tree.outputSchema!), out).map((r) => r.path)).toEqual([
      "tree",
      "tree.kids",
      "tree.name",
    ]);
    const union = tool("mixed_union").inputSchema;
    const rows = flattenObject(new SchemaDoc(union), union);
    const kind = rows.find((r) => r.path === "target.kind")!;
    expect(kind.required).toBe(true);
    expect(typeLabel(new SchemaDoc(union), kind.node)).toBe('"user" | "group"');
    expect(rows.find((r) => r.path === "target.name")!.required).toBe(false);
  });

  it("keeps paths whose names share a prefix apart", () => {
    const schema = {
      type: "object",
      properties: {
        "note-x": { type: "string" },
        note: { type: "array", items: { type: "object", properties: { a: { type: "string" } } } },
      },
    };
    expect(flattenObject(new SchemaDoc(schema), schema).map((r) => r.path)).toEqual([
      "note",
      "note[].a",
      "note-x",
    ]);
  });
});

describe("markdown for MDX", () => {
  it("escapes what MDX or markdown would interpret, keeping snake_case readable", () => {
    expect(mdText("use {x} and <Tag/>")).toBe("use \\{x\\} and \\<Tag/\\>");
    expect(mdText("list_notes and _emphasis_ and *bold*")).toBe(
      "list_notes and \\_emphasis\\_ and \\*bold\\*",
    );
    expect(mdText("# title\n- item\n1. item")).toBe("\\# title\n\\- item\n1\\. item");
    expect(mdText("a \\ b")).toBe("a \\\\ b");
  });

  it("quotes every line of a multi-line description, with hard breaks and paragraph breaks", () => {
    expect(blockquote("First.\nSecond.\n\nThird.")).toBe("> First.\\\n> Second.\n>\n> Third.");
  });

  it("escapes pipes in table cells, code spans included, and makes cells one line", () => {
    expect(cell("`a | b` and c|d\nnext")).toBe("`a \\| b` and c\\|d next");
    expect(code("has `tick`")).toBe("`` has `tick` ``");
  });

  it("writes YAML that reads back as the same string", () => {
    expect(yamlString("list_notes")).toBe("list_notes");
    expect(yamlString("Add a note")).toBe("Add a note");
    expect(yamlString("true")).toBe('"true"');
    expect(yamlString("Notes: all of them")).toBe('"Notes: all of them"');
    expect(yamlString("#hash")).toBe('"#hash"');
  });
});

describe("access and annotations", () => {
  const withHints = (a: ListedTool["annotations"]): ListedTool => ({
    name: "t",
    inputSchema: {},
    annotations: a,
  });
  it("derives Read-only, Destructive or Write; a missing destructiveHint means destructive, as in MCP", () => {
    expect(accessOf(withHints({ readOnlyHint: true, destructiveHint: true }))).toBe("Read-only");
    expect(accessOf(withHints({ readOnlyHint: false, destructiveHint: true }))).toBe("Destructive");
    expect(accessOf(withHints({ readOnlyHint: false, destructiveHint: false }))).toBe("Write");
    expect(accessOf(withHints(undefined))).toBe("Destructive");
  });
});

describe("patterns", () => {
  it("builds values for simple patterns within length bounds", () => {
    for (const [pattern, min, max] of [
      ["^[A-Z]{3}-\\d{4}$", 0, 100],
      ["^[a-z0-9]+(?:-[a-z0-9]+)*$", 12, 40],
      ["^#[0-9a-f]{6}$", 7, 7],
      ["^v\\d+\\.\\d+$", 0, 10],
      ["^(ab|cd)+-(x[0-9]){2}$", 5, 30],
    ] as const) {
      const values = fromPattern(pattern, min, max);
      expect(values.length, pattern).toBeGreaterThan(0);
      for (const v of values) {
        expect(v).toMatch(new RegExp(pattern));
        expect(v.length).toBeGreaterThanOrEqual(min);
        expect(v.length).toBeLessThanOrEqual(max);
      }
    }
    expect(fromPattern("^(?=lookahead)x$", 0, 10)).toEqual([]);
  });
});

describe("generateReference", () => {
  it("gives the same bytes whatever order the server lists tools and schema keys in", () => {
    const a = generateReference(tricky.tools, tricky.server, { basePath: "/docs/t" });
    const reverseKeys = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reverseKeys)
        : typeof v === "object" && v !== null
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reverseKeys(x)]),
            )
          : v;
    const reversed = [...tricky.tools].reverse().map((t) => reverseKeys(t) as ListedTool);
    expect(Object.keys(reversed[0]!)[0]).not.toBe(Object.keys(tricky.tools.at(-1)!)[0]);
    const b = generateReference(reversed, tricky.server, { basePath: "/docs/t/" });
    expect(b).toEqual(a);
  });

  it("orders meta.json pages by group then name and links pages under the base path", () => {
    const files = generateReference(tricky.tools, tricky.server, { basePath: "docs/t" });
    expect(JSON.parse(files.get("meta.json")!)).toEqual({
      title: "Reference",
      pages: [
        "index",
        "create_items",
        "mixed_union",
        "tree_walk",
        "enums_and_patterns",
        "no_args",
        "nullable_things",
        "hazards",
        "bare",
      ],
    });
    expect(files.get("index.mdx")).toContain("| [`bare`](/docs/t/bare) | bare | Destructive |");
    expect(files.get("index.mdx")).toContain("## Ungrouped [#ungrouped]");
    expect(files.get("no_args.mdx")).toContain("## Arguments [#arguments]\n\nNo arguments.\n");
    expect(files.get("bare.mdx")).toContain("| Ungrouped | Destructive | `bare` |");
  });

  it("writes mcp-tools.json with every tool's facts and full schemas, keys sorted, 2-space indent", () => {
    const files = generateReference(tricky.tools, tricky.server);
    const text = files.get("mcp-tools.json")!;
    expect(text.endsWith("}\n")).toBe(true);
    expect(text).toContain('\n  "server": {\n    "name": "tricky",');
    const json = JSON.parse(text);
    const bare = json.tools.find((t: { name: string }) => t.name === "bare");
    expect(bare).toEqual({
      name: "bare",
      title: "bare",
      description: tool("bare").description,
      group: null,
      scope: null,
      annotations: {},
      inputSchema: tool("bare").inputSchema,
      outputSchema: null,
    });
    const items = json.tools.find((t: { name: string }) => t.name === "create_items");
    expect(items.group).toBe("Items");
    expect(items.scope).toBe("items:write");
    expect(items.outputSchema).toEqual(tool("create_items").outputSchema);
    expect(Object.keys(items.annotations)).toEqual([
      "destructiveHint",
      "idempotentHint",
      "openWorldHint",
      "readOnlyHint",
    ]);
    expect(files.get("index.mdx")).toContain("[/mcp-tools.json](/mcp-tools.json)");
  });

  it("links mcp-tools.json where --json-url says", () => {
    const files = generateReference(tricky.tools, tricky.server, {
      basePath: "/docs/t",
      jsonUrl: "https://x.test/t.json",
    });
    expect(files.get("no_args.mdx")).toContain("[https://x.test/t.json](https://x.test/t.json).");
  });

  it("refuses tool names that cannot be file names, reserved names and duplicates", () => {
    const mk = (name: string): ListedTool => ({ name, inputSchema: { type: "object" } });
    expect(() => generateReference([mk("../etc")], tricky.server)).toThrow(/cannot be a page file name/);
    expect(() => generateReference([mk("index")], tricky.server)).toThrow(/cannot be a page file name/);
    expect(() => generateReference([mk("a"), mk("a")], tricky.server)).toThrow(/twice/);
  });

  it("normalises the base path", () => {
    expect(normaliseBasePath(undefined)).toBe("");
    expect(normaliseBasePath("/")).toBe("");
    expect(normaliseBasePath("docs/x/")).toBe("/docs/x");
  });
});

describe("command line", () => {
  it("splits a server command line like a shell, without running one", () => {
    expect(splitCommandLine(`node "dist/my server.js" --db '/tmp/a b' x\\ y "q\\"uote" $HOME`)).toEqual([
      "node",
      "dist/my server.js",
      "--db",
      "/tmp/a b",
      "x y",
      'q"uote',
      "$HOME",
    ]);
    expect(splitCommandLine(`node ''`)).toEqual(["node", ""]);
    expect(() => splitCommandLine(`node "open`)).toThrow(UsageError);
    expect(() => splitCommandLine("   ")).toThrow(UsageError);
  });

  it("parses flags and rejects wrong combinations", () => {
    expect(
      parseArgs(["--server", "node x.js", "--out", "ref", "--base-path=/docs/x", "--check"]),
    ).toMatchObject({
      server: "node x.js",
      out: "ref",
      basePath: "/docs/x",
      check: true,
    });
    expect(
      parseArgs(["--url", "http://127.0.0.1:1/mcp", "--header", "Authorization: Bearer a:b", "--out", "o"])
        .headers,
    ).toEqual({ Authorization: "Bearer a:b" });
    expect(() => parseArgs(["--out", "o"])).toThrow(/exactly one of --server and --url/);
    expect(() => parseArgs(["--server", "x", "--url", "http://h", "--out", "o"])).toThrow(/exactly one/);
    expect(() => parseArgs(["--server", "x"])).toThrow(/--out DIR is required/);
    expect(() => parseArgs(["--server", "x", "--out", "o", "--header", "A: b"])).toThrow(
      /only applies to --url/,
    );
    expect(() => parseArgs(["--url", "ftp://x", "--out", "o"])).toThrow(/http/);
    expect(() => parseArgs(["--server", "x", "--out", "o", "--timeout", "soon"])).toThrow(/milliseconds/);
    expect(() => parseArgs(["--server", "x", "--out", "o", "--bogus"])).toThrow(/unknown argument "--bogus"/);
    expect(() => parseArgs(["--server"])).toThrow(/needs a value/);
  });
});

describe("annotations that depend on the server's state", () => {
  const live: ListedTool = {
    name: "send_draft",
    inputSchema: { type: "object", properties: {} },
    // generated at a moment when the gate said destructive; the page must not depend on that moment
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    _meta: {
      "io.mcpforge/annotation-conditions": { destructiveHint: "while the policy allows expunge" },
    },
  };

  it("states the condition in the access column and the annotations table", () => {
    const files = generateReference([live], { name: "s", version: "1" });
    const page = files.get("send_draft.mdx")!;
    expect(page).toContain("| Write, destructive while the policy allows expunge | `send_draft` |");
    expect(page).toContain("| `destructiveHint` | `true` while the policy allows expunge, else `false` |");
    expect(files.get("index.mdx")).toContain("Write, destructive while the policy allows expunge");
    // the same page whatever the gate said when it was generated
    const off = { ...live, annotations: { ...live.annotations, destructiveHint: false } };
    expect(generateReference([off], { name: "s", version: "1" }).get("send_draft.mdx")).toBe(page);
  });

  it("keeps a fixed hint's value and the plain access label", () => {
    const fixed = { ...live, _meta: {} };
    expect(accessOf(fixed)).toBe("Destructive");
    const page = generateReference([fixed], { name: "s", version: "1" }).get("send_draft.mdx")!;
    expect(page).toContain("| Sending | Destructive |".replace("Sending", "Ungrouped"));
    expect(page).toContain("| `destructiveHint` | `true` |");
  });
});
