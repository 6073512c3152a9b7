/**
 * OAuth2 presets: the endpoints and scopes of the providers whose mail servers take only (or best)
 * OAuth2 logins. An account's `[accounts.oauth]` table may override any of them; for `provider =
 * "imap"` it names them all. The client id (and Google's installed-app client secret, which Google
 * says is not a secret for such apps) come from config.toml or the environment variables below.
 */
export type OAuthPreset = "google" | "microsoft";

export interface OAuthEndpoints {
  authorization_endpoint?: string | undefined;
  token_endpoint?: string | undefined;
  device_authorization_endpoint?: string | undefined;
  revocation_endpoint?: string | undefined;
  scopes?: string[] | undefined;
}

export const OAUTH_PRESETS: Record<
  OAuthPreset,
  Required<Omit<OAuthEndpoints, "revocation_endpoint">> & OAuthEndpoints
> = {
  google: {
    authorization_endpoint: "https://accounts.google.com/o/oauth2/v2/auth",
    token_endpoint: "https://oauth2.googleapis.com/token",
    device_authorization_endpoint: "https://oauth2.googleapis.com/device/code",
    revocation_endpoint: "https://oauth2.googleapis.com/revoke",
    // Gmail's IMAP and SMTP accept only this full-access scope.
    scopes: ["https://mail.google.com/"],
  },
  microsoft: {
    // "common": work/school and personal accounts alike; a tenant id in its place limits to one tenant.
    authorization_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    token_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    device_authorization_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode",
    // Microsoft has no RFC 7009 revocation endpoint: logout forgets the token locally.
    scopes: [
      "https://outlook.office.com/IMAP.AccessAsUser.All",
      "https://outlook.office.com/SMTP.Send",
      "offline_access",
    ],
  },
};

/** Environment variables holding a preset's client id and secret (config.toml's values win). */
export const OAUTH_ENV: Record<OAuthPreset, { clientId: string; clientSecret: string }> = {
  google: { clientId: "CHAINMAIL_GOOGLE_CLIENT_ID", clientSecret: "CHAINMAIL_GOOGLE_CLIENT_SECRET" },
  microsoft: {
    clientId: "CHAINMAIL_MICROSOFT_CLIENT_ID",
    clientSecret: "CHAINMAIL_MICROSOFT_CLIENT_SECRET",
  },
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
