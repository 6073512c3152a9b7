/**
 * IMAP connections, one per account, reused across calls and reopened when the server dropped them.
 * Calls on one account run one at a time (IMAP has one selected mailbox per connection); accounts run
 * in parallel. `openImap` gives a dedicated connection to code that needs its own (sync, IDLE).
 */
import { ImapFlow } from "imapflow";
import { credentialsFor, type Login } from "../auth/credentials.js";
import type { AccountConfig } from "../config.js";
import { isMailError, MailError } from "../errors.js";
import { certificateError, tlsOptions } from "../tls.js";
import { isServerRefusal, refusalOf } from "./refusal.js";

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "GREETING_TIMEOUT",
  "UPGRADE_TIMEOUT",
  "ETIMEOUT",
  "NoConnection",
  "EConnectionClosed",
  "ClosedAfterConnectText",
  "ClosedAfterConnectTLS",
]);

/** An error the JavaScript engine raises for faulty code, never one of a server's answers. */
const codeFault = (err: unknown) =>
  err instanceof TypeError ||
  err instanceof RangeError ||
  err instanceof ReferenceError ||
  err instanceof SyntaxError;

/**
 * Maps a failure from imapflow or the network to a chainmail reason; server text is never a secret.
 * With the server's table, a certificate failure says so in its own words (src/tls.ts).
 */
export function mapImapError(err: unknown, account: string, server?: { host: string }): MailError {
  if (isMailError(err)) return err;
  // Not the server's doing (its message, which can quote data, in detail): see ImapPool.settle
  if (codeFault(err))
    return new MailError(
      "INTERNAL",
      `chainmail failed on a call to the IMAP server of account ${account}; the fault is in detail`,
      undefined,
      (err as Error).message,
    );
  const cache = cacheFault(err);
  if (cache) return cache;
  const cert = server && certificateError(err, server, "imap");
  if (cert) return cert;
  const e = err as { code?: string; authenticationFailed?: boolean; message?: string; responseText?: string };
  if (e?.authenticationFailed) {
    return new MailError("AUTH_REJECTED", `the IMAP server of account ${account} rejected the login`);
  }
  if (e?.code && NETWORK_CODES.has(e.code)) {
    return new MailError(
      "SERVER_UNAVAILABLE",
      `the IMAP server of account ${account} is unreachable (${e.code})`,
    );
  }
  const text = e?.responseText ?? e?.message ?? String(err);
  if (isServerRefusal(err)) {
    // The server answered: a NO is a refusal to retry only when its code says it is temporary.
    const { reason, hint } = refusalOf(err.serverResponseCode);
    return new MailError(
      reason,
      `the IMAP server of account ${account} refused the command; its reply is in detail`,
      hint,
      text,
    );
  }
  if (e?.responseText !== undefined)
    return new MailError(
      "SERVER_UNAVAILABLE",
      `the IMAP server of account ${account} refused a command; its reply is in detail`,
      undefined,
      text,
    );
  if (e?.code && UNREADABLE_REPLY.has(e.code.startsWith("ParserError") ? "ParserError" : e.code))
    return new MailError(
      "SERVER_UNAVAILABLE",
      `the IMAP server of account ${account} sent a reply chainmail cannot read (${e.code}); the error is in detail`,
      undefined,
      text,
    );
  // No reply of the server to quote: what failed is said in detail, not called a refusal
  return new MailError(
    "SERVER_UNAVAILABLE",
    `a call to the IMAP server of account ${account} failed; the error is in detail`,
    undefined,
    text,
  );
}

/** imapflow's codes for a reply it could not read or that broke the protocol (its errors.js). */
const UNREADABLE_REPLY = new Set([
  "ParserError",
  "UnexpectedTag",
  "MissingTag",
  "InvalidResponse",
  "ResponseProcessingFailed",
  "STARTTLS_INJECTION",
  "COMPRESS_TRAILING_DATA",
  "MAX_IMAP_NESTING_REACHED",
  "LineTooLarge",
  "LiteralTooLarge",
  "ResponseTooLarge",
  "TooManyTokens",
  "TooManyResponses",
]);

/**
 * An error of cache.db (better-sqlite3's, or the header writer's with its code: SQLITE_*) during a
 * sync or a call: the cache's, never the server's. A write lock another connection held past the
 * wait is CONFLICT (the write rolled back); any other is INTERNAL, SQLite's text in detail.
 */
function cacheFault(err: unknown): MailError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_")) return undefined;
  const text = `${code}: ${(err as Error).message ?? String(err)}`;
  if (code.startsWith("SQLITE_BUSY"))
    return new MailError(
      "CONFLICT",
      "cache.db's write lock was held by another connection longer than chainmail waits; that write was not done",
      "Try again; if the cache stays busy, close any other program that has cache.db open (an sqlite3 shell, a backup).",
      text,
    );
  return new MailError(
    "INTERNAL",
    `the cache (cache.db) failed with ${code}; SQLite's error is in detail`,
    undefined,
    text,
  );
}

/**
 * imapflow answers a refused MOVE, COPY, STORE or EXPUNGE with `false` and only logs the server's
 * reply; the logger below keeps the last one per connection, so a refusal can quote the server.
 */
const lastRefusal = new WeakMap<ImapFlow, RefusalSlot>();

interface RefusalSlot {
  text?: string | undefined;
  code?: string | undefined;
}

/** The credentials generation each connection logged in under (see Credentials.generation). */
const loggedInUnder = new WeakMap<ImapFlow, object>();

/**
 * How often the daemon's open connections (the pool's, the cache's) are checked against their
 * accounts' secrets: `chainmail auth logout`, or a new password or sign-in, changes the secret in
 * another process, and a session logged in with the old one would otherwise stay open until the
 * account's next call (the pool) or for days (a cache watch). A check is a stat per account.
 */
export const LOGIN_CHECK_MS = 2_000;

/**
 * Whether `client` logged in under the account's secret as it is now: false once that secret is gone
 * or replaced (auth logout, a new sign-in or password), when the connection is to be let go. The
 * pool's connections and the cache's (../daemon/cache-runner.ts) both ask it.
 */
export function loggedInUnderCurrentSecret(
  client: ImapFlow,
  account: AccountConfig,
  secretsDir: string,
): boolean {
  return loggedInUnder.get(client) === credentialsFor(secretsDir).generation(account);
}

/** The server's text of the last command imapflow reported as failed, and forgets it. */
export function takeRefusalText(client: ImapFlow): string | undefined {
  return takeRefusal(client).text;
}

/** The server's text and response code (RFC 5530) of the last refused command, and forgets them. */
export function takeRefusal(client: ImapFlow): { text?: string; code?: string } {
  const slot = lastRefusal.get(client);
  const out = {
    ...(slot?.text === undefined ? {} : { text: slot.text }),
    ...(slot?.code === undefined ? {} : { code: slot.code }),
  };
  if (slot) {
    slot.text = undefined;
    slot.code = undefined;
  }
  return out;
}

function refusalLogger(slot: RefusalSlot) {
  const none = () => undefined;
  return {
    debug: none,
    info: none,
    error: none,
    // without its own method imapflow would print fatal entries to the console
    fatal: none,
    // imapflow asks before building debug lines (every command and response, compiled again).
    isLevelEnabled: (level: string) => level === "warn",
    warn: (entry: unknown) => {
      const err = (
        entry as
          | { err?: { responseText?: unknown; message?: unknown; serverResponseCode?: unknown } }
          | undefined
      )?.err;
      if (!err) return;
      const text = typeof err.responseText === "string" ? err.responseText : err.message;
      if (typeof text === "string") slot.text = text;
      slot.code = typeof err.serverResponseCode === "string" ? err.serverResponseCode : undefined;
    },
  };
}

export function imapOptions(
  account: AccountConfig,
  login: Login,
  refusals: RefusalSlot = {},
  extra: OpenOptions = {},
) {
  return {
    host: account.imap.host,
    port: account.imap.port,
    secure: account.imap.tls === "tls",
    doSTARTTLS: account.imap.tls === "starttls" ? true : account.imap.tls === "none" ? false : undefined,
    // The system CAs, plus the server's ca_file when it has one.
    tls: tlsOptions(account.imap),
    // imapflow logs in with OAUTHBEARER where the server offers it, else XOAUTH2, for an accessToken.
    auth: login,
    logger: refusalLogger(refusals),
    // Test servers and some hosts answer slowly to the first command; imapflow's defaults are minutes.
    connectionTimeout: 15_000,
    greetingTimeout: 10_000,
    socketTimeout: 5 * 60_000,
    disableAutoIdle: true,
    ...(extra.qresync ? { qresync: true } : {}),
  };
}

export interface OpenOptions {
  /**
   * ENABLE QRESYNC (RFC 7162) where the server offers it (imapflow already enables CONDSTORE on
   * every connection). The server then reports a message another client removed as `VANISHED`
   * with its UID instead of `EXPUNGE` with a sequence number, and every flag change with the
   * message's UID: the server path's remembered SORT answers (query/imap-run.ts, sortMemos) drop
   * removed messages by UID instead of sorting every match again. Only the pool's connections ask
   * for it; the cache's sync and watch connections keep their own (cache/sync.ts).
   */
  qresync?: boolean;
}

/**
 * Opens and logs in a new connection; AUTH_REQUIRED when nothing is stored to log in with. A refused
 * OAuth2 token is refreshed and tried once more (src/auth/credentials.ts).
 */
export async function openImap(
  account: AccountConfig,
  secretsDir: string,
  options: OpenOptions = {},
): Promise<ImapFlow> {
  return credentialsFor(secretsDir)
    .withLogin(
      account,
      account.imap,
      "IMAP",
      (err) => (err as { authenticationFailed?: boolean })?.authenticationFailed === true,
      async (login) => {
        const refusals: RefusalSlot = {};
        const client = new ImapFlow(imapOptions(account, login, refusals, options));
        lastRefusal.set(client, refusals);
        // imapflow emits 'error' on socket failures; unhandled it would crash the daemon.
        client.on("error", () => undefined);
        try {
          await client.connect();
        } catch (err) {
          client.close();
          // A refused login goes back raw, so withLogin can tell it and try a fresh token once.
          if ((err as { authenticationFailed?: boolean })?.authenticationFailed) throw err;
          throw mapImapError(err, account.name, account.imap);
        }
        return client;
      },
    )
    .then(
      (client) => {
        loggedInUnder.set(client, credentialsFor(secretsDir).generation(account));
        return client;
      },
      (err: unknown) => {
        throw mapImapError(err, account.name, account.imap);
      },
    );
}

interface Slot {
  client: ImapFlow | undefined;
  /** The account as its last call gave it, for the check of the connection's login. */
  account?: AccountConfig;
  queue: Promise<unknown>;
  /** The last failure to connect or of a command's connection, until a connection opens again. */
  lastError?: { reason: string; message: string; at: string } | undefined;
}

/** An account's connection as `chainmail admin status` shows it. */
export interface ConnectionState {
  /** open: a connection is up; none: no call has needed one since the start, a retire or a drop. */
  state: "open" | "none";
  last_error: { reason: string; message: string; at: string } | null;
}

const failure = (err: unknown) => ({
  reason: (err as MailError).reason ?? "INTERNAL",
  message: (err as Error).message ?? String(err),
  at: new Date().toISOString(),
});

export class ImapPool {
  private readonly slots = new Map<string, Slot>();
  private readonly loginCheck: NodeJS.Timeout;

  constructor(
    private readonly secretsDir: string,
    loginCheckMs = LOGIN_CHECK_MS,
  ) {
    this.loginCheck = setInterval(() => this.retireStaleLogins(), loginCheckMs);
    this.loginCheck.unref();
  }

  /**
   * Retires the connections logged in under a secret that has changed since (signed out, a new
   * password or sign-in) without waiting for the account's next call, which would log in anew.
   */
  private retireStaleLogins(): void {
    for (const [name, s] of this.slots) {
      try {
        if (
          s.client?.usable &&
          s.account &&
          !loggedInUnderCurrentSecret(s.client, s.account, this.secretsDir)
        )
          this.retire(name);
      } catch {
        // (a secret that cannot be read: the account's next call reports it, from `ready`)
      }
    }
  }

  /**
   * Runs a read (SEARCH, FETCH, LIST, EXAMINE) with this account's connection, serialized with the
   * account's other calls. Reads are safe to repeat, so when the connection is lost during one (a
   * BYE, e.g. after its selected folder was deleted, or a drop), it runs once more on a new one.
   */
  read<T>(account: AccountConfig, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    return this.queue(account, async (s) => {
      const client = await this.ready(s, account);
      try {
        const result = await fn(client);
        // imapflow answers some reads on a closed connection with false or an empty list rather
        // than an error, so a result from a connection that died meanwhile is not trusted.
        if (client.usable) return result;
      } catch (err) {
        if (client.usable) throw this.settle(s, client, err, account);
      }
      client.close();
      s.client = undefined;
      const again = await this.ready(s, account);
      try {
        const result = await fn(again);
        if (!again.usable)
          throw new MailError(
            "SERVER_UNAVAILABLE",
            `the IMAP server of account ${account.name} dropped the connection twice`,
          );
        return result;
      } catch (err) {
        throw this.settle(s, again, err, account);
      }
    });
  }

  /**
   * Runs a change (MOVE, COPY, STORE, EXPUNGE, CREATE, RENAME, DELETE) with this account's
   * connection. It runs at most once: after a drop its earlier commands may already have reached the
   * server, and running them again would copy twice or report moved mail as missing. So the
   * connection is checked with a NOOP first, and replaced then, before anything is changed.
   */
  write<T>(account: AccountConfig, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    return this.queue(account, async (s) => {
      let client = await this.ready(s, account);
      try {
        await client.noop();
      } catch {
        // noop() only fails when the connection is gone; nothing of this call has run yet.
      }
      if (!client.usable) {
        client.close();
        s.client = undefined;
        client = await this.ready(s, account);
      }
      try {
        return await fn(client);
      } catch (err) {
        throw this.settle(s, client, err, account);
      }
    });
  }

  private queue<T>(account: AccountConfig, run: (s: Slot) => Promise<T>): Promise<T> {
    let slot = this.slots.get(account.name);
    if (!slot) {
      slot = { client: undefined, queue: Promise.resolve() };
      this.slots.set(account.name, slot);
    }
    const s = slot;
    s.account = account;
    const go = () => run(s);
    const result = s.queue.then(go, go);
    s.queue = result.catch(() => undefined);
    return result;
  }

  private async ready(s: Slot, account: AccountConfig): Promise<ImapFlow> {
    // Logged in with a secret that is gone or replaced (auth logout, a new sign-in or password):
    // the next call logs in anew, so a sign-out takes effect at once and a new secret is used.
    if (s.client?.usable && !loggedInUnderCurrentSecret(s.client, account, this.secretsDir)) {
      const old = s.client;
      s.client = undefined;
      void old.logout().catch(() => old.close());
    }
    if (!s.client?.usable) {
      s.client?.close();
      s.client = undefined;
      try {
        // QRESYNC: removals by other clients arrive as UIDs, for the server path (see OpenOptions).
        s.client = await openImap(account, this.secretsDir, { qresync: true });
      } catch (err) {
        s.lastError = failure(err);
        throw err;
      }
      s.lastError = undefined;
    }
    return s.client;
  }

  /**
   * Forgets a connection that died and maps the failure to a chainmail reason. A fault of the
   * call's own code (or of a library on what the server sent: a stack overflow, a TypeError) on a
   * connection that is fine is passed on as it is, so the daemon answers INTERNAL and logs its
   * stack: mapped, it read "the IMAP server refused a command", which the server had not.
   */
  private settle(s: Slot, client: ImapFlow, err: unknown, account: AccountConfig): unknown {
    if (client.usable && codeFault(err)) return err;
    const mapped = mapImapError(err, account.name);
    if (!client.usable && s.client === client) {
      s.client = undefined;
      s.lastError = failure(mapped);
    }
    return mapped;
  }

  /** Whether the account has a connection up, and its last connection failure. */
  connection(name: string): ConnectionState {
    const s = this.slots.get(name);
    return { state: s?.client?.usable ? "open" : "none", last_error: s?.lastError ?? null };
  }

  /**
   * Replaces an account's connection once the calls already queued on it have finished (a config
   * change): a call in flight keeps its connection; the next call opens a new one.
   */
  retire(name: string): void {
    const s = this.slots.get(name);
    if (!s) return;
    s.queue = s.queue.then(() => {
      const old = s.client;
      s.client = undefined;
      // Not awaited: a server slow to answer LOGOUT must not hold up the account's next call.
      if (old?.usable) void old.logout().catch(() => old.close());
      else old?.close();
    });
  }

  /** Drops an account's connection at once, even under a call in flight (retire waits for it). */
  drop(name: string): void {
    const slot = this.slots.get(name);
    slot?.client?.close();
    if (slot) slot.client = undefined;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.loginCheck);
    const all = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(
      all.map(async (s) => {
        await s.queue;
        if (s.client?.usable) await s.client.logout().catch(() => s.client?.close());
        else s.client?.close();
      }),
    );
  }
}
