import { run } from "@mcpforge/reference-gen";
import { describe, expect, it } from "vitest";

// The committed reference pages are what the docs site publishes: they must match the built server
// (with --output-schemas, which the Result sections are rendered from).
describe("the committed reference pages", () => {
  it("are fresh (regenerate with `npm run docs`)", async () => {
    const out: string[] = [];
    const code = await run(
      [
        "--server",
        "node dist/bin/dexi-mcp.js --db :memory: --output-schemas",
        "--out",
        "reference",
        "--base-path",
        "/docs/dexi/reference",
        "--check",
      ],
      { stdout: (s: string) => out.push(s), stderr: (s: string) => out.push(s) },
    );
    expect(code, out.join("")).toBe(0);
  }, 60_000);
});
