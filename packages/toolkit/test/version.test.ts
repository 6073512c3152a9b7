import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { serverVersionOfCopy } from "../src/testing/version-copy.js";
import { packageVersion } from "../src/version.js";

const root = mkdtempSync(join(tmpdir(), "kit-version-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The URL a module at `path` (under the temp root) would have; the file itself need not exist. */
const moduleAt = (...path: string[]) => pathToFileURL(join(root, ...path)).href;

function writeJson(path: string[], value: unknown): void {
  mkdirSync(join(root, ...path.slice(0, -1)), { recursive: true });
  writeFileSync(join(root, ...path), JSON.stringify(value));
}

describe("packageVersion", () => {
  // Versions no package of this repository has, so a hard-coded one cannot pass.
  writeJson(["pkg", "package.json"], { name: "pkg", version: "7.3.1-beta.2" });
  // A package.json without a name (as tsup or a test fixture might leave in dist/) is not the package's.
  writeJson(["pkg", "dist", "package.json"], { type: "module" });
  writeJson(["other", "package.json"], { name: "other", version: "0.0.9" });

  it("reads the version of the package.json nearest above the module, from src/ or dist/", () => {
    expect(packageVersion(moduleAt("pkg", "src", "server.ts"))).toBe("7.3.1-beta.2");
    expect(packageVersion(moduleAt("pkg", "dist", "chunk-x.js"))).toBe("7.3.1-beta.2");
    expect(packageVersion(moduleAt("other", "dist", "bin", "main.js"))).toBe("0.0.9");
  });

  it("names the module when no package.json above it has a version", () => {
    writeJson(["bare", "package.json"], { name: "bare" });
    // Above the temp root lie the system's temp folder and /, which hold no package.json.
    expect(() => packageVersion(moduleAt("bare", "index.js"))).toThrow(
      /no package\.json with a version above/,
    );
  });
});

describe("the example bin's serverInfo.version", () => {
  it("is its package.json's version, in both eras", async () => {
    const packageDir = fileURLToPath(new URL("..", import.meta.url));
    const reported = await serverVersionOfCopy({ packageDir, bin: "bin/mcpforge-example.js" });
    expect(reported).toEqual({ legacy: "9.9.9-test", modern: "9.9.9-test" });
  }, 60_000);
});
