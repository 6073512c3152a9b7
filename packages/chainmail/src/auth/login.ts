/**
 * Signing an account in and out, as the CLI runs it (`chainmail auth login|logout`). The sign-in runs
 * in the CLI's process, not the daemon's: it talks to the user (a URL to open, a code to type), may
 * listen on a loopback port for the browser's redirect, and must work before any daemon runs. It ends
 * by writing the refresh token to the secrets dir; a running daemon sees the new file at the account's
 * next login (src/auth/credentials.ts) and needs no restart. The access token of the sign-in is not
 * kept: only the daemon holds access tokens, in memory.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import type { AccountConfig } from "../config.js";
import { MailError } from "../errors.js";
import {
  browserRequest,
  deviceFlow,
  type DevicePrompt,
  oauthClient,
  oauthErrorOf,
  redeemCode,
  revoke,
  type Tokens,
} from "./oauth.js";
import { deleteGrant, loadGrant, saveGrant } from "./store.js";

export interface SignInOptions {
  flow: "browser" | "device";
  /** Where to tell the user what to do (the URL to open, the device code). */
  say: (line: string) => void;
  /** Also open the URL with xdg-open (a desktop); by default it is only printed (headless machines). */
  openBrowser?: boolean;
  /** How long to wait for the browser's redirect; default 10 minutes. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface SignInResult {
  account: string;
  flow: "browser" | "device";
  scope: string | undefined;
}

/** The flow to use when none is asked for: the browser where the provider has one. */
export function defaultFlow(account: AccountConfig): "browser" | "device" {
  return account.oauth?.authorization_endpoint ? "browser" : "device";
}

/**
 * Stores a sign-in's grant, once it is one the daemon can use: it has a refresh token, and the
 * provider granted every scope asked for (a person may untick one on a consent page; the mail
 * servers would then refuse every login, which is better said now).
 */
export async function saved(
  account: AccountConfig,
  flow: SignInResult["flow"],
  tokens: Tokens,
  secretsDir: string,
): Promise<SignInResult> {
  if (!tokens.refresh_token)
    throw new MailError(
      "AUTH_REQUIRED",
      `the provider of account ${account.name} gave no refresh token, so the daemon could not stay signed in`,
      "Check the scopes in [accounts.oauth] (Microsoft needs offline_access).",
    );
  const missing = missingScopes(account.oauth?.scopes ?? [], tokens.scope);
  if (missing.length)
    throw new MailError(
      "AUTH_REQUIRED",
      `the provider did not grant account ${account.name} every permission it asked for (missing: ${missing.join(" ")})`,
      "Sign in again and allow every permission the provider's page asks for.",
    );
  await saveGrant(secretsDir, account.name, { refresh_token: tokens.refresh_token, scope: tokens.scope });
  return { account: account.name, flow, scope: tokens.scope };
}

function refused(err: unknown, account: string): never {
  const oe = oauthErrorOf(err);
  if (oe)
    throw new MailError(
      "AUTH_REQUIRED",
      `the provider refused the sign-in of account ${account} (${oe.said})`,
      "Run the sign-in again; check client_id and the scopes if it keeps failing.",
      oe.detail,
    );
  throw err;
}

export async function signIn(
  account: AccountConfig,
  secretsDir: string,
  o: SignInOptions,
): Promise<SignInResult> {
  const client = oauthClient(account, o.env);
  if (o.flow === "device") {
    let tokens: Tokens;
    try {
      tokens = await deviceFlow(client, (p: DevicePrompt) => {
        o.say(`To sign in ${account.name}, open ${p.verification_uri} and enter the code ${p.user_code}`);
        if (p.verification_uri_complete) o.say(`(or open ${p.verification_uri_complete})`);
        o.say(`Waiting for the approval (the code expires in ${Math.round(p.expires_in / 60)} min)...`);
      });
    } catch (err) {
      refused(err, account.name);
    }
    return saved(account, "device", tokens, secretsDir);
  }
  const tokens = await browserSignIn(account, o, client);
  return saved(account, "browser", tokens, secretsDir);
}

/** OpenID and offline scopes: asked for, but not echoed by every provider (Microsoft leaves them out). */
const UNECHOED = new Set(["offline_access", "openid", "profile", "email"]);

/**
 * The scopes asked for that a reply's `scope` does not list (none when it lists none: RFC 6749
 * section 5.1 lets a provider leave it out when it granted what was asked). Compared without case,
 * and a URL scope also by its last path segment, as Microsoft may shorten them or name another host.
 */
export function missingScopes(asked: readonly string[], granted: string | undefined): string[] {
  if (granted === undefined) return [];
  const short = (s: string) => s.slice(s.lastIndexOf("/") + 1);
  // (a granted URL scope by its last segment too: Microsoft may name another host of the same
  // resource, outlook.office365.com for outlook.office.com)
  const have = new Set(
    granted
      .toLowerCase()
      .split(" ")
      .flatMap((g) => [g, short(g)]),
  );
  return asked.filter((s) => {
    const l = s.toLowerCase();
    return !UNECHOED.has(l) && !have.has(l) && !(short(l) !== "" && have.has(short(l)));
  });
}

const DONE_PAGE = (text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>chainmail</title></head><body><p>${text}</p></body></html>`;

/** A browser sign-in under way: the URL to open, and the tokens once the redirect came back. */
export interface BrowserFlow {
  url: URL;
  /** The tokens of the sign-in; rejects with AUTH_REQUIRED when refused or not finished in time. */
  done: Promise<Tokens>;
  /** Stops listening (the flow then rejects, unless it finished). */
  cancel(): void;
}

/**
 * The authorization code flow with PKCE and a loopback redirect (RFC 8252 section 7.3): a one-shot
 * HTTP server on 127.0.0.1 and a port the system picks. A redirect whose `state` is not ours (another
 * page, an attacker's link), or that names another host (a web page rebinding its DNS name to
 * 127.0.0.1), is answered 400 and ignored; the sign-in keeps waiting for the right one. The first
 * right one is the only one redeemed: a code presented twice may make the provider revoke the grant
 * it gave (RFC 6749 section 4.1.2).
 * The CLI runs it in its own process (`chainmail auth login`); the daemon runs it for a sign-in asked
 * from the chat (src/auth/flows.ts), where `unref` keeps a waiting listener from holding the daemon up.
 */
export async function startBrowserFlow(
  account: AccountConfig,
  client: ReturnType<typeof oauthClient>,
  o: { timeoutMs?: number; unref?: boolean; done?: string } = {},
): Promise<BrowserFlow> {
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  if (o.unref) server.unref();
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  let req: Awaited<ReturnType<typeof browserRequest>>;
  try {
    req = await browserRequest(client, `http://127.0.0.1:${port}/`);
  } catch (err) {
    close();
    throw err;
  }
  let cancel: () => void = () => undefined;
  let taken = false;
  const done = new Promise<Tokens>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new MailError("AUTH_REQUIRED", "the browser sign-in was not completed in time", "Run it again."),
        ),
      o.timeoutMs ?? 600_000,
    );
    if (o.unref) timer.unref();
    cancel = () => {
      clearTimeout(timer);
      reject(new MailError("AUTH_REQUIRED", "the browser sign-in was cancelled", "Run it again."));
    };
    server.on("request", (hreq: http.IncomingMessage, hres: http.ServerResponse) => {
      const url = new URL(hreq.url ?? "/", `http://127.0.0.1:${port}`);
      const answer = (status: number, text: string) => {
        hres.writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" });
        hres.end(DONE_PAGE(text));
      };
      if (
        taken ||
        hreq.headers.host !== `127.0.0.1:${port}` ||
        url.pathname !== "/" ||
        url.searchParams.get("state") !== req.state
      ) {
        answer(400, "This is not the sign-in chainmail is waiting for.");
        return;
      }
      taken = true;
      clearTimeout(timer);
      redeemCode(client, req, url).then(
        (tokens) => {
          answer(200, `Signed in. You can close this window and return to ${o.done ?? "the terminal"}.`);
          resolve(tokens);
        },
        (err: unknown) => {
          answer(400, `The sign-in failed; see ${o.done ?? "the terminal"}.`);
          try {
            refused(err, account.name);
          } catch (e) {
            reject(e);
          }
        },
      );
    });
  });
  // Closed however it ends; the caller still sees the outcome through `done`.
  done.then(close, close);
  return { url: req.url, done, cancel: () => cancel() };
}

async function browserSignIn(
  account: AccountConfig,
  o: SignInOptions,
  client: ReturnType<typeof oauthClient>,
): Promise<Tokens> {
  const flow = await startBrowserFlow(account, client, o.timeoutMs ? { timeoutMs: o.timeoutMs } : {});
  o.say(`To sign in ${account.name}, open this URL in a browser:`);
  o.say(flow.url.toString());
  if (o.openBrowser) {
    // No shell: the URL is one argument. A missing xdg-open only means the user opens it by hand.
    const child = spawn("xdg-open", [flow.url.toString()], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  }
  return flow.done;
}

export interface SignOutResult {
  account: string;
  /** The provider revoked the grant (false: it has no revocation endpoint, or could not be reached). */
  revoked: boolean;
  /** A stored grant was deleted. */
  deleted: boolean;
  /** Why revocation did not happen, when it was tried. */
  warning?: string;
}

/** Revokes the grant where the provider has an endpoint, then deletes it here in any case. */
export async function signOut(
  account: AccountConfig,
  secretsDir: string,
  opts: { revoke?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<SignOutResult> {
  const grant = loadGrant(secretsDir, account.name);
  let revoked = false;
  let warning: string | undefined;
  if (grant && account.oauth?.revocation_endpoint && opts.revoke === false)
    warning = "not revoked at the provider: the account's server settings wait for confirmation";
  else if (grant && account.oauth?.revocation_endpoint) {
    try {
      revoked = await revoke(oauthClient(account, opts.env), grant.refresh_token);
    } catch (err) {
      const oe = oauthErrorOf(err);
      warning = oe
        ? `the provider refused the revocation (${oe.said})`
        : err instanceof MailError
          ? err.message
          : "the provider's revocation endpoint could not be reached";
    }
  }
  const deleted = await deleteGrant(secretsDir, account.name);
  return { account: account.name, revoked, deleted, ...(warning ? { warning } : {}) };
}
