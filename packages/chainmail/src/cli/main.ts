/**
 * chainmail's command line: `daemon`, `secret set` and `accounts probe` run here; every other command
 * is one call to the daemon over its socket (./commands.ts), printed as text or, with --json, as the
 * daemon's JSON.
 */
import { parseArgs } from "node:util";
import { setFlagsFromString } from "node:v8";
import { DaemonClient } from "../client/index.js";
import { REASONS } from "../errors.js";
import { type Home, resolveHome } from "../home.js";
import { isLocalAccounts, runAccountsLocal } from "./accounts.js";
import { AUTH_OPTIONS, AUTH_USAGE, runAuth } from "./auth-commands.js";
import { runSecret } from "./secret-command.js";
import type { Options } from "./command-kit.js";
import { COMMANDS, usage } from "./commands.js";
import fs from "node:fs";
import { exitCodeOf } from "../errors.js";
import type { CheckResult } from "../imap/test-account.js";
import { chainmailVersion } from "../version.js";
import { noConfigText } from "./first-run.js";
import { human, terminalText } from "./human/index.js";
import { ITEM_USAGE } from "./item-command.js";
import { eventLine } from "./watch.js";
import { mcpArgs, runMcp } from "./mcp.js";

export const USAGE = `usage: chainmail [--home DIR] [--socket PATH] [--json] COMMAND ...
       chainmail --version
  (--socket, or CHAINMAIL_SOCKET: the daemon's socket, for a daemon that runs as another OS user)
  daemon                                 run the daemon (stops cleanly on SIGTERM)
  mcp [--http [HOST:]PORT]               run the MCP server on stdio (needs @mcpforge/chainmail-mcp)
  secret set ACCOUNT                     store the account's password (asked without echo, or stdin)
${AUTH_USAGE}
  accounts [list]                        list accounts
  accounts probe ADDRESS [--dns SERVER]... [--offline]
                                         find an address's IMAP/SMTP settings (presets, MX, SRV,
                                         autoconfig, ISPDB) and say where they came from
  accounts add ADDRESS [--name N] [--provider P] [--username U] [--imap-host H] [--imap-port N]
       [--imap-tls T] [--smtp-host H] [--smtp-port N] [--smtp-tls T] [--no-smtp] [--dns S]... [--offline]
                                         probe, ask what is missing (at a terminal) and add the
                                         account to config.toml
  test ACCOUNT                           log in to IMAP and SMTP
  folders [--account A]...               list folders
  folders create ACCOUNT NAME            create a folder (and its parents)
  folders rename ACCOUNT FROM TO         rename a folder
  folders delete ACCOUNT NAME [--force]  delete a folder (policy: allow_delete_folder)
  search [QUERY] [--account A]... [--limit N] [--cursor C] [--count] [--snippets] [--threads] [--source auto|cache|server]
  get REF... [--full]                    read messages (never marks them read)
  thread REF [--full]                    read a thread
  attachment REF PART [--dir DIR]        save an attachment
  raw REF [--dir DIR]                    save the raw message
  move FOLDER REF...  |  copy FOLDER REF...
  archive REF...  |  trash REF...  |  expunge REF... (policy: allow_expunge)
  flags REF... [--add F]... [--remove F]...
  labels REF... [--add L]... [--remove L]...  (Google accounts)
  cache status [--account A]...          the local cache per account and folder
  cache sync [--account A]...            sync the cache now (headers, bodies, eviction) and wait
  cache rebuild [--account A]...         drop the accounts' cache and sync it again (searches go to the
                                         server meanwhile), and wait
  cache evict [--account A] [--before DATE] [--bytes N]
                                         drop cached bodies (never headers), oldest first; their words
                                         stay searchable
  send ACCOUNT --to ADDR... --subject S [--body TEXT] [--text | --html-file F] [--cc A]... [--bcc A]...
       [--attach FILE]... [--inline NAME=FILE]... [--no-signature] [--key K]
  reply REF [--all] [--draft] [--to A]... [--body TEXT] ...   (send's flags but --subject)
  forward REF --to ADDR... [--no-attachments] [--draft] ...   (send's flags but --subject)
  draft create ACCOUNT | draft update REF   (send's flags but --key)
  draft send REF [--key K] | draft delete REF
  send-raw ACCOUNT FILE [--key K]        send a prepared RFC 5322 file as it is (its Bcc removed),
                                         under the account's send policy
  outbox [list] | outbox confirm KEY | outbox release KEY   settle a send whose outcome is unknown
  policy [status] | policy confirm [ACCOUNT] [--digest D]   a wider policy or new server settings wait for this;
                                         confirm runs only in a terminal, where you type back the code it shows
  admin status                           the daemon's version, uptime, accounts (auth, connection, cache,
                                         watch), pending confirmations and sends, config errors, sizes
  audit [--action A] [--since TIME] [--limit N]
  watch [--group G | --cursor N] [--account A]... [--in FOLDER] [--kind K]... [--item ID] [--wait S] [--once]
                                         stream events, one per line, until interrupted
  watch status | watch groups | watch groups delete GROUP
${ITEM_USAGE}`;

/** Flags every command takes, before or after its name. */
const GLOBAL = {
  home: { type: "string" },
  socket: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

/** The command: the first argument that is not a flag or --home's value. */
function commandOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--home" || a === "--socket") i++;
    else if (!a.startsWith("-")) return a;
  }
  return undefined;
}

/** Runs one command line and returns its exit code; a failure throws (the bin prints it). */
export async function main(argv: string[]): Promise<number> {
  const forMcp = mcpArgs(argv);
  if (forMcp) return runMcp(forMcp);
  const cmd = commandOf(argv);
  const local = cmd === undefined ? undefined : COMMANDS[cmd];
  const known = cmd === undefined || local || cmd === "daemon" || cmd === "secret" || cmd === "auth";
  const { values: o, positionals } = parseArgs({
    args: argv,
    options: { ...GLOBAL, ...(cmd === "auth" ? (AUTH_OPTIONS as Options) : local?.options) },
    allowPositionals: true,
    strict: true,
  });
  const g = o as { home?: string; socket?: string; json?: boolean; help?: boolean; version?: boolean };
  if (g.version) {
    process.stdout.write(
      `${g.json ? JSON.stringify({ version: chainmailVersion() }) : `chainmail ${chainmailVersion()}`}\n`,
    );
    return 0;
  }
  // An unknown command is an error even with --help, so that `chainmail X --help` says whether X exists.
  if (!known) usage(`unknown command ${JSON.stringify(cmd)}`);
  if (g.help || cmd === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return g.help ? 0 : REASONS.INVALID_ARGUMENT.exitCode;
  }
  const home = resolveHome(g.home, g.socket ? { ...process.env, CHAINMAIL_SOCKET: g.socket } : process.env);
  const args = positionals.slice(1);
  if (cmd === "daemon") return runDaemon(home);
  if (cmd === "secret") return runSecret(home, args, g.json === true);
  if (cmd === "auth")
    return runAuth(home, o as { browser?: boolean; device?: boolean; open?: boolean }, args, g.json === true);
  if (cmd === "accounts" && isLocalAccounts(args))
    return runAccountsLocal(home, o as Parameters<typeof runAccountsLocal>[1], args, g.json === true);

  const req = local!.request(o, args);
  const client = new DaemonClient({
    socketPath: home.socketPath,
    socketNamed: home.socketNamed,
    client: "cli",
  });
  try {
    if (req.stream) {
      let stopped = false;
      const stop = () => {
        stopped = true;
        client.close();
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      try {
        await req.stream(
          client,
          (e) => process.stdout.write(`${g.json ? JSON.stringify(e) : terminalText(eventLine(e))}\n`),
          () => stopped,
        );
      } catch (err) {
        // An interrupt closes the connection under the waiting read: that ends the stream, not an error.
        if (!stopped) throw err;
      } finally {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
      }
      return 0;
    }
    const result = await req.send(client);
    const context = {
      configFile: home.configFile,
      configExists: fs.existsSync(home.configFile),
      ...(args[0] !== undefined ? { sub: args[0] } : {}),
    };
    process.stdout.write(`${g.json ? JSON.stringify(result) : human(cmd, result, context)}\n`);
    // A batch where some refs failed is a success; its per-ref errors are in the output. A command
    // that answered without doing what it was asked exits with the reason of its first failure.
    return outcomeCode(cmd, args, result);
  } finally {
    client.close();
  }
}

/**
 * The exit code of a result that came back without the call failing: non-zero when the command did
 * not do what it was asked, by the reason of its first failure (the exit-codes table).
 */
export function outcomeCode(cmd: string, args: string[], result: unknown): number {
  const r = result as Record<string, unknown>;
  if (cmd === "test") {
    // The account works only when both logins did (a server that is not configured is skipped).
    const failed = [r["imap"], r["smtp"]].find((c) => {
      const check = c as CheckResult | undefined;
      return check !== undefined && !check.ok && !check.skipped;
    }) as CheckResult | undefined;
    return failed ? exitCodeOf(failed.error?.reason ?? "SERVER_UNAVAILABLE") : 0;
  }
  if (cmd === "folders" && (args[0] ?? "list") === "list") {
    // Listed nothing because every account failed: the listing was not done.
    const accounts = r["accounts"] as unknown[];
    const partial = (r["partial"] ?? []) as Array<{ folder?: string; error: { reason: string } }>;
    const whole = partial.filter((p) => p.folder === undefined);
    if (accounts.length === 0 && whole.length > 0) return exitCodeOf(whole[0]!.error.reason);
  }
  if (cmd === "cache" && Array.isArray(r["accounts"])) {
    // cache sync and rebuild: an account whose pass failed was not synced.
    for (const a of r["accounts"] as Array<Record<string, unknown>>) {
      const pass = (a["sync"] ?? a) as { ok?: boolean; error?: { reason: string } };
      if (pass.ok === false) return exitCodeOf(pass.error?.reason ?? "SERVER_UNAVAILABLE");
    }
  }
  // A send the policy held was saved to Drafts, not sent: the policy's code, as for a refusal.
  if (COMPOSE.has(cmd) && r["status"] === "held") return exitCodeOf("POLICY_DENIED");
  // outbox confirm of a send that is not awaiting a decision changed nothing (release says CONFLICT).
  if (cmd === "outbox" && r["confirmed"] === false) return exitCodeOf("CONFLICT");
  if (cmd === "watch" && args[0] === "groups" && r["deleted"] === false) return exitCodeOf("NOT_FOUND");
  return 0;
}

/** The commands that may send (a draft send included). */
const COMPOSE = new Set(["send", "reply", "forward", "draft", "send-raw"]);

async function runDaemon(home: Home): Promise<number> {
  // The old generation grows by 30% between two collections (V8's default lets it grow up to 4x
  // when it allocates fast, as a first sync does), set before the daemon's heap grows: its RSS is a
  // target of its own. Not `--optimize-for-size`, which holds the heap as low (VmHWM 240 against
  // 265 MB over a first sync of a million) but slows all of the daemon's code: that sync's headers
  // 6,008 -> 8,280 a second, its bodies 12.5 -> 9.2 min, the searches' median 1.73 -> 1.24 ms
  // (BENCHMARKS.md, issue 34). The flag is read at each collection, so setting it here takes.
  if (process.env.CHAINMAIL_HEAP_SMALL !== "0") setFlagsFromString("--heap-growing-percent=30");
  // Loaded only here, so the other commands start without IMAP, MIME and SQLite code.
  const { startDaemon } = await import("../daemon/server.js");
  const daemon = await startDaemon({ home });
  process.stderr.write(`chainmail daemon listening on ${daemon.socketPath}\n`);
  if (!fs.existsSync(home.configFile)) process.stderr.write(`${noConfigText(home.configFile)}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      daemon.stop().then(resolve, resolve);
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  return 0;
}
