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
import { connectStdio, packAndInstall, type StdioSpawn } from "@mcpforge/toolkit/testing";
import { expect, it } from "vitest";

const PKG = fileURLToPath(new URL("..", import.meta.url));
const CHAINMAIL = fileURLToPath(new URL("../../chainmail", import.meta.url));
const KIT = fileURLToPath(new URL("../../toolkit", import.meta.url));
const NAME = "@mcpforge/chainmail-mcp";

/**
 * `npx <pkg> <args>` as a user types it, run from `cwd`: npm itself picks the package's default bin
 * (the only one, or the one named after the package). The npm settings of this test run (a workspace
 * prefix, the package running the tests) are unset, so npm finds the package in the folder it was
 * installed into, as it would on a user's machine; --offline keeps it off the network.
 */
function npx(pkg: string, args: string[], cwd: string, env: Record<string, string>): StdioSpawn {
  const unset = Object.keys(process.env)
    .filter((k) => /^npm_/i.test(k) && k.toLowerCase() !== "npm_config_cache")
    .flatMap((k) => ["-u", k]);
  return { command: "env", args: [...unset, "npm", "exec", "--offline", "--", pkg, ...args], cwd, env };
}

it("the packed tarball installs into an empty folder and starts under npx", async () => {
  const installed = await packAndInstall([KIT, CHAINMAIL, PKG], { reuseNativeBuilds: ["better-sqlite3"] });
  try {
    const home = join(installed.dir, "home");
    const empty = join(installed.dir, "empty");
    mkdirSync(empty);
    const conn = await connectStdio(npx(NAME, ["--home", home], empty, { XDG_DATA_HOME: installed.dir }));
    try {
      expect(conn.client.getServerVersion()).toMatchObject({ name: "chainmail" });
      const { tools } = await conn.client.listTools();
      expect(tools).toHaveLength(17);
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
