import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PackedInstall {
  /** The folder the tarballs were installed into (its node_modules holds them). */
  dir: string;
  /** The path of an installed package's file, e.g. `bin("@mcpforge/dexi-server", "dist/bin/dexi-mcp.js")`. */
  path(pkg: string, file: string): string;
}

export interface PackOptions {
  /**
   * Native dependencies whose compiled `build/` is copied from the workspace instead of compiled again.
   * Installing runs no install scripts (`--ignore-scripts`): compiling better-sqlite3 from source takes
   * minutes on two cores and tests nothing of ours. Same machine, same Node ABI, same files.
   */
  reuseNativeBuilds?: readonly string[];
  /** Where the temp folder goes; default the OS temp dir. */
  parent?: string;
}

/**
 * `npm pack`s the given package folders and installs the tarballs into an empty folder, from the npm
 * cache only (`--offline`, falling back to `--prefer-offline`), as a user's `npm install` would.
 */
export async function packAndInstall(
  packageDirs: readonly string[],
  options: PackOptions = {},
): Promise<PackedInstall> {
  const dir = mkdtempSync(join(options.parent ?? tmpdir(), "mcpforge-pack-"));
  const packs = join(dir, "packs");
  mkdirSync(packs);
  for (const pkg of packageDirs) {
    await run("npm", ["pack", "--silent", "--pack-destination", packs], { cwd: pkg, maxBuffer: 16 << 20 });
  }
  const tarballs = readdirSync(packs).map((f) => join(packs, f));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "pack-test", version: "0.0.0", private: true }),
  );
  const install = ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"];
  try {
    await run("npm", [...install, "--offline", ...tarballs], { cwd: dir, maxBuffer: 16 << 20 });
  } catch {
    await run("npm", [...install, "--prefer-offline", ...tarballs], { cwd: dir, maxBuffer: 16 << 20 });
  }
  const require = createRequire(join(packageDirs[0] ?? process.cwd(), "package.json"));
  for (const name of options.reuseNativeBuilds ?? []) {
    const source = join(dirname(require.resolve(`${name}/package.json`)), "build");
    const target = join(dir, "node_modules", name, "build");
    if (existsSync(source)) cpSync(source, target, { recursive: true });
  }
  return { dir, path: (pkg, file) => join(dir, "node_modules", pkg, file) };
}

/**
 * `npx <pkg> <args>` as a user types it, run from `cwd`: npm itself picks the package's default bin
 * (the only one, or the one named after the package). The npm settings of the test run (a workspace
 * prefix, the package running the tests) are unset, so npm finds the package in the folder it was
 * installed into, as it would on a user's machine; --offline keeps it off the network.
 */
export function npxSpawn(pkg: string, args: string[], cwd: string, env: Record<string, string>) {
  const unset = Object.keys(process.env)
    .filter((k) => /^npm_/i.test(k) && k.toLowerCase() !== "npm_config_cache")
    .flatMap((k) => ["-u", k]);
  return { command: "env", args: [...unset, "npm", "exec", "--offline", "--", pkg, ...args], cwd, env };
}
