import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serverVersionOfCopy } from "@mcpforge/toolkit/testing";
import { afterAll, describe, expect, it } from "vitest";

// An empty home: with no daemon the server still starts and answers (see nodaemon.test.ts).
const home = mkdtempSync(join(tmpdir(), "chainmail-mcp-version-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("the chainmail-mcp bin's serverInfo.version", () => {
  it("is its package.json's version, in both eras", async () => {
    const reported = await serverVersionOfCopy({
      packageDir: fileURLToPath(new URL("..", import.meta.url)),
      bin: "bin/chainmail-mcp.js",
      args: ["--home", home],
    });
    expect(reported).toEqual({ legacy: "9.9.9-test", modern: "9.9.9-test" });
  }, 60_000);
});
