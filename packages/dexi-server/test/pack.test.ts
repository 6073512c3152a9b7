import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectStdio, packAndInstall, runInspector, npxSpawn } from "@mcpforge/toolkit/testing";
import { expect, it } from "vitest";

/**
 * The published shape: `npm pack` the kit and this package, install the tarballs from the npm cache
 * into an empty folder (never the repo), and ask the installed bin for tools/list and a create_note
 * through the MCP Inspector CLI; then start it the way the client snippets do, with npx.
 */
const PKG = fileURLToPath(new URL("..", import.meta.url));
const KIT = fileURLToPath(new URL("../../toolkit", import.meta.url));
const NAME = "@mcpforge/dexi-server";
const TOOLS = [
  "create_note",
  "delete_note",
  "find_similar",
  "get_due_reviews",
  "get_note",
  "grade_review",
  "list_folders",
  "list_notes",
  "list_tags",
  "search_notes",
  "semantic_search",
  "update_note",
];

it("the packed tarball installs into an empty folder, answers through the Inspector and starts under npx", async () => {
  const installed = await packAndInstall([KIT, PKG], { reuseNativeBuilds: ["better-sqlite3"] });
  try {
    const server = {
      command: process.execPath,
      args: [installed.path(NAME, "dist/bin/dexi-mcp.js"), "--db", join(installed.dir, "pack.db")],
      env: { XDG_DATA_HOME: installed.dir },
    };
    const { json } = await runInspector(server, ["--method", "tools/list"]);
    const names = (json as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toEqual(TOOLS);
    const created = await runInspector(server, [
      "--method",
      "tools/call",
      "--tool-name",
      "create_note",
      "--tool-arg",
      "title=packed",
      "--tool-arg",
      "text=hello #world",
    ]);
    expect((created.json as { structuredContent: { tags: string[] } }).structuredContent.tags).toEqual([
      "#world",
    ]);

    // The client snippets' `npx -y @mcpforge/dexi-server`, from an empty working folder: npx must
    // find the MCP server among the package's bins (dexi-server, dexi-mcp and the admin CLI dexi).
    const empty = join(installed.dir, "empty");
    mkdirSync(empty);
    const conn = await connectStdio(
      npxSpawn(NAME, ["--db", join(installed.dir, "npx.db")], empty, server.env),
    );
    try {
      expect(conn.client.getServerVersion()).toMatchObject({ name: "dexi" });
      const { tools } = await conn.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(TOOLS);
    } finally {
      await conn.close();
    }
  } finally {
    rmSync(installed.dir, { recursive: true, force: true });
  }
}, 300_000);
