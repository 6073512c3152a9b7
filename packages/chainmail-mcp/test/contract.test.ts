/**
 * The advertised contract, with no daemon: each tool's title and four hints against the chainmail
 * spec's tool table (copied into test/fixtures/annotations.tsv), groups, descriptions, untrusted wrappers in the output schemas, and the golden file.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { REASONS } from "@mcpforge/chainmail";
import { DaemonClient } from "@mcpforge/chainmail";
import type { Tool } from "@modelcontextprotocol/client";
import { inlineRefs, isUntrustedSchema } from "@mcpforge/toolkit";
import { checkDefaultToolsList, connectInMemory, expectToolsListGolden } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainmailReasons, createChainmailMcpServer, VERSION } from "../src/index.js";

const NO_DAEMON = "/nonexistent/chainmail-mcp-test/run/chainmail.sock";
let conn: Awaited<ReturnType<typeof connectInMemory>>;
let tools: Tool[];

beforeAll(async () => {
  const client = new DaemonClient({ socketPath: NO_DAEMON, client: "mcp" });
  const kit = createChainmailMcpServer({ client, listGatedTools: true, log: () => undefined });
  conn = await connectInMemory(kit, { scopes: [] });
  tools = (await conn.client.listTools()).tools;
});
afterAll(async () => {
  await conn?.close();
});

const byName = (name: string) => tools.find((t) => t.name === name)!;

/**
 * The spec's table; `expungeAllowed` says which policy state its "with expunge allowed" cells are
 * read in (the main listing has the gated state on, listGatedTools, so there they are yes).
 */
function fixture(expungeAllowed = true): Array<{ name: string; title: string; hints: boolean[] }> {
  const lines = fs
    .readFileSync(new URL("./fixtures/annotations.tsv", import.meta.url), "utf8")
    .trim()
    .split("\n");
  expect(lines[0]).toBe("Tool\tTitle\tRead-only\tDestructive\tIdempotent\tOpen world");
  return lines.slice(1).map((line) => {
    const [name, title, ...hints] = line.split("\t");
    return {
      name: name!,
      title: title!,
      hints: hints.map((h) => h === "yes" || (expungeAllowed && h === "with expunge allowed")),
    };
  });
}

/**
 * A server whose daemon client reports one account with this policy (only listAccounts is asked for
 * tools/list), re-checked before every tools/list.
 */
async function listedWithPolicy(policy: { allow_expunge: boolean; allow_delete_folder: boolean }) {
  const stub = {
    listAccounts: async () => ({
      accounts: [{ name: "work", provider: "imap", address: "a@example.com", auth: "ok", ...policy }],
    }),
  } as unknown as DaemonClient;
  const kit = createChainmailMcpServer({ client: stub, maxAgeMs: 0, log: () => undefined });
  const c = await connectInMemory(kit, { scopes: [] });
  try {
    return (await c.client.listTools()).tools;
  } finally {
    await c.close();
  }
}

describe("tools/list against the spec's tool table", () => {
  it("lists exactly the tools of the annotations table, with its titles and all four hints", () => {
    const rows = fixture();
    expect(rows).toHaveLength(38);
    expect(tools.map((t) => t.name).sort()).toEqual(rows.map((r) => r.name).sort());
    for (const row of rows) {
      const t = byName(row.name);
      expect(t.title, row.name).toBe(row.title);
      expect(t.annotations, row.name).toEqual({
        title: row.title,
        readOnlyHint: row.hints[0],
        destructiveHint: row.hints[1],
        idempotentHint: row.hints[2],
        openWorldHint: row.hints[3],
      });
    }
  });

  it.each([
    ["allows expunge and folder deletion", true],
    ["allows neither", false],
  ])(
    "gives every tool the table's four hints while the daemon's policy %s (the draft tools' destructiveHint follows it)",
    async (_state, allowed) => {
      const listed = await listedWithPolicy({ allow_expunge: allowed, allow_delete_folder: allowed });
      // The gated tools are listed only in the allowing state; every other row of the table is there.
      const rows = fixture(allowed).filter((r) => allowed || !["expunge", "delete_folder"].includes(r.name));
      expect(rows).toHaveLength(allowed ? 38 : 36);
      expect(listed.map((t) => t.name).sort()).toEqual(rows.map((r) => r.name).sort());
      for (const row of rows)
        expect(listed.find((t) => t.name === row.name)?.annotations, row.name).toEqual({
          title: row.title,
          readOnlyHint: row.hints[0],
          destructiveHint: row.hints[1],
          idempotentHint: row.hints[2],
          openWorldHint: row.hints[3],
        });
      const draftTools = ["update_draft", "send_draft", "delete_draft"];
      expect(draftTools.map((n) => listed.find((t) => t.name === n)?.annotations?.destructiveHint)).toEqual(
        draftTools.map(() => allowed),
      );
    },
  );

  it("puts every tool in its group of the tool table", () => {
    const groups: Record<string, string[]> = {
      "Accounts and folders": [
        "list_accounts",
        "test_account",
        "list_folders",
        "create_folder",
        "rename_folder",
        "delete_folder",
      ],
      Reading: ["search", "get_message", "get_thread"],
      Files: ["download_attachment", "save_raw_message"],
      Organizing: ["move", "copy", "archive", "trash", "expunge", "set_flags", "set_labels"],
      "Events and the cache": ["cache_status", "read_events"],
      "Work items": [
        "create_item",
        "update_item",
        "get_item",
        "list_items",
        "delete_item",
        "restore_item",
        "edit_criteria",
        "tick_criterion",
        "set_blocker",
        "link_thread",
        "unlink_thread",
      ],
      "Sending and drafts": [
        "send_email",
        "reply",
        "forward",
        "create_draft",
        "update_draft",
        "send_draft",
        "delete_draft",
      ],
    };
    for (const [group, names] of Object.entries(groups)) {
      for (const name of names) expect(byName(name)._meta?.["io.mcpforge/group"], name).toBe(group);
    }
  });

  it("takes the spec's arguments with their bounds and defaults", () => {
    const props = (name: string) =>
      (byName(name).inputSchema as { properties: Record<string, Record<string, unknown>> }).properties;
    const required = (name: string) => (byName(name).inputSchema as { required?: string[] }).required ?? [];
    expect(Object.keys(props("search")).sort()).toEqual(
      ["accounts", "count_only", "cursor", "limit", "query", "snippets", "source", "threads"].sort(),
    );
    expect(props("search")["limit"]).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 200,
      default: 25,
    });
    expect(props("search")["source"]).toMatchObject({ enum: ["auto", "cache", "server"], default: "auto" });
    expect(required("search")).toEqual([]);
    expect(props("get_message")["refs"]).toMatchObject({ minItems: 1, maxItems: 50 });
    for (const batch of ["move", "copy", "archive", "trash", "expunge", "set_flags", "set_labels"]) {
      expect(props(batch)["refs"], batch).toMatchObject({ type: "array", minItems: 1, maxItems: 500 });
      expect(required(batch), batch).toContain("refs");
    }
    expect(required("move").sort()).toEqual(["folder", "refs"]);
    expect(Object.keys(props("set_flags")).sort()).toEqual(["add", "refs", "remove"]);
    expect(Object.keys(props("rename_folder")).sort()).toEqual(["account", "from", "to"]);
    expect(Object.keys(props("delete_folder")).sort()).toEqual(["account", "force", "name"]);
    expect(required("download_attachment").sort()).toEqual(["part", "ref"]);
    expect(Object.keys(props("download_attachment")).sort()).toEqual(["dir", "part", "ref"]);
    expect(Object.keys(props("save_raw_message")).sort()).toEqual(["dir", "ref"]);
    expect(Object.keys(props("list_accounts"))).toEqual([]);
    for (const t of tools) {
      for (const [key, p] of Object.entries(props(t.name))) {
        expect(typeof p["description"], `${t.name}.${key}`).toBe("string");
      }
    }
  });

  it("takes the spec's arguments for every work item tool", () => {
    const props = (name: string) =>
      (byName(name).inputSchema as { properties: Record<string, Record<string, unknown>> }).properties;
    const required = (name: string) => (byName(name).inputSchema as { required?: string[] }).required ?? [];
    const args: Record<string, [string[], string[]]> = {
      create_item: [
        [
          "area",
          "criteria",
          "description",
          "due_date",
          "estimate",
          "idempotency_key",
          "parent_id",
          "priority",
          "start_date",
          "state",
          "title",
          "type",
        ],
        ["title", "type"],
      ],
      update_item: [
        [
          "area",
          "clear",
          "description",
          "due_date",
          "estimate",
          "id",
          "parent_id",
          "priority",
          "start_date",
          "state",
          "title",
          "type",
        ],
        ["id"],
      ],
      get_item: [["id"], ["id"]],
      list_items: [
        [
          "area",
          "changed_since",
          "inbox",
          "include_deleted",
          "limit",
          "ongoing",
          "page_token",
          "state",
          "type",
          "under",
        ],
        [],
      ],
      delete_item: [["cascade", "id"], ["id"]],
      restore_item: [["cascade", "id"], ["id"]],
      edit_criteria: [["add", "edit", "item_id", "order", "remove"], ["item_id"]],
      tick_criterion: [
        ["criterion_id", "evidence", "item_id", "ticked"],
        ["criterion_id", "item_id", "ticked"],
      ],
      set_blocker: [
        ["blocked_by_id", "item_id", "linked"],
        ["blocked_by_id", "item_id", "linked"],
      ],
      link_thread: [
        ["anchor", "item_id", "note", "ref"],
        ["item_id", "ref"],
      ],
      unlink_thread: [
        ["account", "item_id", "thread_key"],
        ["account", "item_id", "thread_key"],
      ],
    };
    for (const [name, [keys, req]] of Object.entries(args)) {
      expect(Object.keys(props(name)).sort(), name).toEqual(keys);
      expect(required(name).sort(), name).toEqual(req);
    }
    expect(props("list_items")["limit"]).toMatchObject({ minimum: 1, maximum: 500, default: 100 });
    expect(props("create_item")["title"]).toMatchObject({ minLength: 1, maxLength: 200 });
    expect(props("create_item")["idempotency_key"]).toMatchObject({ minLength: 1, maxLength: 128 });
    // Where the seed gives "empty" a meaning, "" is accepted (the daemon reads it as absent):
    // evidence "must be empty when unticking", note "empty keeps an existing note", create_item's
    // parent_id "empty makes a root item", area and priority "inherited … when empty".
    const takesEmpty = (name: string, arg: string) => {
      const p = props(name)[arg] as { minLength?: number; enum?: string[] };
      expect(p.minLength ?? 0, `${name}.${arg}`).toBe(0);
      if (p.enum) expect(p.enum, `${name}.${arg}`).toContain("");
    };
    expect(props("tick_criterion")["evidence"]).toMatchObject({ maxLength: 1000 });
    expect(props("link_thread")["note"]).toMatchObject({ maxLength: 500 });
    for (const [name, arg] of [
      ["tick_criterion", "evidence"],
      ["link_thread", "note"],
      ["create_item", "parent_id"],
      ["create_item", "area"],
      ["create_item", "priority"],
    ] as const)
      takesEmpty(name, arg);
    // update_item gives "" no meaning: clear names the fields to clear.
    expect((props("update_item")["area"] as { enum: string[] }).enum).toEqual(["work", "personal"]);
    expect(props("update_item")["parent_id"]).toMatchObject({ minLength: 1 });
    expect((props("create_item")["type"] as { enum: string[] }).enum).toEqual([
      "objective",
      "key-result",
      "initiative",
      "epic",
      "feature",
      "story",
      "bug",
      "support-ticket",
      "task",
    ]);
    const out = (name: string) =>
      // Written out: tools/list carries each repeated shape once, in the schema's $defs.
      (
        inlineRefs(byName(name).outputSchema as Record<string, unknown>) as unknown as {
          anyOf: Array<{ properties: Record<string, Record<string, unknown>> }>;
        }
      ).anyOf[0]!.properties;
    const item = (out("create_item")["item"] as { properties: Record<string, Record<string, unknown>> })
      .properties;
    const wrapped = (node: Record<string, unknown> | undefined) =>
      isUntrustedSchema(node) || (node?.["anyOf"] as unknown[] | undefined)?.some(isUntrustedSchema);
    expect(wrapped(item["title"])).toBe(true);
    expect(wrapped(item["description"])).toBe(true);
    expect(item["id"]).toMatchObject({ type: "string" });
    const link = (out("link_thread")["link"] as { properties: Record<string, Record<string, unknown>> })
      .properties;
    for (const key of ["thread_key", "anchor_message_id", "note"]) expect(wrapped(link[key]), key).toBe(true);
  });

  it("wraps untrusted output fields and never a ref", () => {
    const result = (name: string) =>
      // Written out: tools/list carries each repeated shape once, in the schema's $defs.
      (
        inlineRefs(byName(name).outputSchema as Record<string, unknown>) as unknown as {
          anyOf: Array<{ properties: Record<string, Record<string, unknown>> }>;
        }
      ).anyOf[0]!.properties;
    const row = (result("search")["rows"]!["items"] as { properties: Record<string, unknown> }).properties;
    for (const key of ["subject", "folder", "message_id", "thread_id", "snippet"]) {
      const node = row[key] as Record<string, unknown>;
      const wrapped =
        isUntrustedSchema(node) || (node["anyOf"] as unknown[] | undefined)?.some(isUntrustedSchema);
      expect(wrapped, `search rows.${key}`).toBe(true);
    }
    expect(row["ref"]).toMatchObject({ type: "string" });
    expect(isUntrustedSchema(result("create_folder")["name"])).toBe(true);
    expect(isUntrustedSchema(result("download_attachment")["path"])).toBe(true);
    expect(isUntrustedSchema(result("download_attachment")["filename"])).toBe(true);
    expect(result("save_raw_message")["content_type"]).toMatchObject({ const: "message/rfc822" });
    expect(result("get_thread")["omitted_refs"]).toMatchObject({ type: "array", items: { type: "string" } });
  });

  it("declares chainmail's reasons, and its version", () => {
    for (const reason of Object.keys(REASONS)) expect(Object.keys(chainmailReasons)).toContain(reason);
    expect(Object.keys(chainmailReasons)).toContain("DAEMON_UNAVAILABLE");
    const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(VERSION).toBe(pkg.version);
  });

  it("matches tools_list.golden", async () => {
    await expectToolsListGolden(conn.client, new URL("./tools_list.golden", import.meta.url));
  });

  it("from the built bin (no daemon, gated tools listed) is the golden without output schemas unless --output-schemas, to the v1 and v2 clients over stdio and HTTP", async () => {
    const bin = fileURLToPath(new URL("../bin/chainmail-mcp.js", import.meta.url));
    await checkDefaultToolsList(
      {
        command: process.execPath,
        args: [bin, "--home", "/nonexistent/chainmail-mcp-test", "--list-gated-tools"],
      },
      new URL("./tools_list.golden", import.meta.url),
    );
  }, 120_000);
});
