#!/usr/bin/env node
// The bin named after the package, so that `npx @mcpforge/notes-status-server` keeps starting the
// server however many bins the package has (npx runs the only bin, else the one named after the
// package). It is the same server as notes-status-mcp. Committed rather than built so that `npm ci`
// links it before dist/ exists (npm skips bins whose file is missing at install time).
import { existsSync } from "node:fs";

const bin = new URL("../dist/bin/notes-status-mcp.js", import.meta.url);
if (!existsSync(bin)) {
  process.stderr.write(
    "notes-status-server: not built yet; run `npm run build -w @mcpforge/notes-status-server`\n",
  );
  process.exit(2);
}
await import(bin.href);
