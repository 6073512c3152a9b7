#!/usr/bin/env node
/**
 * The chainmail-mcp bin: reads argv, prints help or the version, and starts the app. The committed
 * stub bin/chainmail-mcp.js calls `run`; `chainmail mcp` calls `main` (exported from the package,
 * which is why this module runs nothing when imported).
 */
import { exitCodeOf, isMailError, MailError } from "@mcpforge/chainmail";
import { COMMON_FLAGS_HELP, FlagError, parseServerArgs } from "@mcpforge/toolkit";
import { startApp } from "../app.js";
import { chainmailTools, VERSION } from "../mcp/server.js";

/** The tools listed whatever the policy says: every tool but the gated expunge and delete_folder. */
const UNGATED_TOOLS = chainmailTools.filter((t) => t.visibleWhen === undefined).length;

export const HELP = `chainmail-mcp: the MCP server of the chainmail mail daemon (also: chainmail mcp)

Usage: chainmail-mcp [--home DIR] [--socket PATH] [--tools GROUP,...] [--read-only] [--output-schemas] [--http [HOST:]PORT] [--token-file PATH]

  --home DIR          chainmail's home (config, state, socket); default $CHAINMAIL_HOME, else the XDG dirs
  --socket PATH       the daemon's socket; default $CHAINMAIL_SOCKET, else the home's (for a daemon
                      that runs as its own OS user, with [daemon] socket_group)
  --list-gated-tools  list expunge and delete_folder whatever the policy says (for reference docs);
                      the daemon still refuses them where the policy does
${COMMON_FLAGS_HELP}

Tool groups: accounts-and-folders, reading, files, organizing, events-and-the-cache, work-items,
sending-and-drafts (--tools list shows their tools; expunge and delete_folder stay listed only while
the policy allows them, whatever the groups).

The daemon must be running (chainmail daemon); without it the server starts, lists the ${UNGATED_TOOLS}
tools that are not gated and every call fails with DAEMON_UNAVAILABLE.
`;

const OPTIONS = {
  home: { type: "string" },
  socket: { type: "string" },
  "list-gated-tools": { type: "boolean" },
} as const;

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
  let parsed: ReturnType<typeof parseServerArgs<typeof OPTIONS>>;
  try {
    parsed = parseServerArgs(argv, OPTIONS);
  } catch (err) {
    throw usage((err as Error).message);
  }
  const { flags, values } = parsed;
  if (flags.help) return void process.stdout.write(HELP);
  if (flags.version) return void process.stdout.write(`${VERSION}\n`);
  if (values.home === "") throw usage("--home needs a directory");
  if (values.socket === "") throw usage("--socket needs a path");
  try {
    await startApp({
      flags,
      home: values.home,
      socket: values.socket,
      listGatedTools: values["list-gated-tools"] === true,
      gateMaxAgeMs: gateMaxAgeMs(process.env["CHAINMAIL_MCP_GATE_MAX_AGE_MS"]),
    });
  } catch (err) {
    // The kit refuses a tool group no tool has, or an unreadable MCP_TOOLS / MCP_READ_ONLY /
    // MCP_OUTPUT_SCHEMAS, at start.
    if (err instanceof FlagError) throw usage(err.message);
    throw err;
  }
}

/** `main` on this process's argv; a failure goes to stderr with the reason's exit code. */
export function run(argv: readonly string[] = process.argv.slice(2)): void {
  main(argv).catch((err: unknown) => {
    const reason = isMailError(err) ? err.reason : "INTERNAL";
    const hint = isMailError(err) ? `\nhint: ${err.hint}` : "";
    process.stderr.write(`chainmail-mcp: ${reason}: ${(err as Error).message}${hint}\n`);
    process.exit(exitCodeOf(reason));
  });
}
