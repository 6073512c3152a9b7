/**
 * The install the READMEs and the docs give until the packages are published: `npm pack` of the kit,
 * chainmail and this package from the clone, then `npm install -g` of the tarballs. Run here as
 * written (the pack line is taken from the docs), into a private global prefix, then the installed
 * `chainmail --version` and `chainmail mcp` (the client configs' command) are started from it.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectStdio } from "@mcpforge/toolkit/testing";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const DOCS = [
  "README.md",
  "packages/chainmail/README.md",
  "packages/chainmail-mcp/README.md",
  "packages/toolkit/README.md",
  "apps/docs/content/docs/chainmail/agents-setup.mdx",
];
const PACK =
  "npm pack -w @mcpforge/toolkit -w @mcpforge/chainmail -w @mcpforge/chainmail-mcp --pack-destination ~/chainmail-pack";
const INSTALL = "npm install -g ~/chainmail-pack/mcpforge-*.tgz";

/** npm's settings of the test run (a workspace, the running package) unset, as on a user's machine. */
function npmEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (/^npm_/i.test(k) && k.toLowerCase() !== "npm_config_cache") delete env[k];
  return env;
}

it("every install section gives the same pack and install commands, and none an unpublished package", () => {
  for (const file of DOCS) {
    const text = readFileSync(join(ROOT, file), "utf8");
    expect(text, file).toContain(PACK);
    expect(text, file).toContain(INSTALL);
    // Until publication these fail: qualified ("once published") or gone.
    for (const line of text
      .split("\n")
      .filter((l) => /npx -y @mcpforge\/chainmail|npm install -g @mcpforge\/chainmail/.test(l)))
      expect(line, file).toMatch(/once (the packages are |they are |it is )?published|after publication/i);
  }
});

it("the documented pack and global install give a working chainmail and chainmail mcp", async () => {
  const dir = mkdtempSync(join(tmpdir(), "chainmail-install-"));
  try {
    const packs = join(dir, "chainmail-pack");
    const prefix = join(dir, "prefix");
    mkdirSync(packs);
    const [cmd, ...args] = PACK.replace("~/chainmail-pack", packs).split(" ");
    execFileSync(cmd as string, args, { cwd: ROOT, env: npmEnv(), stdio: "pipe" });
    const tarballs = readdirSync(packs).sort();
    expect(tarballs).toEqual([
      expect.stringMatching(/^mcpforge-chainmail-\d+\.\d+\.\d+\.tgz$/),
      expect.stringMatching(/^mcpforge-chainmail-mcp-\d+\.\d+\.\d+\.tgz$/),
      expect.stringMatching(/^mcpforge-toolkit-\d+\.\d+\.\d+\.tgz$/),
    ]);
    // INSTALL as written, with a private prefix instead of the machine's: the dependencies come from
    // npm's cache where it has them and from the registry otherwise (`npm ci` fetches tarballs by
    // the lockfile's addresses and caches no package documents, so on a fresh machine an install
    // held offline fails for lack of them), and better-sqlite3's native build from this checkout.
    execFileSync(
      "npm",
      [
        "install",
        "-g",
        "--prefix",
        prefix,
        "--prefer-offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        ...tarballs.map((t) => join(packs, t)),
      ],
      { cwd: dir, env: npmEnv(), stdio: "pipe" },
    );
    const modules = join(prefix, "lib", "node_modules");
    const sqlite = join(
      dirname(
        createRequire(join(ROOT, "packages/chainmail/package.json")).resolve("better-sqlite3/package.json"),
      ),
      "build",
    );
    const target = join(modules, "@mcpforge", "chainmail", "node_modules", "better-sqlite3");
    cpSync(sqlite, join(existsSync(target) ? target : join(modules, "better-sqlite3"), "build"), {
      recursive: true,
    });

    const bin = join(prefix, "bin", "chainmail");
    const version = JSON.parse(readFileSync(join(ROOT, "packages/chainmail/package.json"), "utf8")).version;
    const home = join(dir, "home");
    expect(execFileSync(bin, ["--version"], { cwd: dir, encoding: "utf8" }).trim()).toBe(
      `chainmail ${version}`,
    );

    // A client's config: "command": "chainmail", "args": ["mcp"].
    const conn = await connectStdio({ command: bin, args: ["mcp", "--home", home], cwd: dir, env: {} });
    try {
      expect(conn.client.getServerVersion()).toMatchObject({ name: "chainmail" });
      expect((await conn.client.listTools()).tools.map((t) => t.name)).toContain("search");
    } finally {
      await conn.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);
