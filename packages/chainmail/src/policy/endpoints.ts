/**
 * Where an account's password goes: the provider, the username and the IMAP and SMTP servers. A change
 * of any of it sends the stored password somewhere new, so it waits for the owner like a policy
 * widening: config.toml can be written by anything with a file tool, and an injected message could
 * ask an agent to point `imap.host` at an attacker. So do the OAuth2 endpoints that receive the
 * refresh token (token, revocation) and a password_command (a program the daemon would run).
 * Both are in the endpoint only when set, so an account without them keeps its stored endpoint.
 *
 * So do the pages a person is sent to sign in (the authorization and device authorization
 * endpoints): a sign-in from the chat puts that address in front of the person, and a page of an
 * attacker's choosing is a phishing page. A provider preset's own pages are part of the provider
 * (chainmail's table, not config.toml), so they enter the endpoint only as an override that differs
 * from the preset: a confirmed Google or Microsoft account stays confirmed as it was.
 *
 * So do the OAuth2 client id and scopes: another client_id makes the next sign-in grant another
 * application (its owner's) access to the mailbox, and added scopes widen what the token may do. The
 * scopes enter only where they differ from the preset's (as the pages do); the client id is always
 * there (null: from the environment variable, the owner's, not config.toml). A row confirmed before
 * they were has no `client_id` key at all: it records config.toml's, once (`recordClient`), since
 * the daemon signed in with them until then and holding a confirmed account would be new.
 */
import { OAUTH_PRESETS, type OAuthPreset } from "../auth/providers.js";
import type { AccountConfig, ServerConfig } from "../config.js";
import { MailError } from "../errors.js";

/** The sign-in pages, beside the token endpoints, that a change of waits for the owner. */
const PAGES = ["authorization_endpoint", "device_authorization_endpoint"] as const;
type Page = (typeof PAGES)[number];

export interface Endpoint {
  provider: AccountConfig["provider"];
  username: string;
  imap: ServerConfig;
  smtp: ServerConfig | null;
  oauth?: {
    token_endpoint: string;
    revocation_endpoint: string | null;
    /** Present only when not the provider preset's page (see above). */
    authorization_endpoint?: string;
    device_authorization_endpoint?: string;
    /** config.toml's client_id; null: the preset's environment variable (see above). */
    client_id?: string | null;
    /** Present only when not the provider preset's scopes (as a set). */
    scopes?: string[];
  };
  password_command?: string[];
}

const server = (s: ServerConfig): ServerConfig => ({ host: s.host, port: s.port, tls: s.tls });

/** The preset's sign-in page for a provider with one built in. */
const presetPage = (provider: string, key: Page): string | undefined =>
  Object.hasOwn(OAUTH_PRESETS, provider) ? OAUTH_PRESETS[provider as OAuthPreset][key] : undefined;

/** The preset's scopes for a provider with them built in ([] for any other: no sign-in). */
const presetScopes = (provider: string): string[] =>
  Object.hasOwn(OAUTH_PRESETS, provider) ? OAUTH_PRESETS[provider as OAuthPreset].scopes : [];

const sameSet = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

/** The endpoint's scopes: its own, else its provider preset's. */
const scopesOf = (e: Endpoint): string[] => e.oauth?.scopes ?? presetScopes(e.provider);

/** The endpoint's sign-in page: its own, else its provider preset's. */
const pageOf = (e: Endpoint, key: Page): string | undefined => e.oauth?.[key] ?? presetPage(e.provider, key);

export function endpointOf(a: AccountConfig): Endpoint {
  const pages: Partial<Record<Page, string>> = {};
  for (const key of PAGES) {
    const page = a.oauth?.[key];
    if (page !== undefined && page !== presetPage(a.provider, key)) pages[key] = page;
  }
  return {
    provider: a.provider,
    username: a.username,
    imap: server(a.imap),
    smtp: a.smtp ? server(a.smtp) : null,
    ...(a.oauth
      ? {
          oauth: {
            token_endpoint: a.oauth.token_endpoint,
            revocation_endpoint: a.oauth.revocation_endpoint ?? null,
            // After the two above, so that an endpoint without them is written as before.
            ...pages,
            client_id: a.oauth.client_id ?? null,
            ...(sameSet(a.oauth.scopes, presetScopes(a.provider)) ? {} : { scopes: [...a.oauth.scopes] }),
          },
        }
      : {}),
    ...(a.password_command ? { password_command: [...a.password_command] } : {}),
  };
}

/**
 * The account as config.toml wrote it, but connecting where `e` says: with e's password_command or
 * none, and with OAuth2 only where `e` has it, at e's token and revocation endpoints and sign-in pages.
 */
export function withEndpoint(a: AccountConfig, e: Endpoint): AccountConfig {
  const { oauth, password_command: _unconfirmed, ...rest } = a;
  return {
    ...rest,
    provider: e.provider,
    username: e.username,
    imap: server(e.imap),
    smtp: e.smtp ? server(e.smtp) : undefined,
    ...(oauth && e.oauth
      ? {
          oauth: {
            ...oauth,
            token_endpoint: e.oauth.token_endpoint,
            revocation_endpoint: e.oauth.revocation_endpoint ?? undefined,
            // The confirmed pages only: none where none is confirmed (no browser or device sign-in).
            authorization_endpoint: pageOf(e, "authorization_endpoint"),
            device_authorization_endpoint: pageOf(e, "device_authorization_endpoint"),
            // The confirmed client (none in the endpoint: the environment's) and scopes.
            client_id: e.oauth.client_id ?? undefined,
            scopes: [...scopesOf(e)],
          },
        }
      : {}),
    ...(e.password_command ? { password_command: [...e.password_command] } : {}),
  };
}

/** The same settings, whatever order a row's keys were written in (a recorded row adds keys at the end). */
export const sameEndpoint = (a: Endpoint, b: Endpoint) => canonical(a) === canonical(b);

const canonical = (v: unknown): string =>
  JSON.stringify(v, (_key, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)))
      : x,
  );

/**
 * A confirmed endpoint from before the client id and scopes were confirmed (its OAuth2 settings have
 * no `client_id` key), with config.toml's recorded; undefined when it has them (or no OAuth2). Only
 * the client and scopes are taken from `wanted`: every other setting stays as the owner confirmed it.
 */
export function recordClient(confirmed: Endpoint, wanted: Endpoint): Endpoint | undefined {
  if (!confirmed.oauth || Object.hasOwn(confirmed.oauth, "client_id")) return undefined;
  const scopes = wanted.oauth?.scopes;
  return {
    ...confirmed,
    oauth: { ...confirmed.oauth, client_id: wanted.oauth?.client_id ?? null, ...(scopes ? { scopes } : {}) },
  };
}

const shown = (s: ServerConfig | null) => (s ? `${s.host}:${s.port} (${s.tls})` : "none");

/** What changed from `from` to `to`, one entry per setting ("imap.host mail.example.com → evil.example"). */
export function diffEndpoint(from: Endpoint, to: Endpoint): string[] {
  const out: string[] = [];
  for (const k of ["provider", "username"] as const)
    if (from[k] !== to[k]) out.push(`${k} ${from[k]} → ${to[k]}`);
  for (const side of ["imap", "smtp"] as const) {
    const f = from[side];
    const t = to[side];
    if (f === null || t === null) {
      if (f !== t) out.push(`${side} ${shown(f)} → ${shown(t)}`);
      continue;
    }
    for (const k of ["host", "port", "tls"] as const)
      if (f[k] !== t[k]) out.push(`${side}.${k} ${f[k]} → ${t[k]}`);
  }
  for (const k of ["token_endpoint", "revocation_endpoint"] as const) {
    const f = from.oauth?.[k] ?? "none";
    const t = to.oauth?.[k] ?? "none";
    if (f !== t) out.push(`oauth.${k} ${f} → ${t}`);
  }
  for (const k of PAGES) {
    const f = from.oauth ? (pageOf(from, k) ?? "none") : "none";
    const t = to.oauth ? (pageOf(to, k) ?? "none") : "none";
    if (f !== t) out.push(`oauth.${k} ${f} → ${t}`);
  }
  const client = (e: Endpoint) => (e.oauth ? (e.oauth.client_id ?? "(from the environment)") : "none");
  if (client(from) !== client(to)) out.push(`oauth.client_id ${client(from)} → ${client(to)}`);
  const fs = from.oauth ? scopesOf(from) : [];
  const ts = to.oauth ? scopesOf(to) : [];
  const added = ts.filter((x) => !fs.includes(x)).map((x) => `+${x}`);
  const removed = fs.filter((x) => !ts.includes(x)).map((x) => `-${x}`);
  if (added.length || removed.length) out.push(`oauth.scopes ${[...added, ...removed].join(" ")}`);
  const cmd = (e: Endpoint) => (e.password_command ? JSON.stringify(e.password_command) : "none");
  if (cmd(from) !== cmd(to)) out.push(`password_command ${cmd(from)} → ${cmd(to)}`);
  return out;
}

export const describeEndpoint = (e: Endpoint) =>
  `${e.provider}, user ${e.username}, imap ${shown(e.imap)}, smtp ${shown(e.smtp)}${
    e.oauth ? `, oauth token ${e.oauth.token_endpoint}` : ""
  }${
    e.oauth && pageOf(e, "authorization_endpoint")
      ? `, sign-in page ${pageOf(e, "authorization_endpoint")}`
      : ""
  }${
    e.oauth && pageOf(e, "device_authorization_endpoint")
      ? `, device sign-in ${pageOf(e, "device_authorization_endpoint")}`
      : ""
  }${e.oauth?.client_id ? `, client_id ${e.oauth.client_id}` : ""}${
    e.oauth?.scopes ? `, scopes ${e.oauth.scopes.join(" ")}` : ""
  }${e.password_command ? `, password_command ${JSON.stringify(e.password_command)}` : ""}`;

/**
 * The account as config.toml wrote it, marked as connecting nowhere: no server settings of it are
 * confirmed (a new account, or state.db was lost), so a first start fails closed like the policy.
 * Adopting them would let anything that can edit config.toml and delete state.db send the password
 * to its own server.
 */
export const unconfirmed = (a: AccountConfig): AccountConfig => ({ ...a, endpoint_unconfirmed: true });

/** Why a login of an account with no confirmed server settings is refused (before any connection). */
export function unconfirmedError(account: string): MailError {
  return new MailError(
    "POLICY_DENIED",
    `the server settings of account ${account} wait for the owner's confirmation (a new account, or state.db was missing): no password or token is sent to a server the owner has not confirmed`,
    "Ask the user to run `chainmail policy status` and `chainmail policy confirm`.",
  );
}
