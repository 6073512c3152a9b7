import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { packAndInstall, runInspector } from "@mcpforge/toolkit/testing";
import { expect, it } from "vitest";

/**
 * The published shape: `npm pack` the kit and this package, install the tarballs from the npm cache
 * into an empty folder (never the repo), and ask the installed bin for tools/list and a create_note
 * through the MCP Inspector CLI.
 */
const PKG = fileURLToPath(new URL("..", import.meta.url));
const KIT = fileURLToPath(new URL("../../toolkit", import.meta.url));

it("the packed tarball installs into an empty folder and answers through the Inspector", async () => {
  const installed = await packAndInstall([KIT, PKG], { reuseNativeBuilds: ["better-sqlite3"] });
  try {
    const server = {
      command: process.execPath,
      args: [installed.path("@mcpforge/dexi-server", "dist/mcp.js"), "--db", join(installed.dir, "pack.db")],
      env: { XDG_DATA_HOME: installed.dir },
    };
    const { json } = await runInspector(server, ["--method", "tools/list"]);
    const names = (json as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toEqual([
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
    ]);
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
  } finally {
    rmSync(installed.dir, { recursive: true, force: true });
  }
}, 300_000);
