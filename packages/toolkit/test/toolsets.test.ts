import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { hints } from "../src/annotations.js";
import { parseCommonFlags, parseServerArgs } from "../src/cli.js";
import { toolFactory } from "../src/define.js";
import { createExampleServer } from "../src/example/app.js";
import type { ExampleState } from "../src/example/mcp/server.js";
import { type Connected, connectInMemory, connectStdio, type Era } from "../src/testing/clients.js";
import { checkCombination, MATRIX } from "../src/testing/matrix.js";
import {
  FlagError,
  groupFlagName,
  outputSchemasOf,
  selectionFilter,
  selectionOf,
  type ToolSelection,
  toolGroupsText,
} from "../src/toolsets.js";
import { packageVersion } from "../src/version.js";

const cli = fileURLToPath(new URL("../dist/example/bin/mcpforge-example.js", import.meta.url));
const caller = { scopes: ["example:read", "example:write"] };

let open: Connected | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** The example server serving `selection`, its gate state held by the test. */
function selected(selection: ToolSelection) {
  const gate = { state: { allowPurge: false } as ExampleState };
  const kit = createExampleServer({ loadState: async () => ({ ...gate.state }), maxAgeMs: 0 });
  kit.restrictTools(selectionFilter(kit.declarations(), selection));
  return { kit, gate };
}

/** What a call answers: the result, or the protocol error's code and message. */
async function outcome(client: Connected["client"], name: string, args: Record<string, unknown> = {}) {
  try {
    return { result: await client.callTool({ name, arguments: args }) };
  } catch (err) {
    const { code, message } = err as { code?: number; message: string };
    return { code, message };
  }
}

describe.each(["legacy", "modern"] as const)("toolsets and read-only in process (%s era)", (era: Era) => {
  it("--read-only lists only the tools whose readOnlyHint is true", async () => {
    const { kit } = selected({ readOnly: true });
    open = await connectInMemory(kit, caller, { era });
    const { tools } = await open.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["fail", "get_note", "list_notes", "read_message"]);
    for (const t of tools) expect(t.annotations?.readOnlyHint).toBe(true);
  });

  it("a tool left out is answered exactly as an unknown tool is, though it exists", async () => {
    const { kit } = selected({ groups: ["notes"], readOnly: true });
    open = await connectInMemory(kit, caller, { era });
    expect((await open.client.listTools()).tools.map((t) => t.name)).toEqual(["get_note", "list_notes"]);
    const unknown = await outcome(open.client, "no_such_tool");
    expect(unknown.code).toBe(-32602);
    for (const name of ["add_note", "archive_all", "read_message"]) {
      const left = await outcome(open.client, name, { text: "x" });
      expect({ ...left, message: left.message?.replace(name, "NAME") }).toEqual({
        ...unknown,
        message: unknown.message?.replace("no_such_tool", "NAME"),
      });
    }
    // The notebook was never written to: add_note did not run.
    const listed = await open.client.callTool({ name: "list_notes", arguments: {} });
    expect((listed.structuredContent as { notes: unknown[] }).notes).toEqual([]);
  });

  it("a gated tool in the chosen groups still follows its gate", async () => {
    const { kit, gate } = selected({ groups: ["Notes"], readOnly: false });
    open = await connectInMemory(kit, caller, { era });
    const names = async () => (await open!.client.listTools()).tools.map((t) => t.name);
    expect(await names()).toEqual(["add_note", "archive_all", "get_note", "list_notes"]);
    expect((await outcome(open.client, "purge")).code).toBe(-32602);
    gate.state = { allowPurge: true };
    expect(await names()).toEqual(["add_note", "archive_all", "get_note", "list_notes", "purge"]);
    const purged = await outcome(open.client, "purge");
    expect(purged.result?.structuredContent).toBeDefined();
    expect(purged.result?.isError).toBeFalsy();
  });

  it("a gated tool outside the chosen set stays out when its gate opens", async () => {
    const { kit, gate } = selected({ groups: ["notes"], readOnly: true });
    gate.state = { allowPurge: true };
    open = await connectInMemory(kit, caller, { era });
    expect((await open.client.listTools()).tools.map((t) => t.name)).toEqual(["get_note", "list_notes"]);
    expect((await outcome(open.client, "purge")).code).toBe(-32602);
  });
});

const groupTool = toolFactory<undefined>();
const decl = (name: string, group: string, readOnly: boolean) =>
  groupTool({
    name,
    title: name,
    group,
    scope: null,
    description: name,
    input: {},
    output: { ok: z.boolean() },
    annotations: readOnly ? hints.readOnly : hints.additive,
    summary: () => "ok",
    handler: () => ({ ok: true }),
  });
const DECLARED = [
  decl("list_accounts", "Accounts and folders", true),
  decl("create_folder", "Accounts and folders", false),
  decl("search", "Reading", true),
  decl("send_email", "Sending and drafts", false),
];
const served = (selection: ToolSelection) => {
  const keep = selectionFilter(DECLARED, selection);
  return DECLARED.filter((t) => keep(t, t.annotations)).map((t) => t.name);
};

describe("choosing groups", () => {
  it("writes a group for the flag in lower case with dashes, and matches any case of either spelling", () => {
    expect(groupFlagName("Accounts and folders")).toBe("accounts-and-folders");
    expect(groupFlagName("Events and the cache")).toBe("events-and-the-cache");
    for (const given of [
      "accounts-and-folders",
      "Accounts and folders",
      "ACCOUNTS_AND_FOLDERS",
      " accounts  and folders ",
    ])
      expect(served({ groups: [given], readOnly: false })).toEqual(["list_accounts", "create_folder"]);
    expect(served({ groups: ["reading", "sending-and-drafts"], readOnly: false })).toEqual([
      "search",
      "send_email",
    ]);
    expect(served({ groups: ["accounts-and-folders", "sending-and-drafts"], readOnly: true })).toEqual([
      "list_accounts",
    ]);
  });

  it("refuses a group no tool declares, naming the groups there are", () => {
    expect(() => served({ groups: ["reading", "writing"], readOnly: false })).toThrow(
      new FlagError(
        'no tool group "writing"; the groups are accounts-and-folders, reading, sending-and-drafts (see --tools list)',
      ),
    );
  });

  it("reads --tools and --read-only, or MCP_TOOLS and MCP_READ_ONLY, the flags first", () => {
    const flags = (argv: string[]) => parseServerArgs(argv, {}).flags;
    expect(flags(["--tools", "Reading, sending-and-drafts", "--read-only"])).toMatchObject({
      tools: ["Reading", "sending-and-drafts"],
      readOnly: true,
    });
    expect(flags(["--tools", "LIST"]).tools).toBe("list");
    expect(() => flags(["--tools", " , "])).toThrow(/--tools takes group names/);
    expect(selectionOf({}, {})).toEqual({ readOnly: false });
    expect(selectionOf({}, { MCP_TOOLS: "reading,files", MCP_READ_ONLY: "1" })).toEqual({
      groups: ["reading", "files"],
      readOnly: true,
    });
    expect(selectionOf({ tools: ["organizing"] }, { MCP_TOOLS: "reading" })).toEqual({
      groups: ["organizing"],
      readOnly: false,
    });
    for (const off of ["", "0", "false", "no"])
      expect(selectionOf({}, { MCP_READ_ONLY: off }).readOnly).toBe(false);
    for (const on of ["1", "true", "YES"]) expect(selectionOf({}, { MCP_READ_ONLY: on }).readOnly).toBe(true);
    expect(() => selectionOf({}, { MCP_READ_ONLY: "please" })).toThrow(/MCP_READ_ONLY takes 1/);
    expect(() => selectionOf({}, { MCP_TOOLS: "list" })).toThrow(/run the server with --tools list/);
  });

  it("reads --output-schemas or MCP_OUTPUT_SCHEMAS; off by default", () => {
    const flags = (argv: string[]) => parseServerArgs(argv, {}).flags;
    expect(flags([]).outputSchemas).toBeUndefined();
    expect(flags(["--output-schemas"]).outputSchemas).toBe(true);
    expect(parseCommonFlags(["--output-schemas", "--x"])).toMatchObject({
      outputSchemas: true,
      rest: ["--x"],
    });
    expect(outputSchemasOf({}, {})).toBe(false);
    expect(outputSchemasOf({ outputSchemas: true }, {})).toBe(true);
    for (const off of ["", "0", "false", "no"])
      expect(outputSchemasOf({}, { MCP_OUTPUT_SCHEMAS: off })).toBe(false);
    for (const on of ["1", "true", "YES"]) expect(outputSchemasOf({}, { MCP_OUTPUT_SCHEMAS: on })).toBe(true);
    expect(() => outputSchemasOf({}, { MCP_OUTPUT_SCHEMAS: "all" })).toThrow(/MCP_OUTPUT_SCHEMAS takes 1/);
  });

  it("leaves every tool's output schema out of tools/list when told to, and nothing else", async () => {
    const kit = createExampleServer();
    open = await connectInMemory(kit, caller);
    const full = (await open.client.listTools()).tools;
    expect(full.every((t) => t.outputSchema !== undefined)).toBe(true);
    kit.listOutputSchemas(false);
    const bare = (await open.client.listTools()).tools;
    expect(bare).toEqual(full.map(({ outputSchema: _drop, ...rest }) => rest));
    expect(bare.some((t) => "outputSchema" in t)).toBe(false);
  });

  it("lists each group under its flag spelling with its tools, read-only ones marked", () => {
    const text = toolGroupsText(DECLARED);
    expect(text).toContain(
      "accounts-and-folders  (Accounts and folders)\n  create_folder\n  list_accounts  read-only\n",
    );
    expect(text).toContain("sending-and-drafts  (Sending and drafts)\n  send_email\n");
  });
});

describe("the built example bin", () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cli, ...args], {
      encoding: "utf8",
      env: { ...process.env, ...env },
      input: "",
      timeout: 20_000,
    });

  it("--tools list prints the groups with their tools and exits 0", () => {
    const r = run(["--tools", "list"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/notes {2}\(Notes\)\n {2}add_note\n {2}archive_all\n {2}get_note +read-only\n/);
    expect(r.stdout).toMatch(/purge +gated/);
    expect(r.stdout).toMatch(/diagnostics {2}\(Diagnostics\)\n {2}fail +read-only\n/);
  });

  it("--help names --output-schemas and MCP_OUTPUT_SCHEMAS; an unreadable MCP_OUTPUT_SCHEMAS is refused at start", () => {
    const help = run(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(
      /--output-schemas +list each tool's output schema in tools\/list \(also MCP_OUTPUT_SCHEMAS=1\)/,
    );
    const bad = run([], { MCP_OUTPUT_SCHEMAS: "all" });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('MCP_OUTPUT_SCHEMAS takes 1 (or true, yes) or 0 (or false, no); got "all"');
  });

  it("refuses an unknown group at start, listing the valid ones", () => {
    for (const r of [run(["--tools", "notes,admin"]), run([], { MCP_TOOLS: "admin" })]) {
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('no tool group "admin"; the groups are diagnostics, mailbag, notes');
    }
  });

  it.each(["legacy", "modern"] as const)(
    "serves the groups MCP_TOOLS and MCP_READ_ONLY choose over stdio (%s era)",
    async (era) => {
      const conn = await connectStdio(
        { command: process.execPath, args: [cli], env: { MCP_TOOLS: "Notes,mailbag", MCP_READ_ONLY: "1" } },
        { era },
      );
      open = conn;
      expect((await conn.client.listTools()).tools.map((t) => t.name)).toEqual([
        "get_note",
        "list_notes",
        "read_message",
      ]);
      const left = await outcome(conn.client, "add_note", { text: "x" });
      expect(left.code).toBe(-32602);
      expect(left.message).toContain("Tool add_note not found");
    },
  );
});

describe("a read-only toolset of the built example bin in the client matrix", () => {
  // The SDK clients of both eras over stdio and HTTP (the Inspector CLI adds only time here).
  it.each(MATRIX.filter((c) => c.client !== "inspector"))(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, {
        spawn: { command: process.execPath, args: [cli, "--tools", "notes,diagnostics", "--read-only"] },
        serverInfo: { name: "mcpforge-example", version: packageVersion(import.meta.url) },
        listed: ["fail", "get_note", "list_notes"],
        unlisted: ["add_note", "archive_all", "purge", "read_message"],
        ok: { tool: "list_notes", args: {}, check: (s) => expect(s["notes"]).toEqual([]) },
        error: { tool: "get_note", args: { id: 99 }, reason: "NOT_FOUND" },
      });
    },
    60_000,
  );
});
