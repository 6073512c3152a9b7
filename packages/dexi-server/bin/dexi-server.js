#!/usr/bin/env node
// The bin named after the package, so that `npx @mcpforge/dexi-server` starts the MCP server: with
// more than one bin, npx runs the one named after the package. It is the same server as dexi-mcp.
// Committed rather than built so that `npm ci` links it before dist/ exists (npm skips bins whose
// file is missing at install time).
import { existsSync } from "node:fs";

const cli = new URL("../dist/bin/dexi-mcp.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("dexi-server: not built yet; run `npm run build -w @mcpforge/dexi-server`\n");
  process.exit(2);
}
await import(cli.href);
