/**
 * config.toml: the accounts and their policy. Validated fully at load, each problem named by its path
 * (`accounts[1].imap.port`), so a typo fails at start rather than on first use.
 *
 * This file loads the file and compares two configs; the shapes are in config/types.ts, the
 * validation in config/validate.ts (top level, accounts, servers) and config/sections.ts (the rest).
 */
import fs from "node:fs";
import { parse } from "smol-toml";
import { MailError } from "./errors.js";
import {
  type AccountConfig,
  type Config,
  DEFAULT_BODY_LIMIT,
  DEFAULT_EVENT_POLL_MS,
  DEFAULT_EVENT_RETENTION_SECONDS,
  defaultCacheConfig,
} from "./config/types.js";
import { validateConfig } from "./config/validate.js";

export * from "./config/types.js";
export { validateConfig } from "./config/validate.js";

export function parseConfig(text: string, source = "config.toml"): Config {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new MailError("CONFIG_INVALID", `${source}: ${(err as Error).message.split("\n")[0]}`);
  }
  return validateConfig(doc, source);
}

/** A missing file is an empty config (no accounts), so `chainmail daemon` starts on a fresh machine. */
export function loadConfig(file: string): Config {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      return {
        accounts: [],
        daemon: { body_limit: DEFAULT_BODY_LIMIT },
        cache: defaultCacheConfig(),
        events: { retention_seconds: DEFAULT_EVENT_RETENTION_SECONDS, poll_ms: DEFAULT_EVENT_POLL_MS },
        files: {},
      };
    throw err;
  }
  return parseConfig(text, file);
}

/** What an account's IMAP connection depends on; a change of any of it needs a new connection. */
const connectionKey = (a: AccountConfig) =>
  JSON.stringify([
    a.provider,
    a.username,
    a.imap,
    // The access token a connection signs in with comes from this client at this endpoint, for
    // these scopes: another client's token must not stay in use on a pooled connection.
    a.oauth ? [a.oauth.token_endpoint, a.oauth.client_id, a.oauth.client_secret, a.oauth.scopes] : null,
    a.password_command ?? null,
    // A confirmation lets the account connect at all: its pool slot and cache sync start afresh.
    a.endpoint_unconfirmed ?? false,
  ]);

/** Accounts of `prev` that `next` removed or whose IMAP connection settings it changed. */
export function changedConnections(prev: Config, next: Config): string[] {
  const now = new Map(next.accounts.map((a) => [a.name, connectionKey(a)]));
  return prev.accounts.filter((a) => now.get(a.name) !== connectionKey(a)).map((a) => a.name);
}
