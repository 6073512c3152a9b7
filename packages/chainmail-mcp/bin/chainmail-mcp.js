#!/usr/bin/env node
// The bin npm links. It is committed rather than built so that `npm ci` links it before dist/ exists
// (npm skips bins whose file is missing at install time); it runs the built bin.
import { existsSync } from "node:fs";

const bin = new URL("../dist/bin/chainmail-mcp.js", import.meta.url);
if (!existsSync(bin)) {
  process.stderr.write("chainmail-mcp: not built yet; run `npm run build -w @mcpforge/chainmail-mcp`\n");
  process.exit(2);
}
const { run } = await import(bin.href);
run();
