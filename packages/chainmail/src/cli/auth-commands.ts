/**
 * `chainmail auth login|logout|status`: OAuth2 sign-in, run in the CLI's own process (see
 * src/auth/login.ts for why); `status` asks the daemon, which knows how the last logins went.
 */
import { credentialsFor } from "../auth/credentials.js";
import { defaultFlow, signIn, signOut } from "../auth/login.js";
import { DaemonClient } from "../client/index.js";
import { noAccountsLine } from "./first-run.js";
import { terminalText } from "./human/index.js";
import fs from "node:fs";
import Database from "better-sqlite3";
import { type AccountConfig, loadConfig } from "../config.js";
import { EndpointStore } from "../store/endpoints.js";
import { isMailError, MailError } from "../errors.js";
import type { Home } from "../home.js";
import { diffEndpoint, type Endpoint, endpointOf, recordClient, sameEndpoint } from "../policy/endpoints.js";
import { usage } from "./command-kit.js";

export const AUTH_USAGE = `  auth login ACCOUNT [--browser | --device] [--open]
                                         sign in with OAuth2 (--open: also start a browser)
  auth logout ACCOUNT                    revoke the sign-in and delete it
  auth status                            each account's login method and state`;

export const AUTH_OPTIONS = {
  browser: { type: "boolean" },
  device: { type: "boolean" },
  open: { type: "boolean" },
} as const;

interface AuthFlags {
  browser?: boolean;
  device?: boolean;
  open?: boolean;
}

function oauthAccount(home: Home, name: string | undefined): AccountConfig {
  if (!name) usage("auth login and auth logout need ACCOUNT");
  const account = loadConfig(home.configFile).accounts.find((a) => a.name === name);
  if (!account)
    throw new MailError(
      "NOT_FOUND",
      `no account named ${JSON.stringify(name)} in ${home.configFile}`,
      "Add it to config.toml first.",
    );
  if (!account.oauth)
    throw new MailError(
      "INVALID_ARGUMENT",
      `account ${name} signs in with a password, not OAuth2`,
      `Add [accounts.oauth] for it in config.toml, or store its password with \`chainmail secret set ${name}\`.`,
    );
  return account;
}

/**
 * The sign-in sends the code and its PKCE verifier to the token endpoint config.toml names, and
 * logout sends the refresh token to the revocation endpoint: an endpoint the owner has not confirmed
 * yet (anything that can write config.toml could have put it there) is refused, as the daemon would.
 * An account with no confirmed endpoint (never seen, or state.db was lost) is refused too: the owner
 * confirms its settings first (`chainmail policy confirm`), as the daemon requires before any login.
 */
function pendingChange(home: Home, account: AccountConfig): string | undefined {
  const none = "none confirmed yet (a new account, or state.db was missing)";
  if (!fs.existsSync(home.dbFile)) return none;
  let confirmed: Endpoint | null = null;
  const db = new Database(home.dbFile, { readonly: true, fileMustExist: true });
  try {
    const row = new EndpointStore(db).get(account.name);
    confirmed = row ? (JSON.parse(row.confirmed) as Endpoint | null) : null;
  } catch {
    return none; // a state.db from before confirmed endpoints: nothing is confirmed yet
  } finally {
    db.close();
  }
  if (!confirmed) return none;
  const wanted = endpointOf(account);
  // A row from before the client id and scopes were confirmed: the daemon records config.toml's.
  const base = recordClient(confirmed, wanted) ?? confirmed;
  return sameEndpoint(base, wanted) ? undefined : diffEndpoint(base, wanted).join("; ");
}

/** Runs `chainmail auth ...`; prints to stdout (JSON with --json) and returns the exit code. */
export async function runAuth(home: Home, flags: AuthFlags, args: string[], json: boolean): Promise<number> {
  const out = (v: unknown, text: string) => process.stdout.write(`${json ? JSON.stringify(v) : text}\n`);
  const sub = args[0];
  if (sub === "login" && args.length === 2) {
    if (flags.browser && flags.device) usage("give --browser or --device, not both");
    const account = oauthAccount(home, args[1]);
    const pending = pendingChange(home, account);
    if (pending)
      throw new MailError(
        "POLICY_DENIED",
        `the server settings of account ${account.name} in config.toml wait for confirmation: ${pending}`,
        `Check them with \`chainmail policy status\`, run \`chainmail policy confirm ${account.name}\`, then sign in.`,
      );
    const flow = flags.device ? "device" : flags.browser ? "browser" : defaultFlow(account);
    const result = await signIn(account, home.secretsDir, {
      flow,
      // The instructions go to stderr so that --json output stays one JSON line.
      // The provider's prompt is checked where it is read (src/auth/replies.ts); filtered here too,
      // as all of the CLI's output is.
      say: (line) => process.stderr.write(`${terminalText(line)}\n`),
      openBrowser: flags.open === true || process.env["CHAINMAIL_OPEN_BROWSER"] === "1",
    });
    out(result, `signed in ${result.account} (${result.flow}); the daemon uses it from its next login`);
    return 0;
  }
  if (sub === "logout" && args.length === 2) {
    const account = oauthAccount(home, args[1]);
    // With unconfirmed endpoints the token is not sent anywhere: it is only deleted here.
    const r = await signOut(account, home.secretsDir, { revoke: pendingChange(home, account) === undefined });
    out(
      r,
      `${r.deleted ? "signed out" : "was not signed in:"} ${r.account}${r.revoked ? " (revoked at the provider)" : ""}${r.warning ? `; ${r.warning}` : ""}`,
    );
    return 0;
  }
  if (sub === "status" && args.length === 1) {
    const rows = await statusRows(home);
    out(
      { accounts: rows },
      rows.length
        ? rows
            .map((r) => `${r.name}\t${r.auth_method}\t${r.auth}${r.daemon ? "" : " (daemon not running)"}`)
            .join("\n")
        : noAccountsLine(home.configFile),
    );
    return 0;
  }
  usage("usage: chainmail auth login ACCOUNT [--browser|--device] | auth logout ACCOUNT | auth status");
}

interface StatusRow {
  name: string;
  auth_method: string;
  auth: string;
  /** false: the daemon is not running, so the state says only whether something is stored. */
  daemon: boolean;
}

async function statusRows(home: Home): Promise<StatusRow[]> {
  const client = new DaemonClient({
    socketPath: home.socketPath,
    socketNamed: home.socketNamed,
    client: "cli",
  });
  try {
    const { accounts } = await client.listAccounts();
    return accounts.map((a) => ({ name: a.name, auth_method: a.auth_method, auth: a.auth, daemon: true }));
  } catch (err) {
    if (!isMailError(err) || err.reason !== "DAEMON_UNAVAILABLE") throw err;
    const creds = credentialsFor(home.secretsDir);
    return loadConfig(home.configFile).accounts.map((a) => ({
      name: a.name,
      auth_method: creds.method(a),
      auth: creds.state(a),
      daemon: false,
    }));
  } finally {
    client.close();
  }
}
