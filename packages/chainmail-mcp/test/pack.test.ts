/**
 * The published shape: `npm pack` the kit, chainmail and this package, install the tarballs from the
 * npm cache into an empty folder (never the repo), and start the server the way the client snippets
 * do, `npx @mcpforge/chainmail-mcp`, from an empty working folder. With no daemon running it still
 * answers initialize and tools/list, and a call fails with DAEMON_UNAVAILABLE.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { connectStdio, packAndInstall, npxSpawn } from "@mcpforge/toolkit/testing";
import { expect, it } from "vitest";

const PKG = fileURLToPath(new URL("..", import.meta.url));
const CHAINMAIL = fileURLToPath(new URL("../../chainmail", import.meta.url));
const KIT = fileURLToPath(new URL("../../toolkit", import.meta.url));
const NAME = "@mcpforge/chainmail-mcp";

it("the packed tarball installs into an empty folder and starts under npx", async () => {
  const installed = await packAndInstall([KIT, CHAINMAIL, PKG], { reuseNativeBuilds: ["better-sqlite3"] });
  try {
    const home = join(installed.dir, "home");
    const empty = join(installed.dir, "empty");
    mkdirSync(empty);
    const conn = await connectStdio(
      npxSpawn(NAME, ["--home", home], empty, { XDG_DATA_HOME: installed.dir }),
    );
    try {
      expect(conn.client.getServerVersion()).toMatchObject({ name: "chainmail" });
      const { tools } = await conn.client.listTools();
      expect(tools).toHaveLength(36);
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["list_accounts", "search", "move"]));
      const r = (await conn.client.callTool({ name: "list_accounts", arguments: {} })) as CallToolResult;
      expect(r.isError).toBe(true);
      const error = (r.structuredContent as { error: { reason: string; message: string } }).error;
      expect(error.reason).toBe("DAEMON_UNAVAILABLE");
      expect(error.message).toContain(join(home, "run", "chainmail.sock"));
    } finally {
      await conn.close();
    }
  } finally {
    rmSync(installed.dir, { recursive: true, force: true });
  }
}, 300_000);
