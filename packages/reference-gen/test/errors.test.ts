import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateReference } from "../src/generate.js";
import { cli, loadFixture, readTree, staticCommand, tempDir } from "./helpers.js";

describe("reading servers and failing clearly", () => {
  const tmp = tempDir("errors");
  afterAll(() => tmp.remove());

  it("reads every page of a paginated tools/list, from a server not built on the kit", async () => {
    const out = join(tmp.path, "paged");
    const r = await cli(["--server", staticCommand("tricky-tools.json", "--page-size", "3"), "--out", out]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const { tools, server } = loadFixture("tricky-tools.json");
    expect(readTree(out)).toEqual(generateReference(tools, server));
  });

  it("exits 2 naming the command when the server cannot be started", async () => {
    const out = join(tmp.path, "nocmd");
    const r = await cli(["--server", "/nonexistent/mcp-server --flag", "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Could not connect to the server "/nonexistent/mcp-server --flag"');
    expect(r.stderr).toMatch(/ENOENT/);
    expect(existsSync(out)).toBe(false);
  });

  it("exits 2 with the end of the server's stderr when it dies before answering", async () => {
    const r = await cli([
      "--server",
      staticCommand("tricky-tools.json", "--exit"),
      "--out",
      join(tmp.path, "dead"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Could not connect to the server");
    expect(r.stderr).toContain("cannot open the database: permission denied");
  });

  it("exits 2 when tools/list fails", async () => {
    const r = await cli([
      "--server",
      staticCommand("tricky-tools.json", "--fail-list"),
      "--out",
      join(tmp.path, "fail"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Could not read tools/list from the server");
    expect(r.stderr).toContain("the tool registry is broken");
  });

  it("exits 2 when the server never answers within --timeout", async () => {
    const started = Date.now();
    const r = await cli([
      "--server",
      staticCommand("tricky-tools.json", "--silent"),
      "--out",
      join(tmp.path, "silent"),
      "--timeout",
      "1500",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no answer within 1500 ms");
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("--check also exits 2, not 1, when the server cannot be read", async () => {
    const r = await cli([
      "--server",
      staticCommand("tricky-tools.json", "--exit"),
      "--out",
      tmp.path,
      "--check",
    ]);
    expect(r.code).toBe(2);
  });

  it("exits 2 with usage errors, and prints help and version", async () => {
    const bad = await cli(["--out", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("mcp-reference-gen: give exactly one of --server and --url\n");
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--base-path PATH");
    expect((await cli(["--version"])).stdout).toBe("0.1.0\n");
  });
});
