/** What every daemon method works with, and the audit helper they share. */
import type { AccountConfig, Config } from "../config.js";
import type { CacheRunner } from "../daemon/cache-runner.js";
import type { EventLog } from "../events/log.js";
import { MailError } from "../errors.js";
import type { Home } from "../home.js";
import type { ImapPool } from "../imap/connection.js";
import type { ClientKind, Decision, StateDb } from "../store/state.js";
import type { UploadSpool } from "../uploads/spool.js";

export interface ServiceContext {
  /** The config the daemon runs on: config.toml with each account's confirmed policy (src/policy). */
  config: Config;
  /** config.toml as written, before the confirmed policies apply; absent: `config` is both. */
  fileConfig?: Config | undefined;
  home: Home;
  pool: ImapPool;
  state: StateDb;
  /** The local cache; absent when `[cache] enabled = false`. */
  cache?: CacheRunner | undefined;
  events: EventLog;
  /** Files uploaded for compose calls; absent in a context without a daemon. */
  uploads?: UploadSpool | undefined;
  /** When the daemon started (ms since the epoch); absent in a context without a daemon. */
  startedAt?: number | undefined;
  /**
   * Why the last edit of config.toml was not applied (the daemon runs on the last good config), until
   * an edit loads; shown by `accounts` and `policy status`.
   */
  configError?: ConfigError | undefined;
  /** The daemon's log, for a fault answered as part of a result (a folder's INTERNAL in `partial`). */
  log?: ((line: string) => void) | undefined;
}

export interface ConfigError {
  /** The config file. */
  file: string;
  /** What is wrong, as the config loader words it. */
  message: string;
  /** When the daemon first read the invalid file (RFC 3339). */
  since: string;
}

/** The `config_error` field of a result, present only while config.toml's last edit is invalid. */
export function configErrorField(ctx: ServiceContext): { config_error?: ConfigError } {
  return ctx.configError ? { config_error: ctx.configError } : {};
}

/** The cache, or UNSUPPORTED when config.toml turned it off. */
export function cacheOf(ctx: ServiceContext): CacheRunner {
  if (!ctx.cache) {
    throw new MailError(
      "UNSUPPORTED",
      "the local cache is turned off ([cache] enabled = false in config.toml)",
      'Use source "auto" or "server", or enable the cache.',
    );
  }
  return ctx.cache;
}

/** Who called, and the audit action of the operation called (from its declaration). */
export interface Call {
  client: ClientKind;
  action: string;
  /** Aborts when the caller's connection closes before the reply. */
  signal?: AbortSignal | undefined;
  /**
   * Runs `fn` once the reply has been written to a caller that is still connected, and `lost`
   * instead when it cannot be (the caller hung up first, the write failed). Absent for an
   * in-process call, which has no reply to wait for.
   */
  afterReply?: ((fn: () => void, lost?: () => void) => void) | undefined;
}

export function accountOf(ctx: ServiceContext, name: string): AccountConfig {
  const a = ctx.config.accounts.find((x) => x.name === name);
  if (!a) {
    throw new MailError(
      "NOT_FOUND",
      `no account named ${JSON.stringify(name)}`,
      "list_accounts gives the account names.",
    );
  }
  return a;
}

/** Accounts named in a list (all of them when empty); unknown names are NOT_FOUND. */
export function accountsOf(ctx: ServiceContext, names: string[]): AccountConfig[] {
  if (names.length === 0) return ctx.config.accounts;
  return [...new Set(names)].map((n) => accountOf(ctx, n));
}

/** One audit row of the call, under its operation's action. */
export function audit(
  ctx: ServiceContext,
  call: Call,
  account: string | null,
  decision: Decision,
  summary: string,
): void {
  ctx.state.audit({ client: call.client, action: call.action, account, decision, summary });
}

/**
 * The audit row of a read (search, get_message, get_thread): written with the other reads of the
 * event-loop turn in one commit (StateDb.auditRead), so a crash within the turn may lose it.
 */
export function auditRead(
  ctx: ServiceContext,
  call: Call,
  account: string | null,
  decision: Decision,
  summary: string,
): void {
  ctx.state.auditRead({ client: call.client, action: call.action, account, decision, summary });
}

/** Runs a single-account operation and audits it: allowed on success, denied on POLICY_DENIED, else error. */
export async function audited<T>(
  ctx: ServiceContext,
  call: Call,
  account: string | null,
  summary: string,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    const result = await fn();
    audit(ctx, call, account, "allowed", summary);
    return result;
  } catch (err) {
    const reason = (err as MailError).reason ?? "INTERNAL";
    audit(ctx, call, account, reason === "POLICY_DENIED" ? "denied" : "error", `${summary}: ${reason}`);
    throw err;
  }
}

/** A short, safe rendering of a user-given name for audit summaries (no bodies, no secrets). */
export function q(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}
