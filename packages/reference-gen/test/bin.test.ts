import { execFile, execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_CLI, ensureKitBuilt, PACKAGE_DIR, tempDir } from "./helpers.js";

const BUILT = join(PACKAGE_DIR, "dist", "cli.js");
/** What npm links as `mcp-reference-gen`: a committed stub that runs the built CLI. */
const BIN = join(PACKAGE_DIR, "bin", "mcp-reference-gen.js");

/** The newest modification time under src/, to tell whether dist is older than the code. */
function newestSource(dir = join(PACKAGE_DIR, "src")): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function runBin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, args, { timeout: 90_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("the built bin", () => {
  const tmp = tempDir("bin");
  beforeAll(() => {
    ensureKitBuilt();
    // turbo builds before testing; a direct `vitest run` after editing src rebuilds here.
    if (!existsSync(BUILT) || statSync(BUILT).mtimeMs < newestSource()) {
      execFileSync("npm", ["run", "build"], { cwd: PACKAGE_DIR, stdio: "ignore" });
    }
  }, 240_000);
  afterAll(() => tmp.remove());

  it("is an executable node script, and so is the built CLI it runs", () => {
    for (const file of [BIN, BUILT]) {
      expect(readFileSync(file, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
      expect(statSync(file).mode & 0o111).not.toBe(0);
    }
    const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8"));
    expect(join(PACKAGE_DIR, pkg.bin["mcp-reference-gen"])).toBe(BIN);
  });

  it("writes the reference, then --check exits 0, and 1 once a page is gone", async () => {
    const out = join(tmp.path, "ref");
    const server = `node ${EXAMPLE_CLI} --output-schemas`;
    const write = await runBin(["--server", server, "--out", out]);
    expect(write.stderr).toBe("");
    expect(write.code).toBe(0);
    expect(existsSync(join(out, "list_notes.mdx"))).toBe(true);
    expect((await runBin(["--server", server, "--out", out, "--check"])).code).toBe(0);
    unlinkSync(join(out, "list_notes.mdx"));
    const check = await runBin(["--server", server, "--out", out, "--check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(`missing: ${join(out, "list_notes.mdx")}`);
  }, 120_000);

  it("exits 2 on a usage error", async () => {
    const r = await runBin(["--server", "node x.js"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--out DIR is required");
  });
});
