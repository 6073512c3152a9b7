import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectStdio } from "./clients.js";

export interface VersionCopyOptions {
  /** The package's folder, where its package.json is. */
  packageDir: string;
  /** The bin to run, relative to the package folder (`bin/dexi-mcp.js`). */
  bin: string;
  args?: string[];
  env?: Record<string, string>;
  /** The version the copy's package.json gets; default "9.9.9-test". */
  version?: string;
}

/**
 * Runs a server's built bin from a copy of its package whose package.json has another version, and
 * returns the `serverInfo.version` a client of each era receives. Every package of this repository
 * is at 0.1.0, so checking a server against its own package.json would pass with "0.1.0" written
 * into it; against the copy, only a version read from package.json passes.
 *
 * The copy (package.json and what its `files` ship) lives under the package's
 * `node_modules/.cache`, so the copy's imports still resolve up the tree to the package's own
 * dependencies and the workspace's, and neither git, Biome nor tsc sees it.
 */
export async function serverVersionOfCopy(
  options: VersionCopyOptions,
): Promise<{ legacy: string | undefined; modern: string | undefined }> {
  const { packageDir, version = "9.9.9-test" } = options;
  const cache = join(packageDir, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  const copy = mkdtempSync(join(cache, "version-copy-"));
  try {
    const pkg = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { files?: string[] };
    writeFileSync(join(copy, "package.json"), JSON.stringify({ ...pkg, version }, null, 2));
    for (const entry of pkg.files ?? ["dist", "bin"]) {
      const from = join(packageDir, entry);
      if (existsSync(from)) cpSync(from, join(copy, entry), { recursive: true });
    }
    const spawn = {
      command: process.execPath,
      args: [join(copy, options.bin), ...(options.args ?? [])],
      ...(options.env ? { env: options.env } : {}),
    };
    const read = async (era: "legacy" | "modern") => {
      const conn = await connectStdio(spawn, { era });
      try {
        return conn.client.getServerVersion()?.version;
      } finally {
        await conn.close();
      }
    };
    return { legacy: await read("legacy"), modern: await read("modern") };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
