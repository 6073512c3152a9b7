/**
 * The bin's logic, also what `chainmail mcp` runs: `--home DIR` (or CHAINMAIL_HOME) says where the
 * daemon's socket is, then the kit serves stdio, or Streamable HTTP with --http.
 */
import { DaemonClient, MailError, resolveHome } from "@mcpforge/chainmail";
import { COMMON_FLAGS_HELP, parseCommonFlags, runServer } from "@mcpforge/toolkit";
import { createChainmailMcpServer, VERSION } from "./server.js";

export const HELP = `chainmail-mcp: the MCP server of the chainmail mail daemon (also: chainmail mcp)

Usage: chainmail-mcp [--home DIR] [--http [HOST:]PORT] [--token TOKEN]

  --home DIR          chainmail's home (config, state, socket); default $CHAINMAIL_HOME, else the XDG dirs
  --list-gated-tools  list expunge and delete_folder whatever the policy says (for reference docs);
                      the daemon still refuses them where the policy does
${COMMON_FLAGS_HELP}

The daemon must be running (chainmail daemon); without it the server starts, lists 17 tools and every
call fails with DAEMON_UNAVAILABLE.
`;

const usage = (message: string) => new MailError("INVALID_ARGUMENT", message, "Run chainmail-mcp --help.");

/**
 * CHAINMAIL_MCP_GATE_MAX_AGE_MS shortens the 60 s between policy checks, so a test (or someone
 * watching a policy change take effect) need not wait a minute. Not a user setting: the policy is
 * enforced by the daemon on every call whatever the listing says.
 */
function gateMaxAgeMs(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw usage(`CHAINMAIL_MCP_GATE_MAX_AGE_MS takes milliseconds, 0 or more; got "${value}"`);
  return n;
}

/** Runs the server until the client hangs up. A bad flag is a MailError INVALID_ARGUMENT. */
export async function main(argv: readonly string[]): Promise<void> {
  let flags: ReturnType<typeof parseCommonFlags>;
  try {
    flags = parseCommonFlags(argv);
  } catch (err) {
    throw usage((err as Error).message);
  }
  if (flags.help) return void process.stdout.write(HELP);
  if (flags.version) return void process.stdout.write(`${VERSION}\n`);
  let home: string | undefined;
  let listGatedTools = false;
  for (let i = 0; i < flags.rest.length; i++) {
    const arg = flags.rest[i]!;
    if (arg === "--home") {
      home = flags.rest[++i];
      if (home === undefined || home === "") throw usage("--home needs a directory");
    } else if (arg.startsWith("--home=")) home = arg.slice("--home=".length);
    else if (arg === "--list-gated-tools") listGatedTools = true;
    else throw usage(`unknown argument ${JSON.stringify(arg)}`);
  }
  const client = new DaemonClient({ socketPath: resolveHome(home).socketPath, client: "mcp" });
  const maxAgeMs = gateMaxAgeMs(process.env["CHAINMAIL_MCP_GATE_MAX_AGE_MS"]);
  const kit = createChainmailMcpServer({
    client,
    listGatedTools,
    ...(maxAgeMs !== undefined ? { maxAgeMs } : {}),
  });
  // The kit exits when a stdio client hangs up; the daemon socket is closed first.
  await runServer(kit, { flags, caller: { scopes: [], clientId: "local" }, onClose: () => client.close() });
}
