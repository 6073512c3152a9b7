/**
 * `chainmail admin status`: the daemon as its owner needs to see it in one call — its version and
 * uptime, each account's password, connection, cache and watch state, what waits for the owner
 * (policy confirmations, sends whose outcome is unknown), the last failed reload of config.toml and
 * the sizes of its databases. Read from what the daemon already keeps; nothing is asked of a server.
 */
import fs from "node:fs";
import { type AuthMethod, type AuthState, credentialsFor } from "../auth/credentials.js";
import { watchMode } from "../cache/index.js";
import type { AccountCacheState } from "../cache/status.js";
import { MailError } from "../errors.js";
import type { ConnectionState } from "../imap/connection.js";
import { outboxOf } from "../outbox/index.js";
import { policyStatus } from "../policy/service.js";
import { chainmailVersion } from "../version.js";
import type { Call, ConfigError, ServiceContext } from "./context.js";

export interface AdminStatus {
  daemon: { version: string; pid: number; started: string | null; uptime_seconds: number | null };
  accounts: Array<{
    account: string;
    /** The account's auth state, as list_accounts reports it (ok, missing, rejected, expired, unknown). */
    auth: AuthState;
    auth_method: AuthMethod;
    connection: ConnectionState;
    /** null when the local cache is turned off. */
    cache: {
      state: AccountCacheState;
      last_sync: string | null;
      folders: number;
      complete_folders: number;
      watching: string[];
      /**
       * How the account's watch hears other clients' changes: "notify", NOTIFY (RFC 5465) on every
       * personal folder; "idle", IDLE on `watching` alone, the folders queries read checked every few
       * seconds in the background; "none", no watch runs (background off, or it is being restarted).
       */
      watch: "notify" | "idle" | "none";
      watch_errors: Array<{ folder: string; error: string }>;
    } | null;
  }>;
  /** Accounts whose wider policy or new server settings wait for `chainmail policy confirm`. */
  pending_confirmations: Array<{ account: string; digest: string; changes: string[] }>;
  /** Sends whose outcome is unknown, waiting for `chainmail outbox confirm|release`. */
  unconfirmed_sends: Array<{
    key: string;
    account: string;
    tool: string;
    message_id: string;
    created: string;
  }>;
  /** The last reload of config.toml that failed; the daemon runs on the config before it. */
  config_error: ConfigError | null;
  sizes: { state_db_bytes: number; cache_db_bytes: number | null; cache_max_bytes: number | null };
}

/** A SQLite file's size with its write-ahead log, which holds recent writes until a checkpoint. */
function dbBytes(file: string): number | null {
  const size = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size;
  const main = size(file);
  return main === undefined ? null : main + (size(`${file}-wal`) ?? 0);
}

export function adminStatus(ctx: ServiceContext, call: Call): AdminStatus {
  // It shows outbox keys and policy digests, which are the owner's to act on.
  if (call.client !== "cli")
    throw new MailError(
      "POLICY_DENIED",
      "admin status is an operator command: only the chainmail CLI may call it",
      "Ask the user to run `chainmail admin status`.",
    );
  const names = ctx.config.accounts.map((a) => a.name);
  const cache = ctx.cache?.status(names);
  const now = Date.now();
  return {
    daemon: {
      version: chainmailVersion(),
      pid: process.pid,
      started: ctx.startedAt === undefined ? null : new Date(ctx.startedAt).toISOString(),
      uptime_seconds: ctx.startedAt === undefined ? null : Math.round((now - ctx.startedAt) / 1000),
    },
    accounts: ctx.config.accounts.map((a) => {
      const name = a.name;
      const connection = ctx.pool.connection(name);
      const c = cache?.accounts.find((x) => x.account === name);
      return {
        account: name,
        auth: credentialsFor(ctx.home.secretsDir).state(a),
        auth_method: credentialsFor(ctx.home.secretsDir).method(a),
        connection,
        cache: ctx.cache
          ? {
              state: c?.state ?? "empty",
              last_sync: c?.last_sync ?? null,
              folders: c?.folders.length ?? 0,
              complete_folders: c?.folders.filter((f) => f.complete).length ?? 0,
              watching: c?.folders.filter((f) => f.watching).map((f) => f.name) ?? [],
              watch: watchMode(name) ?? "none",
              watch_errors:
                c?.folders.flatMap((f) =>
                  f.watch_error ? [{ folder: f.name, error: f.watch_error }] : [],
                ) ?? [],
            }
          : null,
      };
    }),
    pending_confirmations: policyStatus(ctx)
      .accounts.filter((a) => a.pending)
      .map((a) => ({ account: a.account, digest: a.digest, changes: a.changes })),
    unconfirmed_sends: outboxOf(ctx.state)
      .store.list("pending")
      .map((r) => ({
        key: r.key,
        account: r.account,
        tool: r.tool,
        message_id: r.message_id,
        created: r.created,
      })),
    config_error: ctx.configError ?? null,
    sizes: {
      state_db_bytes: dbBytes(ctx.home.dbFile) ?? 0,
      cache_db_bytes: ctx.cache ? dbBytes(ctx.home.cacheFile) : null,
      cache_max_bytes: ctx.cache ? (cache?.max_size_bytes ?? null) : null,
    },
  };
}
