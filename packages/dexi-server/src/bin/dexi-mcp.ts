#!/usr/bin/env node
import { COMMON_FLAGS_HELP, runServer } from "@mcpforge/toolkit";
import { mcpServer, openApp, viewerResolver } from "../app.js";
import { dexiArgs, MCP_OPTIONS, mcpConfig } from "../config.js";
import { seedDemo } from "../demo.js";
import { DEXI_VERSION } from "../mcp/server.js";

const HELP = `dexi-mcp: personal notes over MCP (search, semantic search, tags, folders, review)

Usage: dexi-mcp [--db PATH] [--user NAME] [--scopes notes:read,notes:write] [--folder NAME] [--tag TAG]
                [--time-zone TZ] [--demo]

  --db PATH        the database file (env DEXI_DB; default $XDG_DATA_HOME/dexi/dexi.db)
  --user NAME      whose notes (env DEXI_USER; default "local"); created on first use
  --scopes LIST    granted scopes (env DEXI_SCOPES; default notes:read,notes:write)
  --folder NAME    restrict this connection to one folder (env DEXI_FOLDER)
  --tag TAG        restrict this connection to notes with one tag (env DEXI_TAG)
  --time-zone TZ   the zone of period today/yesterday/week for users who set none with
                   \`dexi settings --time-zone\` (env DEXI_TIME_ZONE; default this machine's)
  --demo           use a demo database (default .../dexi/demo.db) seeded with sample notes
${COMMON_FLAGS_HELP}

Embeddings: DEXI_EMBEDDINGS=use (default, offline) | openai (DEXI_EMBEDDINGS_URL, DEXI_EMBEDDINGS_MODEL,
DEXI_EMBEDDINGS_API_KEY) | hash; or save them with \`dexi settings\`.
`;

async function main() {
  const { flags, values } = dexiArgs(process.argv.slice(2), MCP_OPTIONS);
  if (flags.help) return void process.stdout.write(HELP);
  if (flags.version) return void process.stdout.write(`${DEXI_VERSION}\n`);
  const cfg = mcpConfig(values);
  if (cfg.scopes.length === 0) {
    process.stderr.write("dexi-mcp: the scope list is empty, so every tool call will be refused\n");
  }
  const app = openApp(cfg.db, cfg.timeZone ? { timeZone: cfg.timeZone } : {});
  const viewerOf = viewerResolver(app, cfg);
  if (cfg.demo) {
    const { userId } = viewerOf([]);
    const seeded = await seedDemo(app, userId);
    if (seeded > 0) process.stderr.write(`dexi: seeded ${seeded} demo notes into ${cfg.db}\n`);
  }
  await runServer(mcpServer(app, viewerOf), { flags, caller: { scopes: cfg.scopes, clientId: cfg.user } });
  if (cfg.demo) {
    // Embed the sample notes after the client is connected, so start-up stays fast.
    app.notes
      .backfill()
      .catch((err: unknown) =>
        process.stderr.write(`dexi: demo embeddings failed: ${(err as Error).message}\n`),
      );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`dexi-mcp: ${(err as Error).message}\n`);
  process.exit(2);
});
