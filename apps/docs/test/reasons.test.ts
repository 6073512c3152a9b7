// The chainmail reasons page lists every reason the MCP server can return, each with its exit code: the
// seed's tools page sends agents there ("The reasons are those on Exit codes"). No build needed.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chainmailReasons } from "@mcpforge/chainmail-mcp";
import { describe, expect, it } from "vitest";

const PAGE = join(dirname(fileURLToPath(import.meta.url)), "../content/docs/chainmail/exit-codes.mdx");

describe("chainmail's reasons page", () => {
  it("has a row for every reason with its exit code", () => {
    const rows = new Map(
      [...readFileSync(PAGE, "utf8").matchAll(/^\| `([A-Z_]+)` \| (\d+) \|/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    );
    const reasons = chainmailReasons as Record<string, { exitCode?: number }>;
    for (const [name, spec] of Object.entries(reasons)) expect(rows.get(name), name).toBe(spec.exitCode);
    expect([...rows.keys()].sort()).toEqual(Object.keys(reasons).sort());
  });
});
