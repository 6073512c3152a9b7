import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serverVersionOfCopy } from "@mcpforge/toolkit/testing";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "dexi-version-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// SQLite whatever store the suite runs on: the version does not depend on it.
describe("the dexi bin's serverInfo.version", () => {
  it("is its package.json's version, in both eras", async () => {
    const reported = await serverVersionOfCopy({
      packageDir: fileURLToPath(new URL("..", import.meta.url)),
      bin: "bin/dexi-mcp.js",
      args: ["--db", join(dir, "data.db"), "--user", "ann"],
      env: { DEXI_EMBEDDINGS: "hash" },
    });
    expect(reported).toEqual({ legacy: "9.9.9-test", modern: "9.9.9-test" });
  }, 60_000);
});
