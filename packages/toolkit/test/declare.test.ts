import { describe, expect, it } from "vitest";
import { hints, openWorld } from "../src/annotations.js";
import { toolFactory } from "../src/define.js";
import { echo, serverOf, tool, z } from "./helpers.js";

const base = {
  title: "T",
  group: "G",
  description: "Does a thing.",
  scope: null,
  output: { ok: z.boolean() },
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  summary: () => "ok",
  handler: () => ({ ok: true }),
};

describe("declarations are checked when the server is built", () => {
  it("accepts a good declaration", () => {
    expect(
      serverOf([echo])
        .kit.listTools()
        .map((t) => t.name),
    ).toEqual(["echo"]);
  });

  it.each([
    ["Bad-Name", /must match/],
    ["1tool", /must match/],
    ["has space", /must match/],
  ])("refuses the name %s", (name, message) => {
    expect(() => serverOf([tool({ ...base, name, input: {} })])).toThrow(message);
  });

  it("refuses two tools with one name", () => {
    expect(() => serverOf([echo, echo])).toThrow('Tool "echo" is declared twice');
  });

  it("refuses an input property without a description", () => {
    expect(() => serverOf([tool({ ...base, name: "t", input: { limit: z.number() } })])).toThrow(
      'Tool "t": input property "limit" needs a description',
    );
  });

  it("refuses a date anywhere in a schema, naming the tool", () => {
    expect(() =>
      serverOf([tool({ ...base, name: "t", input: {}, output: { when: z.date() } } as never)]),
    ).toThrow(/Tool "t" output cannot be converted to JSON Schema: Date/);
  });

  it("refuses a transform in the input", () => {
    expect(() =>
      serverOf([
        tool({
          ...base,
          name: "t",
          input: {
            n: z
              .string()
              .transform((s) => s.length)
              .describe("n"),
          },
        }),
      ]),
    ).toThrow(/Tool "t" input cannot be converted to JSON Schema/);
  });

  it("refuses an empty description, title or group", () => {
    expect(() => serverOf([tool({ ...base, name: "t", input: {}, description: " " })])).toThrow(
      'Tool "t": description must not be empty',
    );
    expect(() => serverOf([tool({ ...base, name: "t", input: {}, group: "" })])).toThrow(
      'Tool "t": group must not be empty',
    );
  });

  it("refuses a missing annotation", () => {
    const annotations = { readOnly: true, destructive: false, idempotent: true } as never;
    expect(() => serverOf([tool({ ...base, name: "t", input: {}, annotations })])).toThrow(
      'Tool "t": annotation openWorld must be set to true or false',
    );
  });
});

describe("tools/list is deterministic", () => {
  const a = tool({ ...base, name: "alpha", input: { x: z.string().describe("x") } });
  const b = tool({ ...base, name: "beta", input: {} });

  it("sorts tools by name whatever the declaration order", () => {
    const one = JSON.stringify(serverOf([b, a, echo]).kit.listTools());
    const two = JSON.stringify(serverOf([echo, a, b]).kit.listTools());
    expect(one).toBe(two);
    expect(JSON.parse(one).map((t: { name: string }) => t.name)).toEqual(["alpha", "beta", "echo"]);
  });

  it("emits every annotation explicitly, the group and the scope, and no $schema (2020-12 is MCP's default)", () => {
    const scoped = tool({ ...base, name: "scoped", scope: "x:read", input: {} });
    const [listed] = serverOf([scoped]).kit.listTools();
    expect(listed?.annotations).toEqual({
      title: "T",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(listed?.inputSchema).not.toHaveProperty("$schema");
    expect(listed?.outputSchema).not.toHaveProperty("$schema");
    expect(listed?.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
    expect(listed?._meta).toEqual({ "io.mcpforge/group": "G", "io.mcpforge/scope": "x:read" });
  });

  it("advertises an output schema that admits the error shape", () => {
    const [listed] = serverOf([echo]).kit.listTools();
    const anyOf = listed?.outputSchema?.["anyOf"] as { title?: string }[];
    expect(anyOf).toHaveLength(2);
    expect(anyOf[1]?.title).toBe("ToolError");
  });
});

describe("the shared vocabulary", () => {
  const filed = toolFactory<{ greeting: string }>({ group: "Filed", scope: "x:read" });
  const common = {
    title: "T",
    description: "D.",
    input: {},
    output: { ok: z.boolean() },
    summary: () => "ok",
    handler: () => ({ ok: true }),
  };

  it("a factory with defaults gives each declaration its file's group and scope, which a tool may override", () => {
    const reads = filed({ ...common, name: "reads", annotations: hints.readOnly });
    const writes = filed({ ...common, name: "writes", scope: "x:write", annotations: hints.additive });
    const open = filed({
      ...common,
      name: "anyone",
      scope: null,
      annotations: openWorld(hints.idempotentWrite),
    });
    const listed = serverOf([reads, writes, open]).kit.listTools();
    expect(listed.map((t) => t._meta)).toEqual([
      { "io.mcpforge/group": "Filed" },
      { "io.mcpforge/group": "Filed", "io.mcpforge/scope": "x:read" },
      { "io.mcpforge/group": "Filed", "io.mcpforge/scope": "x:write" },
    ]);
    expect(listed[0]?.annotations).toEqual({
      title: "T",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
  });

  it("every preset states all four hints, and only openWorld() opens the world", () => {
    for (const preset of Object.values(hints)) {
      expect(Object.keys(preset).sort()).toEqual(["destructive", "idempotent", "openWorld", "readOnly"]);
      expect(preset.openWorld).toBe(false);
      expect(openWorld(preset)).toEqual({ ...preset, openWorld: true });
    }
    expect(hints.destructiveIdempotent).toEqual({
      readOnly: false,
      destructive: true,
      idempotent: true,
      openWorld: false,
    });
  });
});
