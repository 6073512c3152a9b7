import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { connectInMemory } from "../src/testing/clients.js";
import { assertFuzzClean, fuzzTools } from "../src/testing/fuzz.js";
import { expectToolsListGolden, expectToolsListMatchesGolden, lineDiff } from "../src/testing/golden.js";
import { echo, reasons, serverOf, tool, z } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "kit-testing-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  delete process.env["UPDATE_GOLDEN"];
});

describe("the golden check", () => {
  it("writes with UPDATE_GOLDEN=1, passes when equal, fails with a readable diff when not", async () => {
    const path = join(dir, "tools_list.golden");
    const { client, close } = await connectInMemory(serverOf([echo]).kit, { scopes: [] });
    process.env["UPDATE_GOLDEN"] = "1";
    await expectToolsListGolden(client, path);
    delete process.env["UPDATE_GOLDEN"];
    await expectToolsListGolden(client, path);
    writeFileSync(path, readFileSync(path, "utf8").replace('"maxLength": 10', '"maxLength": 11'));
    await expect(expectToolsListGolden(client, path)).rejects.toThrow(
      /- \d+: +"maxLength": 11,\n\+ \d+: +"maxLength": 10,/,
    );
    await close();
  });

  it("fails when the golden file is missing", async () => {
    const { client, close } = await connectInMemory(serverOf([echo]).kit, { scopes: [] });
    await expect(expectToolsListGolden(client, join(dir, "absent.golden"))).rejects.toThrow(
      /UPDATE_GOLDEN=1/,
    );
    await close();
  });

  it("a second era's check ignores key order, not content, and never writes the file", async () => {
    const path = join(dir, "reordered.golden");
    const { client, close } = await connectInMemory(serverOf([echo]).kit, { scopes: [] });
    // The same list with every object's keys reversed: as a client whose parse moves keys would render it.
    const reverse = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reverse)
        : typeof v === "object" && v !== null
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reverse(x)]),
            )
          : v;
    const { tools } = await client.listTools();
    writeFileSync(path, JSON.stringify(reverse(JSON.parse(JSON.stringify(tools))), null, 2));
    await expect(expectToolsListGolden(client, path)).rejects.toThrow(/differs/);
    await expectToolsListMatchesGolden(client, path);
    writeFileSync(path, readFileSync(path, "utf8").replace('"maxLength": 10', '"maxLength": 11'));
    process.env["UPDATE_GOLDEN"] = "1";
    await expect(expectToolsListMatchesGolden(client, path)).rejects.toThrow(
      /- \d+: +"maxLength": 11,?\n\+ \d+: +"maxLength": 10/,
    );
    await expect(expectToolsListMatchesGolden(client, join(dir, "absent.golden"))).rejects.toThrow(/missing/);
    await close();
  });

  it("lineDiff shows only the changed region with context", () => {
    expect(lineDiff("a\nb\nc\nd\ne", "a\nb\nX\nd\ne", 1)).toBe("  2: b\n- 3: c\n+ 3: X\n  4: d");
  });
});

describe("the fuzzer", () => {
  it("reports a tool that crashes on edge input", async () => {
    const fragile = tool({
      name: "fragile",
      title: "Fragile",
      group: "Test",
      description: "Breaks on long text.",
      scope: null,
      input: { text: z.string().describe("Any text") },
      output: { length: z.number() },
      annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
      summary: () => "",
      handler: ({ text }) => {
        if (text.length > 1000) throw new Error("buffer overflow");
        return { length: text.length };
      },
    });
    const { client, close } = await connectInMemory(serverOf([fragile]).kit, { scopes: [] });
    const report = await fuzzTools(client, { reasons: Object.keys(reasons) });
    expect(report.failures.some((f) => f.problem.includes("INTERNAL"))).toBe(true);
    expect(() => assertFuzzClean(report)).toThrow(/fuzz calls failed/);
    await close();
  });

  it("reports a tool that hangs", async () => {
    const slow = tool({
      name: "slow",
      title: "Slow",
      group: "Test",
      description: "Never answers.",
      scope: null,
      input: {},
      output: { ok: z.boolean() },
      annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
      summary: () => "",
      handler: () => new Promise<never>(() => undefined),
    });
    const { client, close } = await connectInMemory(serverOf([slow]).kit, { scopes: [] });
    const report = await fuzzTools(client, { timeoutMs: 50, randomCases: 0 });
    expect(report.failures[0]?.problem).toContain("no answer within 50 ms");
    await close();
  });

  it("passes a sound tool", async () => {
    const { client, close } = await connectInMemory(serverOf([echo]).kit, { scopes: [] });
    const report = await fuzzTools(client, { reasons: Object.keys(reasons) });
    assertFuzzClean(report);
    expect(report.outcomes["ok"]).toBeGreaterThan(0);
    await close();
  });
});
