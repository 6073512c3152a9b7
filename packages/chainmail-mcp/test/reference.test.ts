import { run } from "@mcpforge/reference-gen";
import { describe, expect, it } from "vitest";

// The committed reference pages are what the docs site publishes: they must match the built server
// (all 38 tools, so the gated two are listed with --list-gated-tools; no daemon is needed; with
// --output-schemas, which the Result sections are rendered from).
describe("the committed reference pages", () => {
  it("are fresh (regenerate with `npm run docs`)", async () => {
    const out: string[] = [];
    const code = await run(
      [
        "--server",
        "node bin/chainmail-mcp.js --home /nonexistent/chainmail-reference --list-gated-tools --output-schemas",
        "--out",
        "reference",
        "--base-path",
        "/docs/chainmail/reference",
        "--check",
      ],
      { stdout: (s: string) => out.push(s), stderr: (s: string) => out.push(s) },
    );
    expect(out.join(""), out.join("")).not.toMatch(/stale|missing|extra/i);
    expect(code).toBe(0);
  }, 60_000);
});
