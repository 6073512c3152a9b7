#!/usr/bin/env node
// The bin npm links. It is committed rather than built so that `npm ci` links it before dist/ exists
// (npm skips bins whose file is missing at install time); it runs the built CLI.
import { existsSync } from "node:fs";

const cli = new URL("../dist/bin/dexi.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("dexi: not built yet; run `npm run build -w @mcpforge/dexi-server`\n");
  process.exit(2);
}
await import(cli.href);
