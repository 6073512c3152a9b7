/**
 * OAuth2 presets: the endpoints and scopes of the providers whose mail servers take only (or best)
 * OAuth2 logins, read from the one provider table (src/providers/presets.ts). An account's
 * `[accounts.oauth]` table may override any of them; for a provider without them it names them all.
 * The client id (and Google's installed-app client secret, which Google says is not a secret for such
 * apps) come from config.toml or the environment variables the table names.
 */
import { type OAuthPresetSettings, PRESETS } from "../providers/presets.js";

export type OAuthPreset = "google" | "microsoft";

export interface OAuthEndpoints {
  authorization_endpoint?: string | undefined;
  token_endpoint?: string | undefined;
  device_authorization_endpoint?: string | undefined;
  revocation_endpoint?: string | undefined;
  scopes?: string[] | undefined;
}

const settings = (p: OAuthPreset): OAuthPresetSettings => {
  const oauth = PRESETS[p].oauth;
  if (!oauth) throw new Error(`the provider table has no OAuth2 settings for ${p}`);
  return oauth;
};

export const OAUTH_PRESETS: Record<OAuthPreset, OAuthPresetSettings> = {
  google: settings("google"),
  microsoft: settings("microsoft"),
};

/** Environment variables holding a preset's client id and secret (config.toml's values win). */
export const OAUTH_ENV: Record<OAuthPreset, { clientId: string; clientSecret: string }> = {
  google: OAUTH_PRESETS.google.env,
  microsoft: OAUTH_PRESETS.microsoft.env,
};

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** A loopback host: a token may travel there without TLS (a local bridge or proxy, tests). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK.has(h) || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Why an endpoint URL is not acceptable, or undefined: https anywhere, http only on loopback. */
export function endpointProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be a URL";
  }
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return undefined;
  if (url.protocol === "http:") return "may use http:// only on a loopback host (127.0.0.1, ::1, localhost)";
  return "must be an https:// URL";
}
