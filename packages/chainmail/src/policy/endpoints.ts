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
  };
  password_command?: string[];
}

const server = (s: ServerConfig): ServerConfig => ({ host: s.host, port: s.port, tls: s.tls });

/** The preset's sign-in page for a provider with one built in. */
const presetPage = (provider: string, key: Page): string | undefined =>
  Object.hasOwn(OAUTH_PRESETS, provider) ? OAUTH_PRESETS[provider as OAuthPreset][key] : undefined;

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
          },
        }
      : {}),
    ...(e.password_command ? { password_command: [...e.password_command] } : {}),
  };
}

export const sameEndpoint = (a: Endpoint, b: Endpoint) => JSON.stringify(a) === JSON.stringify(b);

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
