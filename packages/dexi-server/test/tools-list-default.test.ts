/**
 * What the built bin lists by default: tools_list.golden (the full listing, which the reference pages
 * are rendered from, served with --output-schemas) with every outputSchema taken out and nothing
 * else changed, to the v1 SDK client and the v2 client pinned to 2026-07-28 over stdio and HTTP; with
 * --output-schemas or MCP_OUTPUT_SCHEMAS=1, the golden byte for byte. No store is involved, so this
 * runs once, not per store.
 */
import { fileURLToPath } from "node:url";
import { checkDefaultToolsList } from "@mcpforge/toolkit/testing";
import { it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/bin/dexi-mcp.js", import.meta.url));

it("lists the golden without output schemas unless --output-schemas, to the v1 and v2 clients over stdio and HTTP", async () => {
  await checkDefaultToolsList(
    { command: process.execPath, args: [BIN, "--db", ":memory:"] },
    new URL("./tools_list.golden", import.meta.url),
  );
}, 120_000);
