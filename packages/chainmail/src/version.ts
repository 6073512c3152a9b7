/** chainmail's version: the one in its package.json, found from wherever the running code sits. */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export function chainmailVersion(moduleUrl: string = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const file = path.join(dir, "package.json");
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "@mcpforge/chainmail" && typeof pkg.version === "string") return pkg.version;
    }
    const up = path.dirname(dir);
    if (up === dir)
      throw new Error(`no package.json of @mcpforge/chainmail above ${fileURLToPath(moduleUrl)}`);
    dir = up;
  }
}
