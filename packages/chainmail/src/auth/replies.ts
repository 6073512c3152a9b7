/**
 * What chainmail believes of an OAuth2 provider's replies. The provider (or whoever answers at a
 * misconfigured endpoint) is outside the owner's control: its tokens go into a SASL string and a
 * file, its device prompt is shown on a terminal, its error text reaches the agent. So each reply is
 * read within a size and a time limit, each token must be printable ASCII without spaces, each
 * device prompt an https page and a printable code, and its own error text travels only as a
 * MailError's `detail` (fenced for an agent, filtered for a terminal), never in a message.
 */
import * as oauth from "oauth4webapi";
import { MailError } from "../errors.js";
import { endpointProblem } from "./providers.js";

/** How long one request to the provider may take, reply included; CHAINMAIL_OAUTH_TIMEOUT_MS overrides. */
export const REQUEST_MS = 30_000;
/** Far above any token reply (a JWT access token with an ID token is a few KiB). */
export const MAX_REPLY_BYTES = 256 * 1024;

/** A reply chainmail will not use; the message is in chainmail's words (it says what is wrong). */
export class UnusableReply extends Error {}

/** A fetch that stops reading at MAX_REPLY_BYTES: a provider cannot fill the daemon's memory. */
async function boundedFetch(url: string, init: RequestInit): Promise<Response> {
  const res = await fetch(url, init);
  if (!res.body) return res;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new UnusableReply(`its reply is longer than ${MAX_REPLY_BYTES / 1024} KiB`);
    }
    chunks.push(value);
  }
  const noBody = res.status === 204 || res.status === 205 || res.status === 304;
  return new Response(noBody ? null : Buffer.concat(chunks), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/** oauth4webapi's options for every request: the bounded fetch, and a deadline per request. */
export function requestOptions(env: NodeJS.ProcessEnv): {
  [oauth.customFetch]: typeof boundedFetch;
  signal: () => AbortSignal;
} {
  const set = Number(env["CHAINMAIL_OAUTH_TIMEOUT_MS"]);
  const ms = Number.isFinite(set) && set > 0 ? set : REQUEST_MS;
  return { [oauth.customFetch]: boundedFetch, signal: () => AbortSignal.timeout(ms) };
}

/** RFC 6749 VSCHAR less the space: what an access or refresh token may hold (A.12, A.17). */
const TOKEN_RE = /^[\x21-\x7e]+$/;
/** A scope token (RFC 6749 section 3.3). */
const SCOPE_RE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export function isTokenText(s: string): boolean {
  return TOKEN_RE.test(s);
}

export function checkToken(value: string, what: string): string {
  if (!TOKEN_RE.test(value))
    throw new UnusableReply(`its ${what} has characters no token has (controls, spaces or non-ASCII)`);
  return value;
}

/** The scopes of a reply, or undefined when it names none; a malformed list is refused. */
export function checkScope(scope: unknown): string | undefined {
  if (typeof scope !== "string") return undefined;
  const parts = scope.split(" ").filter((s) => s !== "");
  if (parts.length === 0) return undefined;
  if (!parts.every((s) => SCOPE_RE.test(s))) throw new UnusableReply("its scope is not a list of scopes");
  return parts.join(" ");
}

/** What the device flow shows the user: an https page (http only on loopback) and a printable code. */
export function checkDevicePrompt(d: {
  verification_uri: string;
  verification_uri_complete?: string | undefined;
  user_code: string;
}): void {
  for (const uri of [d.verification_uri, d.verification_uri_complete]) {
    if (uri === undefined) continue;
    if (!TOKEN_RE.test(uri) || endpointProblem(uri) !== undefined)
      throw new UnusableReply("its verification page is not an https:// URL");
  }
  if (!/^[\x20-\x7e]{1,64}$/.test(d.user_code) || d.user_code.trim() === "")
    throw new UnusableReply("its user code is not a short line of printable characters");
}

/**
 * Error codes the OAuth2 RFCs (6749, 7009, 8628) and OpenID Connect register: chainmail may name one
 * in a message. Any other `error` is the provider's own text, kept for the detail.
 */
const REGISTERED = new Set([
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "access_denied",
  "unsupported_response_type",
  "server_error",
  "temporarily_unavailable",
  "unsupported_token_type",
  "authorization_pending",
  "slow_down",
  "expired_token",
  "interaction_required",
  "login_required",
  "consent_required",
]);

export interface Refusal {
  /** The provider's code as it sent it: compare it, never print it. */
  error: string;
  /** What a message may say: the registered code, or words of chainmail's. */
  said: string;
  /** The provider's code and description, for MailError.detail. */
  detail: string;
}

/** The provider's refusal (an OAuth error reply, or an error in the browser's redirect), if it was one. */
export function refusalOf(err: unknown): Refusal | undefined {
  if (!(err instanceof oauth.ResponseBodyError) && !(err instanceof oauth.AuthorizationResponseError))
    return undefined;
  const description = typeof err.error_description === "string" ? err.error_description : undefined;
  return {
    error: err.error,
    said: REGISTERED.has(err.error) ? err.error : "an error of its own, in the detail",
    detail: `error: ${err.error}${description ? `\ndescription: ${description}` : ""}`,
  };
}

/**
 * Any other failure of a request to the provider, as SERVER_UNAVAILABLE in chainmail's words: not
 * reached, no answer in time, or an answer that is not a usable reply (what is wrong, in the detail).
 * A MailError or a refusal passes through unchanged.
 */
export function providerFailure(err: unknown, account: string, endpoint: string): unknown {
  if (err instanceof MailError || refusalOf(err)) return err;
  const who = `the OAuth2 ${endpoint} of account ${account}`;
  const name = (err as { name?: unknown } | undefined)?.name;
  if (name === "TimeoutError" || name === "AbortError")
    return new MailError("SERVER_UNAVAILABLE", `${who} did not answer in time`, "Try again later.");
  if (
    err instanceof UnusableReply ||
    err instanceof oauth.OperationProcessingError ||
    err instanceof oauth.UnsupportedOperationError ||
    err instanceof oauth.WWWAuthenticateChallengeError
  )
    return new MailError(
      "SERVER_UNAVAILABLE",
      `${who} answered with something that is not a usable OAuth2 reply`,
      "Try again later; if it keeps failing, check that endpoint in [accounts.oauth] in config.toml.",
      (err as Error).message,
    );
  return new MailError("SERVER_UNAVAILABLE", `${who} could not be reached`, "Try again later.");
}
