#!/usr/bin/env node
// The bin npm links. It is committed rather than built so that `npm ci` links it before dist/ exists
// (npm skips bins whose file is missing at install time); it runs the built server.
import { existsSync } from "node:fs";

const bin = new URL("../dist/bin/notes-status-mcp.js", import.meta.url);
if (!existsSync(bin)) {
  process.stderr.write(
    "notes-status-mcp: not built yet; run `npm run build -w @mcpforge/notes-status-server`\n",
  );
  process.exit(2);
}
await import(bin.href);
