import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectStdio, packAndInstall, runInspector, npxSpawn } from "@mcpforge/toolkit/testing";
import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "./helpers.js";

const here = fileURLToPath(new URL("..", import.meta.url));
const toolkit = join(here, "..", "toolkit");
const PKG = "@mcpforge/notes-status-server";

describe("the packed tarball", () => {
  it("installs into an empty folder, answers tools/list through the MCP Inspector CLI, and starts under npx", async () => {
    const installed = await packAndInstall([toolkit, here], { reuseNativeBuilds: ["better-sqlite3"] });
    try {
      const env = { XDG_DATA_HOME: installed.dir };
      const bin = installed.path(PKG, "dist/bin/notes-status-mcp.js");
      const { json } = await runInspector(
        { command: process.execPath, args: [bin, "--db", ":memory:"], env },
        ["--method", "tools/list"],
      );
      const names = (json as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort();
      expect(names).toEqual(TOOL_NAMES);

      // The client snippets' `npx -y @mcpforge/notes-status-server`, from an empty working folder.
      const empty = join(installed.dir, "empty");
      mkdirSync(empty);
      const conn = await connectStdio(npxSpawn(PKG, ["--db", ":memory:"], empty, env));
      try {
        expect(conn.client.getServerVersion()).toMatchObject({ name: "notes-status-mcp" });
        const { tools } = await conn.client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
      } finally {
        await conn.close();
      }
    } finally {
      rmSync(installed.dir, { recursive: true, force: true });
    }
  }, 240_000);
});
