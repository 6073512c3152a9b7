/**
 * The shapes config.toml validates into (accounts, servers, policy, and the daemon, cache, events
 * and files sections) and their defaults.
 */
import type { OAuthPreset } from "../auth/providers.js";
import type { Provider } from "../providers/presets.js";

export type TlsMode = "tls" | "starttls" | "none";
export type { Provider } from "../providers/presets.js";
/**
 * `[accounts.oauth]`: the account signs in with OAuth2 (XOAUTH2/OAUTHBEARER) instead of a password.
 * The provider's preset (google, microsoft) fills the endpoints and scopes; each key here wins.
 */
export interface OAuthConfig {
  preset: OAuthPreset | undefined;
  /** Absent: taken from the preset's environment variable at sign-in (src/auth/providers.ts). */
  client_id: string | undefined;
  client_secret: string | undefined;
  authorization_endpoint: string | undefined;
  token_endpoint: string;
  device_authorization_endpoint: string | undefined;
  revocation_endpoint: string | undefined;
  scopes: string[];
}

export interface ServerConfig {
  host: string;
  port: number;
  tls: TlsMode;
  /** `ca_file`: trusted for this server's TLS beside the system CAs; its PEM is read at config load. */
  ca_file?: string;
  ca?: string;
}

export interface Policy {
  allow_expunge: boolean;
  allow_delete_folder: boolean;
  /** Send policy: recipients allowed (addresses and @domains); absent allows every recipient. */
  allowed_recipients?: string[] | undefined;
  /** Send policy: the most recipients (To, Cc and Bcc together) of one message. */
  max_recipients?: number | undefined;
  /** Send policy: the most bytes of attachments and inline images of one message. */
  max_attachment_bytes?: number | undefined;
  /**
   * Who may let a held send go: "owner" (only by sending the held draft themselves; the default) or
   * "client" (also the person in the chat, asked by the MCP client through elicitation).
   */
  hold_approval?: HoldApproval | undefined;
  /**
   * Set by the daemon, never read from config.toml: the account's own addresses (lowercase) the owner
   * has confirmed, met with config.toml's `address` and `aliases`. A send whose From (header or
   * envelope) is not one of them is held (src/compose/policy.ts ownAddresses).
   */
  own_addresses?: string[] | undefined;
}

export const HOLD_APPROVALS = ["owner", "client"] as const;
export type HoldApproval = (typeof HOLD_APPROVALS)[number];

export interface AccountConfig {
  name: string;
  provider: Provider;
  address: string;
  /** The display name of every From the account sends (`Name <address>`); none when absent. */
  display_name?: string | undefined;
  /**
   * Other addresses the account sends as (its own, on the same server): a draft whose From is one of
   * these or `address` may be sent; any other From is held.
   */
  aliases?: string[] | undefined;
  username: string;
  imap: ServerConfig;
  smtp: ServerConfig | undefined;
  archive_folder: string | undefined;
  signature: string | undefined;
  /** Folder names for servers without SPECIAL-USE; default: the folder with that role. */
  drafts_folder?: string | undefined;
  sent_folder?: string | undefined;
  trash_folder?: string | undefined;
  /** Present: OAuth2 sign-in (`chainmail auth login`) instead of a stored password. */
  oauth?: OAuthConfig | undefined;
  /**
   * Present: the password is the first line this program prints (run without a shell: the program
   * and its arguments), instead of a stored one. E.g. ["pass", "show", "mail/work"].
   */
  password_command?: string[] | undefined;
  policy: Policy;
  /**
   * Set by the daemon, never read from config.toml: the owner has confirmed no server settings of this
   * account yet (a new account, or state.db was lost), so no password or token may be sent anywhere
   * for it (src/policy/endpoints.ts) until `chainmail policy confirm`.
   */
  endpoint_unconfirmed?: true | undefined;
}

export interface DaemonConfig {
  /** Characters of body text get_message returns unless `full`. */
  body_limit: number;
  /**
   * The strong mode: a group (name or number) whose members may connect to the socket. The runtime
   * dir becomes 0750 and the socket 0660, both owned by that group; the daemon's user must be a member.
   * Read at start only. Absent: the dir is 0700 and the socket 0600 (the daemon's user only).
   */
  socket_group?: string | undefined;
}

/** The `[files]` section: where attachments may be read from. */
export interface FilesConfig {
  /**
   * Absolute directories whose regular files may be attached; below them no file or folder whose name
   * starts with a dot. Absent: the daemon user's home and the system temp dir. /etc, /proc, /sys,
   * /dev and the chainmail home are refused whatever this says.
   */
  attach_roots?: string[] | undefined;
}

/** The `[cache]` section: the local cache the daemon keeps in cache.db. */
export interface CacheConfig {
  /** false: no cache.db; every search goes to the server and `source: "cache"` is UNSUPPORTED. */
  enabled: boolean;
  /** false: no background sync or IDLE; the cache changes only on `cache.sync` (tests, cron). */
  background: boolean;
  max_size_bytes: number;
  daily_budget_bytes: number;
  /** A folder synced this recently counts as fresh (so does a watched INBOX while its syncs succeed). */
  fresh_seconds: number;
  /** Seconds between background syncs of every folder; at most fresh_seconds. */
  sync_interval_seconds: number;
}

/** The `[events]` section: the event log read_events and `chainmail watch` read. */
export interface EventsConfig {
  /** Events older than this are deleted; a reader that had not reached them gets a `gap`. */
  retention_seconds: number;
  /**
   * While a read_events call is waiting, also ask the watched folder for news every this many ms (an
   * IMAP NOOP), for servers that delay IDLE notices (Dovecot 2.3 holds each one 500 ms); 0: IDLE only.
   * Default 200: a waiting read hears of new mail within about that, at one NOOP per interval.
   */
  poll_ms: number;
}

export const DEFAULT_EVENT_RETENTION_SECONDS = 30 * 86400;
export const DEFAULT_EVENT_POLL_MS = 200;
/** The shortest NOOP interval allowed: shorter would be a busy loop against the server. */
export const MIN_EVENT_POLL_MS = 50;

export interface Config {
  accounts: AccountConfig[];
  daemon: DaemonConfig;
  cache: CacheConfig;
  events: EventsConfig;
  files: FilesConfig;
}

export function defaultCacheConfig(): CacheConfig {
  return {
    enabled: true,
    background: true,
    max_size_bytes: 2 * 1024 * 1024 * 1024,
    daily_budget_bytes: 200 * 1024 * 1024,
    fresh_seconds: 300,
    sync_interval_seconds: 120,
  };
}

export const DEFAULT_BODY_LIMIT = 20_000;
