/**
 * Where an account's password goes: the provider, the username and the IMAP and SMTP servers. A change
 * of any of it sends the stored password somewhere new, so it waits for the owner like a policy
 * widening: config.toml can be written by anything with a file tool, and an injected message could
 * ask an agent to point `imap.host` at an attacker.
 */
import type { AccountConfig, ServerConfig } from "../config.js";

export interface Endpoint {
  provider: AccountConfig["provider"];
  username: string;
  imap: ServerConfig;
  smtp: ServerConfig | null;
}

const server = (s: ServerConfig): ServerConfig => ({ host: s.host, port: s.port, tls: s.tls });

export function endpointOf(a: AccountConfig): Endpoint {
  return {
    provider: a.provider,
    username: a.username,
    imap: server(a.imap),
    smtp: a.smtp ? server(a.smtp) : null,
  };
}

/** The account as config.toml wrote it, but connecting where `e` says. */
export function withEndpoint(a: AccountConfig, e: Endpoint): AccountConfig {
  return {
    ...a,
    provider: e.provider,
    username: e.username,
    imap: server(e.imap),
    smtp: e.smtp ? server(e.smtp) : undefined,
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
  return out;
}

export const describeEndpoint = (e: Endpoint) =>
  `${e.provider}, user ${e.username}, imap ${shown(e.imap)}, smtp ${shown(e.smtp)}`;
