#!/usr/bin/env node
import { COMMON_FLAGS_HELP, parseCommonFlags, runServer } from "../cli.js";
import { packageVersion } from "../version.js";
import { createExampleServer, EXAMPLE_SCOPES, stateFromFile } from "./server.js";

const HELP = `mcpforge-example: the kit's example MCP server (a small notebook)

Usage: mcpforge-example [--gate-file PATH] [--gate-max-age-ms N] [--scopes a,b] [--http [HOST:]PORT]

  --gate-file PATH      JSON {"allowPurge": true|false} deciding whether "purge" is listed
  --gate-max-age-ms N   re-read the gate file before tools/list once this old (default 60000)
  --scopes a,b          scopes granted to the client (default ${EXAMPLE_SCOPES.join(",")})
${COMMON_FLAGS_HELP}
`;

async function main() {
  const flags = parseCommonFlags(process.argv.slice(2));
  if (flags.help) return void process.stdout.write(HELP);
  if (flags.version) return void process.stdout.write(`${packageVersion(import.meta.url)}\n`);
  let gateFile: string | undefined;
  let maxAgeMs: number | undefined;
  let scopes: string[] = [...EXAMPLE_SCOPES];
  for (let i = 0; i < flags.rest.length; i++) {
    const arg = flags.rest[i];
    const next = () => flags.rest[++i] ?? fail(`${arg} needs a value`);
    if (arg === "--gate-file") gateFile = next();
    else if (arg === "--gate-max-age-ms") maxAgeMs = Number(next());
    else if (arg === "--scopes") scopes = next().split(",").filter(Boolean);
    else fail(`unknown flag ${arg}; see --help`);
  }
  const kit = createExampleServer({
    ...(gateFile ? { loadState: stateFromFile(gateFile) } : {}),
    ...(maxAgeMs !== undefined ? { maxAgeMs } : {}),
  });
  await runServer(kit, { flags, caller: { scopes, clientId: "local" } });
}

function fail(message: string): never {
  process.stderr.write(`mcpforge-example: ${message}\n`);
  process.exit(2);
}

main().catch((err: unknown) => fail((err as Error).message));
