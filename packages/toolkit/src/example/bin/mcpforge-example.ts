#!/usr/bin/env node
import { COMMON_FLAGS_HELP, parseServerArgs, runServer } from "../../cli.js";
import { packageVersion } from "../../version.js";
import { createExampleServer, stateFromFile } from "../app.js";
import { Notebook, Outbox } from "../domain/notebook.js";
import { EXAMPLE_SCOPES } from "../mcp/server.js";

const HELP = `mcpforge-example: the kit's example MCP server (a small notebook)

Usage: mcpforge-example [--gate-file PATH] [--gate-max-age-ms N] [--outbox PATH] [--scopes a,b] [--http [HOST:]PORT]

  --gate-file PATH      JSON {"allowPurge": true|false} deciding whether "purge" is listed
  --gate-max-age-ms N   re-read the gate file before tools/list once this old (default 60000)
  --outbox PATH         append each message forward_message sends to this file, one JSON line each
                        (default: kept in memory); instances sharing the file send once per approval
  --scopes a,b          scopes granted to the client (default ${EXAMPLE_SCOPES.join(",")})
${COMMON_FLAGS_HELP}

Tool groups: notes, mailbag, diagnostics (--tools list shows their tools).
`;

async function main() {
  const { flags, values } = parseServerArgs(process.argv.slice(2), {
    "gate-file": { type: "string" },
    "gate-max-age-ms": { type: "string" },
    outbox: { type: "string" },
    scopes: { type: "string" },
  });
  if (flags.help) return void process.stdout.write(HELP);
  if (flags.version) return void process.stdout.write(`${packageVersion(import.meta.url)}\n`);
  const gateFile = values["gate-file"];
  const maxAgeMs = values["gate-max-age-ms"] === undefined ? undefined : Number(values["gate-max-age-ms"]);
  if (maxAgeMs !== undefined && !(maxAgeMs >= 0)) fail("--gate-max-age-ms takes milliseconds, 0 or more");
  const scopes = values.scopes === undefined ? [...EXAMPLE_SCOPES] : values.scopes.split(",").filter(Boolean);
  const outbox = values.outbox;
  const kit = createExampleServer({
    ...(gateFile ? { loadState: stateFromFile(gateFile) } : {}),
    ...(outbox ? { notebook: new Notebook(new Outbox(outbox)) } : {}),
    ...(maxAgeMs !== undefined ? { maxAgeMs } : {}),
  });
  await runServer(kit, { flags, caller: { scopes, clientId: "local" } });
}

function fail(message: string): never {
  process.stderr.write(`mcpforge-example: ${message}\n`);
  process.exit(2);
}

main().catch((err: unknown) => fail((err as Error).message));
