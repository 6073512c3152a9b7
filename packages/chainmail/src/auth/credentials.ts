/**
 * How the daemon logs in to an account's IMAP and SMTP servers: a stored password, or an OAuth2
 * access token obtained with the stored refresh token. It also keeps the truth about each account's
 * last login (its auth state) for list_accounts.
 *
 * One Credentials per secrets dir per process (`credentialsFor`), so every IMAP connection, sync,
 * IDLE watcher and send of an account shares one access token and one refresh at a time (providers
 * that rotate refresh tokens accept each once: two refreshes at once would burn the grant).
 *
 * The daemon notices a new sign-in (`chainmail auth login`, run by the CLI) or a new password without
 * a restart: each login stats the account's secret file and starts afresh when it changed.
 */
import { execFile } from "node:child_process";
import type { AccountConfig, ServerConfig } from "../config.js";
import { MailError } from "../errors.js";
import { unconfirmedError } from "../policy/endpoints.js";
import { getSecret, secretFile, unreadableSecret } from "../secrets.js";
import { loginHint, oauthClient, oauthErrorOf, refreshGrant } from "./oauth.js";
import { isLoopbackHost } from "./providers.js";
import { fileVersion, grantFile, loadGrant, withGrantLock, writeGrant } from "./store.js";

/** `ok`: the last login succeeded; `missing`: nothing stored; `rejected`: the server refused the
 * password or token; `expired`: the provider refused the refresh token; `unknown`: not tried yet. */
export type AuthState = "ok" | "missing" | "rejected" | "expired" | "unknown";
export const AUTH_STATES: readonly AuthState[] = ["ok", "missing", "rejected", "expired", "unknown"];
export type AuthMethod = "password" | "oauth2";

/** What a server login needs: a password, or an OAuth2 bearer token (XOAUTH2 / OAUTHBEARER). */
export type Login = { user: string; pass: string } | { user: string; accessToken: string };

/** nodemailer's `auth` option for a login. */
export function nodemailerAuth(login: Login) {
  return "accessToken" in login
    ? { type: "OAuth2" as const, user: login.user, accessToken: login.accessToken }
    : { user: login.user, pass: login.pass };
}

interface Access {
  token: string;
  /** Obtained because a server refused the token before it (see accessToken). */
  afterRejection: boolean;
  /** When to refresh rather than use it (before it expires, so no call fails on an expired token). */
  refreshAt: number;
}

interface Entry {
  /** The version of the secret file the state below belongs to. */
  version: string | undefined;
  state: AuthState;
  access: Access | undefined;
  refreshing: Promise<string> | undefined;
  /** password_command's answer, kept for the daemon's life until a server refuses it. */
  password: string | undefined;
  /** The command running now: logins at once wait for one run (one unlock prompt, not several). */
  asking: Promise<string> | undefined;
}

/** Refresh this long before the token's end, at most a fifth of its life (short-lived test tokens). */
const EARLY_MS = 60_000;
/** The longest an access token is used before it is refreshed, whatever its expires_in said. */
const MAX_LIFE_S = 24 * 3600;

export class Credentials {
  private readonly entries = new Map<string, Entry>();
  constructor(
    readonly secretsDir: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  method(account: AccountConfig): AuthMethod {
    return account.oauth ? "oauth2" : "password";
  }

  /** What the account's secret is now: its file's version, or its password command. */
  private version(account: AccountConfig): string | undefined {
    if (account.password_command) return `command:${JSON.stringify(account.password_command)}`;
    const file = account.oauth
      ? grantFile(this.secretsDir, account.name)
      : secretFile(this.secretsDir, account.name);
    try {
      return fileVersion(file);
    } catch (err) {
      throw unreadableSecret(account.name, file, err);
    }
  }

  /** The account's entry, started afresh when its secret (file or command) changed. */
  private entry(account: AccountConfig): Entry {
    const version = this.version(account);
    let e = this.entries.get(account.name);
    if (!e || e.version !== version) {
      e = {
        version,
        state: version === undefined ? "missing" : "unknown",
        access: undefined,
        refreshing: undefined,
        password: undefined,
        asking: undefined,
      };
      this.entries.set(account.name, e);
    }
    return e;
  }

  /**
   * An object that stays the same while the account's secret does: a connection logged in under
   * another one is stale (a sign-out, a new sign-in or password), and the pool replaces it.
   */
  generation(account: AccountConfig): object {
    return this.entry(account);
  }

  /**
   * What is known of the account's sign-in. A stored secret that cannot be read is "unknown" here,
   * so a list of accounts still answers; a login (test_account, any call) says what is wrong.
   */
  state(account: AccountConfig): AuthState {
    try {
      return this.entry(account).state;
    } catch {
      return "unknown";
    }
  }

  /** Records the outcome of a login with what `login` gave. */
  note(account: AccountConfig, outcome: "ok" | "rejected"): void {
    const e = this.entry(account);
    if (e.version !== undefined) e.state = outcome;
    // The token works: a later refusal of it is news, worth one refresh again.
    if (outcome === "ok" && e.access) e.access.afterRejection = false;
    // A refused password from a command is asked for again at the next login (it may have changed).
    if (outcome === "rejected") e.password = undefined;
  }

  /** Forgets an account's access token and state (its connection settings changed in config.toml). */
  forget(name: string): void {
    this.entries.delete(name);
  }

  /**
   * The credentials for a login to `server`. `rejected`: the access token the server just refused;
   * a fresh one is obtained unless another login already replaced it.
   */
  async login(account: AccountConfig, server: ServerConfig, rejected?: string): Promise<Login> {
    // The one place a credential is handed out: nothing (password, command, token) for a server the
    // owner has not confirmed, and every caller logs in before it connects.
    if (account.endpoint_unconfirmed) throw unconfirmedError(account.name);
    if (account.password_command)
      return { user: account.username, pass: await this.commandPassword(account) };
    if (!account.oauth) {
      const pass = getSecret(this.secretsDir, account.name);
      if (pass === undefined)
        throw new MailError(
          "AUTH_REQUIRED",
          `no password is stored for account ${account.name}`,
          `The user runs \`chainmail secret set ${account.name}\`.`,
        );
      return { user: account.username, pass };
    }
    // config/validate.ts refuses this already; checked again where the token is handed out.
    if (server.tls === "none" && !isLoopbackHost(server.host))
      throw new MailError(
        "CONFIG_INVALID",
        `account ${account.name} would send its OAuth2 token to ${server.host} without TLS`,
      );
    return { user: account.username, accessToken: await this.accessToken(account, rejected) };
  }

  private async commandPassword(account: AccountConfig): Promise<string> {
    const e = this.entry(account);
    if (e.password !== undefined) return e.password;
    const argv = account.password_command!;
    try {
      e.asking ??= runPasswordCommand(argv).finally(() => {
        e.asking = undefined;
      });
      e.password = await e.asking;
      return e.password;
    } catch (err) {
      e.state = "missing";
      throw new MailError(
        "AUTH_REQUIRED",
        `the password_command of account ${account.name} (${argv.join(" ")}) ${(err as Error).message}`,
        `The user checks that \`${argv.join(" ")}\` prints the password on its first line (e.g. that the password store is unlocked), or fixes password_command in config.toml.`,
      );
    }
  }

  private async accessToken(account: AccountConfig, rejected?: string): Promise<string> {
    const e = this.entry(account);
    if (e.version === undefined)
      throw new MailError(
        "AUTH_REQUIRED",
        `account ${account.name} is not signed in (no OAuth2 grant is stored)`,
        loginHint(account.name),
      );
    if (e.state === "expired")
      throw new MailError(
        "AUTH_REQUIRED",
        `the OAuth2 sign-in of account ${account.name} has expired or was revoked`,
        loginHint(account.name),
      );
    const a = e.access;
    if (rejected !== undefined && a?.token === rejected && a.afterRejection) {
      // A token refreshed because a server refused the one before was refused too: refreshing
      // again would only ask the provider for more of the same (a watcher retries every 30 s).
      e.state = "rejected";
      throw new MailError(
        "AUTH_REQUIRED",
        `the mail server of account ${account.name} refused its OAuth2 token, also a freshly refreshed one`,
        `${loginHint(account.name)} If that does not help, check that the account may use IMAP and SMTP with OAuth2 (the provider's settings, the scopes).`,
      );
    }
    if (a && a.token !== rejected && Date.now() < a.refreshAt) return a.token;
    // One refresh per account at a time: later callers wait for the one running.
    if (!e.refreshing) {
      e.refreshing = this.refresh(account, e, rejected !== undefined).finally(() => {
        e.refreshing = undefined;
      });
    }
    return e.refreshing;
  }

  /**
   * Refreshes under the account's grant lock (./store.ts), so that another process sharing the
   * secrets dir never presents the same rotating refresh token: the grant is read once the lock is
   * held, and its successor stored before the lock is let go. A grant file that changed since this
   * entry was made (a new sign-in, another process's rotation, while this one waited for the lock)
   * starts the account afresh: a new entry, so connections logged in under the old grant are stale.
   */
  private async refresh(account: AccountConfig, e: Entry, afterRejection: boolean): Promise<string> {
    const tokens = await withGrantLock(this.secretsDir, account.name, async () => {
      const file = grantFile(this.secretsDir, account.name);
      const grant = loadGrant(this.secretsDir, account.name);
      if (!grant) {
        e.state = "missing";
        throw new MailError(
          "AUTH_REQUIRED",
          `account ${account.name} is not signed in (no OAuth2 grant is stored)`,
          loginHint(account.name),
        );
      }
      if (fileVersion(file) !== e.version) return undefined;
      const tokens = await this.refreshed(account, e, grant.refresh_token);
      if (tokens.refresh_token && tokens.refresh_token !== grant.refresh_token) {
        // Rotated: stored before the new access token is used, and before the lock is let go.
        writeGrant(this.secretsDir, account.name, {
          refresh_token: tokens.refresh_token,
          scope: tokens.scope ?? grant.scope,
        });
        e.version = fileVersion(file);
        this.entries.set(account.name, e);
      }
      return tokens;
    });
    if (!tokens) return this.accessToken(account);
    // Kept below a day whatever the provider says, so no reply keeps a token from being refreshed.
    const lifeMs = Math.min(tokens.expires_in ?? 3600, MAX_LIFE_S) * 1000;
    e.access = {
      afterRejection,
      token: tokens.access_token,
      refreshAt: Date.now() + lifeMs - Math.min(EARLY_MS, lifeMs / 5),
    };
    return tokens.access_token;
  }

  /** The provider's answer to a refresh token, or the AUTH_REQUIRED / SERVER_UNAVAILABLE it comes to. */
  private async refreshed(account: AccountConfig, e: Entry, refreshToken: string) {
    try {
      return await refreshGrant(oauthClient(account, this.env), refreshToken);
    } catch (err) {
      const oe = oauthErrorOf(err);
      if (oe?.error === "invalid_grant") {
        // Revoked, expired or already used: asking again would only be refused again.
        e.state = "expired";
        e.access = undefined;
        throw new MailError(
          "AUTH_REQUIRED",
          `the OAuth2 sign-in of account ${account.name} has expired or was revoked (the provider refused its refresh token)`,
          loginHint(account.name),
          oe.detail,
        );
      }
      if (oe)
        throw new MailError(
          "AUTH_REQUIRED",
          `the OAuth2 provider of account ${account.name} refused to refresh its token (${oe.said})`,
          loginHint(account.name),
          oe.detail,
        );
      throw err; // SERVER_UNAVAILABLE from oauth.ts, saying what went wrong
    }
  }

  /**
   * Runs `fn` with the account's login. When the server refuses an OAuth2 token (`refused(err)`),
   * the token is refreshed and `fn` runs once more; a second refusal is AUTH_REQUIRED, never a loop.
   * The outcome sets the account's auth state. A refused password is rethrown for the caller to map.
   */
  async withLogin<T>(
    account: AccountConfig,
    server: ServerConfig,
    what: string,
    refused: (err: unknown) => boolean,
    fn: (login: Login) => Promise<T>,
  ): Promise<T> {
    const login = await this.login(account, server);
    try {
      const result = await fn(login);
      this.note(account, "ok");
      return result;
    } catch (err) {
      if (!refused(err)) throw err;
      if (!("accessToken" in login)) {
        this.note(account, "rejected");
        throw err;
      }
    }
    const again = await this.login(account, server, login.accessToken);
    try {
      const result = await fn(again);
      this.note(account, "ok");
      return result;
    } catch (err) {
      if (!refused(err)) throw err;
      this.note(account, "rejected");
      throw new MailError(
        "AUTH_REQUIRED",
        `the ${what} server of account ${account.name} refused its OAuth2 token, also a freshly refreshed one`,
        `${loginHint(account.name)} If that does not help, check that the account may use ${what} with OAuth2 (the provider's settings, the scopes).`,
      );
    }
  }
}

/**
 * Runs a password command without a shell and gives the first line of its output. The error's
 * message says how it failed; it never holds the output (it may be a secret) nor stderr.
 */
export function runPasswordCommand(argv: string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      argv[0]!,
      argv.slice(1),
      { shell: false, timeout: timeoutMs, maxBuffer: 64 * 1024, encoding: "utf8", windowsHide: true },
      (err, stdout) => {
        if (err) {
          const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: unknown };
          if (e.code === "ENOENT") return reject(new Error("could not be started: no such program"));
          if (e.killed) return reject(new Error(`did not finish within ${timeoutMs / 1000} s`));
          return reject(new Error(`failed (exit code ${typeof e.code === "number" ? e.code : "unknown"})`));
        }
        const first = stdout.split(/\r?\n/)[0] ?? "";
        if (first.length === 0) return reject(new Error("printed no password (its first line is empty)"));
        resolve(first);
      },
    );
  });
}

const registry = new Map<string, Credentials>();

/** The process's Credentials for a secrets dir (one token cache and one refresh per account). */
export function credentialsFor(secretsDir: string): Credentials {
  let c = registry.get(secretsDir);
  if (!c) {
    c = new Credentials(secretsDir);
    registry.set(secretsDir, c);
  }
  return c;
}

/** Drops a secrets dir's in-memory tokens (a daemon that stops: its access tokens go with it). */
export function releaseCredentials(secretsDir: string): void {
  registry.delete(secretsDir);
}
