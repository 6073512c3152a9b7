/**
 * config.toml: the accounts and their policy. Validated fully at load, each problem named by its path
 * (`accounts[1].imap.port`), so a typo fails at start rather than on first use.
 */
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { asciiDomain, parseMailbox } from "./compose/addresses.js";
import { endpointProblem, isLoopbackHost, OAUTH_PRESETS, type OAuthPreset } from "./auth/providers.js";
import { MailError } from "./errors.js";
import { isProvider, PROVIDERS, type Provider, presetOf, type ServerPreset } from "./providers/presets.js";
import { ACCOUNT_NAME_RE } from "./secrets.js";
import { readCaFile } from "./tls.js";

export type TlsMode = "tls" | "starttls" | "none";
export type { Provider } from "./providers/presets.js";
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

type Table = Record<string, unknown>;

class Checker {
  readonly problems: string[] = [];
  str(t: Table, key: string, at: string, required: boolean): string | undefined {
    const v = t[key];
    if (v === undefined) {
      if (required) this.problems.push(`${at}.${key} is required`);
      return undefined;
    }
    if (typeof v !== "string" || v.length === 0) {
      this.problems.push(`${at}.${key} must be a non-empty string`);
      return undefined;
    }
    return v;
  }
  bool(t: Table, key: string, at: string): boolean {
    const v = t[key];
    if (v === undefined) return false;
    if (typeof v !== "boolean") {
      this.problems.push(`${at}.${key} must be true or false`);
      return false;
    }
    return v;
  }
  unknown(t: Table, allowed: string[], at: string): void {
    for (const k of Object.keys(t))
      if (!allowed.includes(k)) this.problems.push(`${at}.${k} is not a known setting`);
  }
}

function isTable(v: unknown): v is Table {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/**
 * One server table. A provider preset fills the keys the table leaves out (an explicit key wins); a
 * `tls` that differs from the preset's takes that mode's default port, not the preset's.
 */
function server(
  c: Checker,
  v: unknown,
  at: string,
  defaults: { tls: number; starttls: number },
  preset: ServerPreset | undefined,
): ServerConfig | undefined {
  if (!isTable(v)) {
    c.problems.push(`${at} must be a table with host, port and tls`);
    return undefined;
  }
  c.unknown(v, ["host", "port", "tls", "ca_file"], at);
  const host =
    c.str(v, "host", at, preset === undefined) ?? (v["host"] === undefined ? preset?.host : undefined);
  const tlsRaw = v["tls"] ?? preset?.tls ?? "tls";
  let tls: TlsMode = "tls";
  if (tlsRaw === "tls" || tlsRaw === "starttls" || tlsRaw === "none") tls = tlsRaw;
  else c.problems.push(`${at}.tls must be "tls", "starttls" or "none"`);
  let port = preset && tls === preset.tls ? preset.port : tls === "tls" ? defaults.tls : defaults.starttls;
  if (v["port"] !== undefined) {
    const p = v["port"];
    if (typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > 65535) {
      c.problems.push(`${at}.port must be an integer from 1 to 65535`);
    } else port = p;
  }
  const caFile = c.str(v, "ca_file", at, false);
  let ca: { ca_file: string; ca: string } | undefined;
  if (caFile !== undefined && !path.isAbsolute(caFile))
    // The daemon's working directory is nobody's business: a relative path would mean different files.
    c.problems.push(`${at}.ca_file must be an absolute path (got ${caFile})`);
  else if (caFile !== undefined) {
    const read = readCaFile(caFile);
    if ("problem" in read) c.problems.push(`${at}.ca_file ${caFile} ${read.problem}`);
    else ca = { ca_file: caFile, ca: read.pem };
  }
  return host ? { host, port, tls, ...ca } : undefined;
}

/** Validates parsed TOML; throws CONFIG_INVALID listing every problem. */
export function validateConfig(doc: unknown, source = "config.toml"): Config {
  const c = new Checker();
  if (!isTable(doc)) throw new MailError("CONFIG_INVALID", `${source}: not a table`);
  c.unknown(doc, ["accounts", "daemon", "cache", "events", "files"], "config");
  const files = filesSection(c, doc["files"]);
  const cache = cacheSection(c, doc["cache"]);
  const events = eventsSection(c, doc["events"]);
  const daemon: DaemonConfig = { body_limit: DEFAULT_BODY_LIMIT };
  if (doc["daemon"] !== undefined) {
    const d = doc["daemon"];
    if (!isTable(d)) c.problems.push("daemon must be a table");
    else {
      c.unknown(d, ["body_limit", "socket_group"], "daemon");
      const g = d["socket_group"];
      if (g !== undefined) {
        if (typeof g !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/.test(g))
          c.problems.push("daemon.socket_group must be the name or number of a group");
        else daemon.socket_group = g;
      }
      const bl = d["body_limit"];
      if (bl !== undefined) {
        if (typeof bl !== "number" || !Number.isInteger(bl) || bl < 100 || bl > 10_000_000) {
          c.problems.push("daemon.body_limit must be an integer from 100 to 10000000");
        } else daemon.body_limit = bl;
      }
    }
  }
  const list = doc["accounts"] ?? [];
  const accounts: AccountConfig[] = [];
  if (!Array.isArray(list)) c.problems.push("accounts must be an array of tables ([[accounts]])");
  else {
    const seen = new Set<string>();
    list.forEach((a: unknown, i) => {
      const at = `accounts[${i}]`;
      if (!isTable(a)) {
        c.problems.push(`${at} must be a table`);
        return;
      }
      c.unknown(
        a,
        [
          "name",
          "provider",
          "address",
          "display_name",
          "aliases",
          "username",
          "imap",
          "smtp",
          "archive_folder",
          "drafts_folder",
          "sent_folder",
          "trash_folder",
          "signature",
          "oauth",
          "password_command",
          "policy",
        ],
        at,
      );
      const name = c.str(a, "name", at, true);
      if (name && !ACCOUNT_NAME_RE.test(name)) {
        c.problems.push(`${at}.name must be 1-64 of A-Z a-z 0-9 . _ - and start with a letter or digit`);
      }
      if (name && seen.has(name)) c.problems.push(`${at}.name "${name}" is used by another account`);
      if (name) seen.add(name);
      const providerRaw = a["provider"] ?? "imap";
      let provider: Provider = "imap";
      if (isProvider(providerRaw)) provider = providerRaw;
      else c.problems.push(`${at}.provider must be one of ${PROVIDERS.map((p) => `"${p}"`).join(", ")}`);
      // A provider's preset fills the servers; only provider "imap" must name them.
      const preset = presetOf(provider);
      const address = c.str(a, "address", at, true);
      if (address && !/^[^@\s]+@[^@\s]+$/.test(address))
        c.problems.push(`${at}.address must be an email address`);
      // The name every From carries; one line, since it goes into a header.
      const displayName = c.str(a, "display_name", at, false);
      if (
        displayName !== undefined &&
        (/[\p{Cc}\u2028\u2029]/u.test(displayName) || displayName.length > 200)
      )
        c.problems.push(`${at}.display_name must be one line of at most 200 characters`);
      const aliases = a["aliases"];
      if (
        aliases !== undefined &&
        (!Array.isArray(aliases) || !aliases.every((x) => typeof x === "string" && parseMailbox(x)))
      )
        c.problems.push(`${at}.aliases must be an array of email addresses`);
      const username = c.str(a, "username", at, false) ?? address;
      const imapPorts = { tls: 993, starttls: 143 };
      const smtpPorts = { tls: 465, starttls: 587 };
      const imap =
        a["imap"] === undefined && preset
          ? { ...preset.imap }
          : server(c, a["imap"], `${at}.imap`, imapPorts, preset?.imap);
      const smtp =
        a["smtp"] === undefined
          ? preset && { ...preset.smtp }
          : server(c, a["smtp"], `${at}.smtp`, smtpPorts, preset?.smtp);
      const archive = c.str(a, "archive_folder", at, false) ?? preset?.folders?.archive;
      const drafts = c.str(a, "drafts_folder", at, false) ?? preset?.folders?.drafts;
      const sent = c.str(a, "sent_folder", at, false) ?? preset?.folders?.sent;
      const trash = c.str(a, "trash_folder", at, false) ?? preset?.folders?.trash;
      const signature = a["signature"];
      if (signature !== undefined && typeof signature !== "string")
        c.problems.push(`${at}.signature must be a string`);
      const oauth =
        a["oauth"] === undefined ? undefined : oauthSection(c, a["oauth"], `${at}.oauth`, provider);
      if (oauth) {
        // A bearer token is as good as a password for as long as it lives: never in clear text on a network.
        for (const [kind, s] of [
          ["imap", imap],
          ["smtp", smtp],
        ] as const)
          if (s && s.tls === "none" && !isLoopbackHost(s.host))
            c.problems.push(
              `${at}.${kind}.tls = "none" sends the OAuth2 token without TLS: allowed only to a loopback host`,
            );
      }
      const passwordCommand = commandSetting(c, a["password_command"], `${at}.password_command`);
      if (passwordCommand && a["oauth"] !== undefined)
        c.problems.push(
          `${at}.password_command cannot be used with [accounts.oauth] (its refresh token is kept in the secrets dir)`,
        );
      const policy: Policy = { allow_expunge: false, allow_delete_folder: false, hold_approval: "owner" };
      if (a["policy"] !== undefined) {
        const p = a["policy"];
        if (!isTable(p)) c.problems.push(`${at}.policy must be a table`);
        else {
          c.unknown(
            p,
            [
              "allow_expunge",
              "allow_delete_folder",
              "allowed_recipients",
              "max_recipients",
              "max_attachment_bytes",
              "hold_approval",
            ],
            `${at}.policy`,
          );
          policy.allow_expunge = c.bool(p, "allow_expunge", `${at}.policy`);
          policy.allow_delete_folder = c.bool(p, "allow_delete_folder", `${at}.policy`);
          sendPolicy(c, p, `${at}.policy`, policy);
        }
      }
      if (name && address && username && imap) {
        accounts.push({
          name,
          provider,
          address,
          ...(displayName ? { display_name: displayName } : {}),
          ...(Array.isArray(aliases) ? { aliases: aliases as string[] } : {}),
          username,
          imap,
          smtp,
          archive_folder: archive,
          drafts_folder: drafts,
          sent_folder: sent,
          trash_folder: trash,
          signature: typeof signature === "string" ? signature : undefined,
          ...(oauth ? { oauth } : {}),
          ...(passwordCommand ? { password_command: passwordCommand } : {}),
          policy,
        });
      }
    });
  }
  if (c.problems.length > 0) {
    throw new MailError("CONFIG_INVALID", `${source}: ${c.problems.join("; ")}`);
  }
  return { accounts, daemon, cache, events, files };
}

/**
 * A command run without a shell: an array (program, then arguments), or a string split at spaces
 * (no quoting: an argument with a space needs the array form).
 */
function commandSetting(c: Checker, v: unknown, at: string): string[] | undefined {
  if (v === undefined) return undefined;
  const argv = typeof v === "string" ? v.trim().split(/\s+/) : v;
  if (
    !Array.isArray(argv) ||
    argv.length === 0 ||
    !argv.every((x) => typeof x === "string" && x.length > 0)
  ) {
    c.problems.push(`${at} must be a command: a string, or an array of the program and its arguments`);
    return undefined;
  }
  return argv as string[];
}

const OAUTH_ENDPOINTS = [
  "authorization_endpoint",
  "token_endpoint",
  "device_authorization_endpoint",
  "revocation_endpoint",
] as const;

function oauthSection(c: Checker, v: unknown, at: string, provider: Provider): OAuthConfig | undefined {
  if (!isTable(v)) {
    c.problems.push(`${at} must be a table`);
    return undefined;
  }
  c.unknown(v, ["client_id", "client_secret", "scopes", ...OAUTH_ENDPOINTS], at);
  // The providers whose OAuth2 endpoints are built in (src/auth/providers.ts); others name theirs here.
  const preset: OAuthPreset | undefined = Object.hasOwn(OAUTH_PRESETS, provider)
    ? (provider as OAuthPreset)
    : undefined;
  const base = preset ? OAUTH_PRESETS[preset] : undefined;
  const url = (key: (typeof OAUTH_ENDPOINTS)[number]): string | undefined => {
    const own = c.str(v, key, at, false);
    if (own !== undefined) {
      const problem = endpointProblem(own);
      if (problem) c.problems.push(`${at}.${key} ${problem}`);
    }
    return own ?? base?.[key];
  };
  const token = url("token_endpoint");
  const authz = url("authorization_endpoint");
  const device = url("device_authorization_endpoint");
  const revoke = url("revocation_endpoint");
  if (!token) c.problems.push(`${at}.token_endpoint is required for provider = "${provider}"`);
  if (!authz && !device)
    c.problems.push(`${at} needs authorization_endpoint or device_authorization_endpoint`);
  let scopes = base?.scopes ?? [];
  const s = v["scopes"];
  if (s !== undefined) {
    if (
      !Array.isArray(s) ||
      s.length === 0 ||
      !s.every((x) => typeof x === "string" && /^[\x21-\x7e]+$/.test(x))
    )
      c.problems.push(`${at}.scopes must be a non-empty array of scope names`);
    else scopes = s as string[];
  }
  if (scopes.length === 0) c.problems.push(`${at}.scopes is required for provider = "${provider}"`);
  if (!token) return undefined;
  return {
    preset,
    client_id: c.str(v, "client_id", at, false),
    client_secret: c.str(v, "client_secret", at, false),
    authorization_endpoint: authz,
    token_endpoint: token,
    device_authorization_endpoint: device,
    revocation_endpoint: revoke,
    scopes,
  };
}

function eventsSection(c: Checker, v: unknown): EventsConfig {
  const out: EventsConfig = {
    retention_seconds: DEFAULT_EVENT_RETENTION_SECONDS,
    poll_ms: DEFAULT_EVENT_POLL_MS,
  };
  if (v === undefined) return out;
  if (!isTable(v)) {
    c.problems.push("events must be a table");
    return out;
  }
  c.unknown(v, ["retention_seconds", "poll_ms"], "events");
  const poll = v["poll_ms"];
  if (poll !== undefined) {
    if (
      typeof poll !== "number" ||
      !Number.isInteger(poll) ||
      (poll !== 0 && poll < MIN_EVENT_POLL_MS) ||
      poll > 60_000
    )
      c.problems.push(
        `events.poll_ms must be 0 (IDLE only) or an integer from ${MIN_EVENT_POLL_MS} to 60000`,
      );
    else out.poll_ms = poll;
  }
  const x = v["retention_seconds"];
  if (x !== undefined) {
    if (typeof x !== "number" || !Number.isInteger(x) || x < 1 || x > 10 * 365 * 86400)
      c.problems.push(`events.retention_seconds must be an integer from 1 to ${10 * 365 * 86400}`);
    else out.retention_seconds = x;
  }
  return out;
}

function filesSection(c: Checker, v: unknown): FilesConfig {
  if (v === undefined) return {};
  if (!isTable(v)) {
    c.problems.push("files must be a table");
    return {};
  }
  c.unknown(v, ["attach_roots"], "files");
  const roots = v["attach_roots"];
  if (roots === undefined) return {};
  if (!Array.isArray(roots) || !roots.every((r) => typeof r === "string" && path.isAbsolute(r))) {
    c.problems.push("files.attach_roots must be an array of absolute paths");
    return {};
  }
  return { attach_roots: roots as string[] };
}

function sendPolicy(c: Checker, p: Table, at: string, policy: Policy): void {
  const list = p["allowed_recipients"];
  if (list !== undefined) {
    // Each entry read by the send path's own address model, so a rule means what it will match.
    const rule = (x: unknown) =>
      typeof x === "string" && (x.startsWith("@") ? asciiDomain(x.slice(1)) : parseMailbox(x)) !== undefined;
    if (!Array.isArray(list) || !list.every(rule))
      c.problems.push(`${at}.allowed_recipients must be an array of addresses and @domains`);
    else policy.allowed_recipients = list as string[];
  }
  for (const key of ["max_recipients", "max_attachment_bytes"] as const) {
    const v = p[key];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
      c.problems.push(`${at}.${key} must be a non-negative integer`);
    else policy[key] = v;
  }
  const approval = p["hold_approval"];
  if (approval !== undefined) {
    if ((HOLD_APPROVALS as readonly unknown[]).includes(approval))
      policy.hold_approval = approval as HoldApproval;
    else c.problems.push(`${at}.hold_approval must be "owner" or "client"`);
  }
}

function cacheSection(c: Checker, v: unknown): CacheConfig {
  const out = defaultCacheConfig();
  if (v === undefined) return out;
  if (!isTable(v)) {
    c.problems.push("cache must be a table");
    return out;
  }
  const ints: Array<[keyof CacheConfig, number, number]> = [
    ["max_size_bytes", 1024 * 1024, 1024 ** 4],
    ["daily_budget_bytes", 0, 1024 ** 4],
    ["fresh_seconds", 1, 7 * 86400],
    ["sync_interval_seconds", 1, 7 * 86400],
  ];
  c.unknown(v, ["enabled", "background", ...ints.map((i) => i[0])], "cache");
  if (v["enabled"] !== undefined) out.enabled = c.bool(v, "enabled", "cache");
  if (v["background"] !== undefined) out.background = c.bool(v, "background", "cache");
  for (const [key, min, max] of ints) {
    const x = v[key];
    if (x === undefined) continue;
    if (typeof x !== "number" || !Number.isInteger(x) || x < min || x > max) {
      c.problems.push(`cache.${key} must be an integer from ${min} to ${max}`);
    } else (out as unknown as Record<string, number>)[key] = x;
  }
  if (v["sync_interval_seconds"] === undefined)
    out.sync_interval_seconds = Math.min(out.sync_interval_seconds, out.fresh_seconds);
  return out;
}

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
    a.oauth?.token_endpoint ?? null,
    a.password_command ?? null,
    // A confirmation lets the account connect at all: its pool slot and cache sync start afresh.
    a.endpoint_unconfirmed ?? false,
  ]);

/** Accounts of `prev` that `next` removed or whose IMAP connection settings it changed. */
export function changedConnections(prev: Config, next: Config): string[] {
  const now = new Map(next.accounts.map((a) => [a.name, connectionKey(a)]));
  return prev.accounts.filter((a) => now.get(a.name) !== connectionKey(a)).map((a) => a.name);
}
