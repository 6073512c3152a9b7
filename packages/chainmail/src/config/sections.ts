/**
 * The validation of config.toml's sections other than the accounts' own keys: OAuth, events,
 * files, send policy, cache, commands.
 */
import path from "node:path";
import { asciiDomain, parseMailbox } from "../compose/addresses.js";
import { endpointProblem, OAUTH_PRESETS, type OAuthPreset } from "../auth/providers.js";
import type { Provider } from "../providers/presets.js";
import { type Checker, isTable, type Table } from "./checker.js";
import {
  type CacheConfig,
  DEFAULT_EVENT_POLL_MS,
  DEFAULT_EVENT_RETENTION_SECONDS,
  defaultCacheConfig,
  type EventsConfig,
  type FilesConfig,
  HOLD_APPROVALS,
  type HoldApproval,
  MIN_EVENT_POLL_MS,
  type OAuthConfig,
  type Policy,
} from "./types.js";

/**
 * A command run without a shell: an array (program, then arguments), or a string split at spaces
 * (no quoting: an argument with a space needs the array form).
 */
export function commandSetting(c: Checker, v: unknown, at: string): string[] | undefined {
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

export function oauthSection(
  c: Checker,
  v: unknown,
  at: string,
  provider: Provider,
): OAuthConfig | undefined {
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

export function eventsSection(c: Checker, v: unknown): EventsConfig {
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

export function filesSection(c: Checker, v: unknown): FilesConfig {
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

export function sendPolicy(c: Checker, p: Table, at: string, policy: Policy): void {
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

export function cacheSection(c: Checker, v: unknown): CacheConfig {
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
