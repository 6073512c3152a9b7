/**
 * The OAuth2 protocol steps chainmail takes, over oauth4webapi (standards-only, no dependencies): the
 * authorization code grant with PKCE (RFC 7636), the device authorization grant (RFC 8628), the
 * refresh token grant and revocation (RFC 7009). This module knows no files and no daemon.
 */
import * as oauth from "oauth4webapi";
import type { AccountConfig, OAuthConfig } from "../config.js";
import { MailError } from "../errors.js";
import { OAUTH_ENV } from "./providers.js";
import {
  checkDevicePrompt,
  checkScope,
  checkToken,
  providerFailure,
  type Refusal,
  refusalOf,
  requestOptions,
  UnusableReply,
} from "./replies.js";

export interface Tokens {
  access_token: string;
  /** Seconds the access token lives, as the server said (absent: unknown). */
  expires_in: number | undefined;
  refresh_token: string | undefined;
  scope: string | undefined;
}

export interface OAuthClient {
  /** The account's name, for messages. */
  account: string;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  config: OAuthConfig;
  /**
   * oauth4webapi refuses http:// unless told (config/validate.ts allows it only on loopback hosts);
   * every request is bounded in size and time (./replies.ts).
   */
  options: ReturnType<typeof requestOptions> & { [oauth.allowInsecureRequests]?: boolean };
}

export const loginHint = (account: string) =>
  `The user runs \`chainmail auth login ${account}\` to sign in again.`;

/** The account's OAuth2 client; the client id comes from config.toml, else the preset's env variable. */
export function oauthClient(account: AccountConfig, env: NodeJS.ProcessEnv = process.env): OAuthClient {
  const config = account.oauth;
  if (!config)
    throw new MailError(
      "INVALID_ARGUMENT",
      `account ${account.name} does not sign in with OAuth2`,
      "Add [accounts.oauth] for it in config.toml, or store a password with `chainmail secret set`.",
    );
  const names = config.preset ? OAUTH_ENV[config.preset] : undefined;
  const clientId = config.client_id ?? (names ? env[names.clientId] : undefined);
  const clientSecret = config.client_secret ?? (names ? env[names.clientSecret] : undefined);
  if (!clientId)
    throw new MailError(
      "CONFIG_INVALID",
      `account ${account.name} has no OAuth2 client id`,
      names
        ? `Set client_id in [accounts.oauth] or the environment variable ${names.clientId} (see the chainmail README: registering an app).`
        : "Set client_id in [accounts.oauth] in config.toml.",
    );
  const endpoints = [
    config.authorization_endpoint,
    config.token_endpoint,
    config.device_authorization_endpoint,
    config.revocation_endpoint,
  ];
  const insecure = endpoints.some((u) => u?.startsWith("http:"));
  return {
    account: account.name,
    as: {
      // No discovery and no ID token are used, so the issuer only names the server for oauth4webapi.
      issuer: new URL(config.token_endpoint).origin,
      authorization_endpoint: config.authorization_endpoint,
      token_endpoint: config.token_endpoint,
      device_authorization_endpoint: config.device_authorization_endpoint,
      revocation_endpoint: config.revocation_endpoint,
    },
    client: { client_id: clientId },
    auth: clientSecret ? oauth.ClientSecretPost(clientSecret) : oauth.None(),
    config,
    options: { ...requestOptions(env), ...(insecure ? { [oauth.allowInsecureRequests]: true } : {}) },
  };
}

/** The tokens of a reply, checked: a bearer token and a refresh token chainmail may pass on and store. */
function tokensOf(r: oauth.TokenEndpointResponse): Tokens {
  // oauth4webapi also takes DPoP, which chainmail never asked for and XOAUTH2 cannot carry.
  if (r.token_type !== "bearer") throw new UnusableReply("its token_type is not Bearer");
  return {
    access_token: checkToken(r.access_token, "access_token"),
    expires_in: typeof r.expires_in === "number" ? r.expires_in : undefined,
    refresh_token:
      typeof r.refresh_token === "string" ? checkToken(r.refresh_token, "refresh_token") : undefined,
    scope: checkScope(r.scope),
  };
}

/** The provider's refusal of a request (`invalid_grant`, `slow_down`, ...), if it was one. */
export function oauthErrorOf(err: unknown): Refusal | undefined {
  return refusalOf(err);
}

/**
 * One exchange with the provider: a refusal passes through (see oauthErrorOf), any other failure is
 * SERVER_UNAVAILABLE saying which endpoint failed how (./replies.ts).
 */
async function exchange<T>(c: OAuthClient, endpoint: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw providerFailure(err, c.account, endpoint);
  }
}

/** Exchanges a refresh token. */
export function refreshGrant(c: OAuthClient, refreshToken: string): Promise<Tokens> {
  return exchange(c, "token endpoint", async () => {
    const res = await oauth.refreshTokenGrantRequest(c.as, c.client, c.auth, refreshToken, c.options);
    return tokensOf(await oauth.processRefreshTokenResponse(c.as, c.client, res));
  });
}

/** Revokes a token where the provider has an endpoint (RFC 7009); false when it has none. */
export async function revoke(c: OAuthClient, token: string): Promise<boolean> {
  if (!c.as.revocation_endpoint) return false;
  return exchange(c, "revocation endpoint", async () => {
    const res = await oauth.revocationRequest(c.as, c.client, c.auth, token, {
      ...c.options,
      additionalParameters: { token_type_hint: "refresh_token" },
    });
    await oauth.processRevocationResponse(res);
    return true;
  });
}

export interface BrowserRequest {
  url: URL;
  state: string;
  verifier: string;
  redirectUri: string;
}

/** The authorization URL of a code flow with PKCE S256 and a fresh `state`, for this redirect URI. */
export async function browserRequest(c: OAuthClient, redirectUri: string): Promise<BrowserRequest> {
  if (!c.as.authorization_endpoint)
    throw new MailError(
      "UNSUPPORTED",
      "the account's OAuth2 provider has no authorization_endpoint for a browser sign-in",
      "Use --device, or set authorization_endpoint in [accounts.oauth].",
    );
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(c.as.authorization_endpoint);
  url.searchParams.set("client_id", c.client.client_id);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", c.config.scopes.join(" "));
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  if (c.config.preset === "google") {
    // Google gives a refresh token only for offline access, and again only after a fresh consent.
    url.searchParams.set("access_type", "offline");
    url.searchParams.set("prompt", "consent");
  }
  return { url, state, verifier, redirectUri };
}

/**
 * Checks the redirect's `state` and error, then redeems the code with the PKCE verifier. A wrong
 * state is refused before anything is sent to the server.
 */
export async function redeemCode(c: OAuthClient, req: BrowserRequest, callback: URL): Promise<Tokens> {
  const params = new URLSearchParams(callback.searchParams);
  // Only one authorization server takes part in a sign-in, so the mix-up defence of RFC 9207 (`iss`)
  // does not apply, and providers differ in how they spell their issuer.
  params.delete("iss");
  const checked = oauth.validateAuthResponse(c.as, c.client, params, req.state);
  return exchange(c, "token endpoint", async () => {
    const res = await oauth.authorizationCodeGrantRequest(
      c.as,
      c.client,
      c.auth,
      checked,
      req.redirectUri,
      req.verifier,
      c.options,
    );
    return tokensOf(await oauth.processAuthorizationCodeResponse(c.as, c.client, res));
  });
}

export interface DevicePrompt {
  verification_uri: string;
  verification_uri_complete: string | undefined;
  user_code: string;
  expires_in: number;
}

/** The polling interval the device flow keeps to, whatever the provider says (RFC 8628 says 5 s). */
const POLL_MS = { min: 1000, max: 60_000 };
/** The longest a device code is waited for: an hour (Google's live 30 min, Microsoft's 15). */
const DEVICE_CODE_MAX_S = 3600;

/**
 * The device flow (RFC 8628): asks for a code, shows it (`show`), then polls the token endpoint at
 * the server's interval, 5 s more after each `slow_down`, until the user approves, denies, or the
 * code expires. The prompt is checked before it is shown (./replies.ts); the interval is kept
 * between 1 and 60 s and the wait to an hour, so no reply makes it poll without pause or forever.
 * `sleep` is injectable so a test's clock is the real one but its waits can be observed.
 */
export async function deviceFlow(
  c: OAuthClient,
  show: (p: DevicePrompt) => void,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<Tokens> {
  if (!c.as.device_authorization_endpoint)
    throw new MailError(
      "UNSUPPORTED",
      "the account's OAuth2 provider has no device_authorization_endpoint",
      "Sign in with the browser flow (chainmail auth login ACCOUNT --browser).",
    );
  const d = await exchange(c, "device authorization endpoint", async () => {
    const res = await oauth.deviceAuthorizationRequest(
      c.as,
      c.client,
      c.auth,
      { scope: c.config.scopes.join(" ") },
      c.options,
    );
    const d = await oauth.processDeviceAuthorizationResponse(c.as, c.client, res);
    checkDevicePrompt(d);
    return d;
  });
  const expiresIn = Math.min(d.expires_in, DEVICE_CODE_MAX_S);
  show({
    verification_uri: d.verification_uri,
    verification_uri_complete: d.verification_uri_complete,
    user_code: d.user_code,
    expires_in: expiresIn,
  });
  const clamp = (ms: number) => Math.min(Math.max(ms, POLL_MS.min), POLL_MS.max);
  let interval = clamp((d.interval ?? 5) * 1000);
  const deadline = Date.now() + expiresIn * 1000;
  for (;;) {
    // Never past the code's end: one last poll then says whether it was approved in time.
    await sleep(Math.max(0, Math.min(interval, deadline - Date.now())));
    try {
      return await exchange(c, "token endpoint", async () => {
        const r = await oauth.deviceCodeGrantRequest(c.as, c.client, c.auth, d.device_code, c.options);
        return tokensOf(await oauth.processDeviceCodeResponse(c.as, c.client, r));
      });
    } catch (err) {
      const e = oauthErrorOf(err);
      if (e?.error === "authorization_pending" && Date.now() < deadline) continue;
      if (e?.error === "slow_down" && Date.now() < deadline) {
        interval = clamp(interval + 5000); // RFC 8628 section 3.5
        continue;
      }
      if (e?.error === "access_denied")
        throw new MailError(
          "AUTH_REQUIRED",
          "the sign-in was denied at the provider",
          "Sign in again and approve.",
        );
      if (e?.error === "expired_token" || e?.error === "authorization_pending" || e?.error === "slow_down")
        throw new MailError(
          "AUTH_REQUIRED",
          "the sign-in code expired before it was approved",
          "Run the sign-in again and enter the code sooner.",
        );
      throw err;
    }
  }
}
