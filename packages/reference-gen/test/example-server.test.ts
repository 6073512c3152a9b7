import { cpSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectFilesGolden } from "./golden.js";
import { NO_OUTPUT_SCHEMAS } from "../src/run.js";
import { cli, EXAMPLE_CLI, ensureKitBuilt, exampleCommand, openGate, readTree, tempDir } from "./helpers.js";

const BASE = "/docs/example/reference";

describe("the kit's example server", () => {
  const tmp = tempDir("example");
  let gate: string;
  let first: string;

  beforeAll(async () => {
    ensureKitBuilt();
    gate = openGate(tmp.path);
    first = join(tmp.path, "first");
    const r = await cli(["--server", exampleCommand(gate), "--out", first, "--base-path", BASE]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
  afterAll(() => tmp.remove());

  it("writes a page per tool, the index, meta.json and mcp-tools.json", () => {
    expect([...readTree(first).keys()]).toEqual([
      "add_note.mdx",
      "archive_all.mdx",
      "connect_mailbag.mdx",
      "fail.mdx",
      "forward_message.mdx",
      "get_note.mdx",
      "index.mdx",
      "list_notes.mdx",
      "mcp-tools.json",
      "meta.json",
      "purge.mdx",
      "read_message.mdx",
    ]);
  });

  it("matches the committed expected pages", async () => {
    await expectFilesGolden(readTree(first), new URL("./expected/", import.meta.url));
  });

  it("is byte-identical from run to run", async () => {
    const second = join(tmp.path, "second");
    const r = await cli(["--server", exampleCommand(gate), "--out", second, "--base-path", BASE]);
    expect(r.code).toBe(0);
    expect(readTree(second)).toEqual(readTree(first));
  }, 120_000);

  it("shows what tools/list says: the gated tool and live annotation follow the server's state", async () => {
    const page = readTree(first);
    expect(page.get("archive_all.mdx")).toContain("| Notes | Destructive | `archive_all` |");
    expect(page.get("read_message.mdx")).toContain(
      '| `from` | `untrusted string` | Yes | The sender\'s address (untrusted) Untrusted: text from outside, wrapped as `{"untrusted": ...}`. |',
    );
    expect(page.get("add_note.mdx")).toContain("Required scope: `example:write`.");
    expect(page.get("fail.mdx")).not.toContain("Required scope");
    const json = JSON.parse(page.get("mcp-tools.json")!);
    expect(json.server).toEqual({ name: "mcpforge-example", version: "0.1.0" });
    expect(json.tools.map((t: { name: string }) => t.name)).toContain("purge");
  });

  it("warns when no tool lists an output schema, and says so on each page instead of a Result table", async () => {
    // The kit's servers leave output schemas out of tools/list unless started with --output-schemas.
    const out = join(tmp.path, "no-output-schemas");
    const r = await cli([
      "--server",
      `node ${EXAMPLE_CLI} --gate-file ${gate}`,
      "--out",
      out,
      "--base-path",
      BASE,
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(NO_OUTPUT_SCHEMAS);
    const pages = readTree(out);
    expect(pages.get("list_notes.mdx")).toContain(
      "The server lists no output schema for this tool: its result is described by the `content` blocks only.",
    );
    expect(pages.get("list_notes.mdx")).not.toContain("| Field | Type | Required | Description |");
    expect(readTree(first).get("list_notes.mdx")).toContain("| Field | Type | Required | Description |");
  }, 120_000);

  describe("--check", () => {
    const run = (out: string, gated = true) =>
      cli([
        "--server",
        exampleCommand(gated ? gate : undefined),
        "--out",
        out,
        "--base-path",
        BASE,
        "--check",
      ]);

    it("passes on fresh output and writes nothing", async () => {
      const before = statSync(join(first, "list_notes.mdx")).mtimeMs;
      const r = await run(first);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/12 files in .* are up to date/);
      expect(statSync(join(first, "list_notes.mdx")).mtimeMs).toBe(before);
    });

    it("fails naming an edited page, a deleted one, and leaves them as they are", async () => {
      const out = join(tmp.path, "edited");
      cpSync(first, out, { recursive: true });
      writeFileSync(
        join(out, "get_note.mdx"),
        `${readFileSync(join(out, "get_note.mdx"), "utf8")}\nedited\n`,
      );
      unlinkSync(join(out, "meta.json"));
      writeFileSync(join(out, "guide.mdx"), "# A hand-written page the generator must ignore\n");
      const r = await run(out);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`stale: ${join(out, "get_note.mdx")}`);
      expect(r.stderr).toContain(`missing: ${join(out, "meta.json")}`);
      expect(r.stderr).not.toContain("guide.mdx");
      expect(r.stderr).toContain("2 files are out of date");
      expect(readFileSync(join(out, "get_note.mdx"), "utf8")).toMatch(/edited\n$/);
      // Regenerating repairs both and leaves the hand-written page alone.
      const w = await cli(["--server", exampleCommand(gate), "--out", out, "--base-path", BASE]);
      expect(w.stdout).toContain("wrote 2 of 12 files");
      const repaired = readTree(out);
      expect(repaired.get("guide.mdx")).toContain("hand-written");
      repaired.delete("guide.mdx");
      expect(repaired).toEqual(readTree(first));
    }, 120_000);

    it("names the page of a tool that is no longer listed as extra, and a write removes it", async () => {
      const out = join(tmp.path, "closed");
      cpSync(first, out, { recursive: true });
      // Without the gate file purging is not allowed: purge disappears and archive_all is no longer destructive.
      const r = await run(out, false);
      expect(r.code).toBe(1);
      const lines = r.stderr.split("\n");
      expect(lines).toContain(`extra: ${join(out, "purge.mdx")} (a generated page no tool needs)`);
      for (const name of ["archive_all.mdx", "index.mdx", "mcp-tools.json", "meta.json"]) {
        expect(lines).toContain(`stale: ${join(out, name)}`);
      }
      const w = await cli(["--server", exampleCommand(), "--out", out, "--base-path", BASE]);
      expect(w.code).toBe(0);
      expect(w.stdout).toContain(`removed ${join(out, "purge.mdx")}`);
      const files = readTree(out);
      expect(files.has("purge.mdx")).toBe(false);
      expect(files.get("archive_all.mdx")).toContain("| Notes | Write | `archive_all` |");
      expect(JSON.parse(files.get("meta.json")!).pages).not.toContain("purge");
    }, 120_000);

    it("reports every file missing when the folder does not exist", async () => {
      const r = await run(join(tmp.path, "nowhere"));
      expect(r.code).toBe(1);
      expect(r.stderr.match(/^missing: /gm)).toHaveLength(12);
    });
  });
});
