#!/usr/bin/env node
// Serves the built site (out/) on http://127.0.0.1:3000, or the port given: `npm run preview -- 8080`.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startStaticServer } from "./static-server.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "out");
if (!existsSync(join(root, "index.html"))) {
  process.stderr.write("No built site in apps/docs/out: run `npm run build -w @mcpforge/docs` first.\n");
  process.exit(1);
}
const port = Number(process.argv[2] ?? process.env.PORT ?? 3000);
const { url } = await startStaticServer({ root, port });
process.stdout.write(`Serving ${root} at ${url}/ (Ctrl+C stops)\n`);
