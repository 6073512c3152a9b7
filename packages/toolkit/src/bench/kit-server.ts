/**
 * The kit's bench server as a bin, written the way every server in this repository writes its
 * entry: stdio by default, `--http HOST:PORT` (token in MCP_HTTP_TOKEN) for Streamable HTTP in both eras.
 */
import { parseCommonFlags, runServer } from "../cli.js";
import { createBenchKit } from "./kit-fixture.js";

await runServer(createBenchKit(), { flags: parseCommonFlags(process.argv.slice(2)), caller: { scopes: [] } });
