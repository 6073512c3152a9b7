#!/usr/bin/env node
import { createServer } from "node:net";
import { COMMON_FLAGS_HELP, printToolGroups, runServer } from "@mcpforge/toolkit";
import { ClientDocuments } from "../auth/documents.js";
import { mcpServer, oauthMcpServer, oauthSetup, describeStore, openAppAt, viewerResolver } from "../app.js";
import { dexiArgs, MCP_OPTIONS, mcpConfig } from "../config.js";
import { seedDemo } from "../demo.js";
import { DEXI_VERSION } from "../mcp/server.js";
import { dexiTools } from "../mcp/tools/index.js";
import { vectorsInUse } from "../store/index.js";

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

Tool groups: read, write, review (--tools list shows their tools).

Over --http without a token (--token-file or MCP_HTTP_TOKEN) and without --demo, Dexi is its own OAuth 2.1 server: people sign in
(accounts from \`dexi users add NAME --password-stdin\`) and consent in the browser, and each connection's
user, scopes and folder/tag come from its consent (--user, --scopes, --folder and --tag are not used).
  --public-url URL  the https origin clients reach this server at, behind a TLS reverse proxy
                    (env DEXI_PUBLIC_URL; default http://HOST:PORT of --http)
  --trust-proxy     take a client's address from X-Forwarded-For (sign-in rate limits), behind a proxy

Embeddings: DEXI_EMBEDDINGS=use (default, offline) | openai (DEXI_EMBEDDINGS_URL, DEXI_EMBEDDINGS_MODEL,
DEXI_EMBEDDINGS_API_KEY) | hash; or save them with \`dexi settings\`.
On PostgreSQL with pgvector, DEXI_HNSW_THRESHOLD=N searches a model's vectors through an HNSW index once
it holds N of them (default: exact search always), building it with up to DEXI_HNSW_BUILD_MEMORY MB
of maintenance_work_mem (default 1024; 0: the server's setting); stderr names the vector search in
use at start-up.
`;

async function main() {
  const { flags, values } = dexiArgs(process.argv.slice(2), MCP_OPTIONS);
  if (flags.help) return void process.stdout.write(HELP);
  if (flags.version) return void process.stdout.write(`${DEXI_VERSION}\n`);
  // Before anything is opened: listing the groups creates no database.
  if (flags.tools === "list") return printToolGroups(dexiTools);
  const cfg = mcpConfig(values);
  if (cfg.scopes.length === 0) {
    process.stderr.write("dexi-mcp: the scope list is empty, so every tool call will be refused\n");
  }
  const app = await openAppAt(cfg.db, cfg.timeZone ? { timeZone: cfg.timeZone } : {});
  // SQLite says nothing (the default); a shared database names itself, without its password.
  if (app.store.kind === "postgres") {
    process.stderr.write(`dexi: store ${describeStore(cfg.db)}\n`);
    process.stderr.write(`dexi: vectors: ${vectorsInUse(app.store)}\n`);
  }
  const viewerOf = viewerResolver(app, cfg);
  if (cfg.demo) {
    const { userId } = await viewerOf([]);
    const seeded = await seedDemo(app, userId);
    if (seeded > 0) process.stderr.write(`dexi: seeded ${seeded} demo notes into ${cfg.db}\n`);
  }
  // --demo keeps the printed static token: a try-out database has no accounts to sign in with.
  const oauth = flags.http && !cfg.demo && flags.token === undefined && !process.env["MCP_HTTP_TOKEN"];
  if (flags.http && oauth) {
    // The issuer is fixed before listening (it is in the metadata and every token), so port 0 is
    // resolved to a free port first.
    const port = flags.http.port || (await freePort(flags.http.host));
    const shown = flags.http.host.includes(":") ? `[${flags.http.host}]` : flags.http.host;
    const issuer = cfg.publicUrl ?? `http://${shown}:${port}`;
    const setup = oauthSetup(app, {
      issuer,
      documents: new ClientDocuments(),
      ...(cfg.trustProxy ? { trustProxy: true } : {}),
    });
    setInterval(() => {
      setup.auth
        .purge()
        .catch((err: unknown) =>
          process.stderr.write(`dexi: purging expired tokens failed: ${(err as Error).message}\n`),
        );
    }, 60 * 60_000).unref();
    await runServer(oauthMcpServer(app), {
      flags: { ...flags, http: { host: flags.http.host, port } },
      caller: { scopes: [] },
      verifier: setup.verifier,
      http: {
        routes: setup.routes,
        scopeChallenge: true,
        resourceMetadataUrl: setup.resourceMetadataUrl,
        ...(cfg.publicUrl ? { allowedHosts: [new URL(cfg.publicUrl).hostname] } : {}),
      },
    });
    process.stderr.write(`dexi: OAuth issuer ${issuer}; connected apps at ${issuer}/apps\n`);
  } else {
    await runServer(mcpServer(app, viewerOf), { flags, caller: { scopes: cfg.scopes, clientId: cfg.user } });
  }
  if (cfg.demo) {
    // Embed the sample notes after the client is connected, so start-up stays fast.
    app.notes
      .backfill()
      .catch((err: unknown) =>
        process.stderr.write(`dexi: demo embeddings failed: ${(err as Error).message}\n`),
      );
  }
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`dexi-mcp: ${(err as Error).message}\n`);
  process.exit(2);
});
