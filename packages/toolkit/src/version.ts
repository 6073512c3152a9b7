import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The version in the package.json nearest above a module: a server passes its own
 * `import.meta.url`, so `serverInfo.version` follows each release (a changeset bump) instead of a
 * literal that nobody updates. Works from `src/` under tests and from `dist/` once built.
 */
export function packageVersion(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (typeof pkg.name === "string" && typeof pkg.version === "string") return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json with a version above ${fileURLToPath(moduleUrl)}`);
    dir = up;
  }
}
