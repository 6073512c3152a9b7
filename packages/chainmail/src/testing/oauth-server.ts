/**
 * A real OAuth2 authorization server for tests, on 127.0.0.1 and a free port: what Google's and
 * Microsoft's servers do for a mail client, strictly.
 *
 * - GET /authorize shows a sign-in page (the "user" types a name and presses Sign in; a browser test
 *   drives it in Chromium); POST /authorize redirects to the loopback redirect_uri with a code and the
 *   `state`. PKCE S256 is required.
 * - POST /token: authorization_code (the verifier must match the challenge; a code works once),
 *   refresh_token with rotation (each refresh token is accepted once, a replay is invalid_grant),
 *   and the device_code grant (authorization_pending, slow_down, access_denied, expired_token).
 * - POST /device_authorization (RFC 8628), POST /revoke (RFC 7009: ends the whole grant),
 *   POST /introspect (RFC 7662, what Dovecot's oauth2 passdb asks: {active, username}).
 *
 * Access tokens live `accessTokenSeconds` (short in tests), so expiry is real: an expired token is
 * inactive at /introspect and Dovecot refuses it.
 *
 * `tamper` turns it into a hostile or broken provider for attack tests: the /token and
 * /device_authorization replies can be replaced (then nothing else happens: a refresh token sent is
 * not used up), edited after the real processing, or made to hang or flood.
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";

export interface OAuthTestServerOptions {
  clientId?: string;
  /** When set, the token endpoint requires it (client_secret_post), like Google's installed apps. */
  clientSecret?: string;
  /** Seconds an access token lives; default 3600. */
  accessTokenSeconds?: number;
  /** The device flow's polling interval in seconds; default 1. */
  deviceInterval?: number;
  /** Seconds a device code lives; default 600. */
  deviceCodeSeconds?: number;
  /** Answer this many device-code polls with slow_down before the others are judged. */
  slowDownPolls?: number;
}

interface Grant {
  id: number;
  username: string;
  scope: string;
  revoked: boolean;
}

interface TokenRecord {
  grant: Grant;
  expiresAt: number;
}

interface DeviceRecord {
  user_code: string;
  scope: string;
  expiresAt: number;
  approvedBy: string | undefined;
  denied: boolean;
  lastPoll: number;
}

/** What a hostile or broken provider answers in place of the real reply. */
export type TamperedReply =
  /** This reply instead of the real one; the request is not processed (nothing is used up). */
  | { status?: number; contentType?: string; body: string }
  /** The real reply, its JSON edited (extra or missing fields, other values). */
  | { edit: (real: Record<string, unknown>) => Record<string, unknown> }
  /** The headers of a 200, then 64 MiB of one JSON string that never closes, or less if the client goes away. */
  | { flood: true }
  /** The headers of a 200, then nothing. */
  | { hang: true };

export type Tamper = (request: {
  endpoint: "token" | "device_authorization";
  /** The grant_type of a /token request. */
  grant_type?: string;
}) => TamperedReply | undefined;

/** One request to /token, as the server saw it. */
export interface TokenRequest {
  grant_type: string;
  at: number;
  /** The answer: "ok" or the OAuth error code. */
  outcome: string;
}

export interface OAuthTestServer {
  /** http://127.0.0.1:PORT */
  url: string;
  clientId: string;
  endpoints: {
    authorization_endpoint: string;
    token_endpoint: string;
    device_authorization_endpoint: string;
    revocation_endpoint: string;
    introspection_endpoint: string;
  };
  /** Every /token request, in order. */
  tokenRequests: TokenRequest[];
  /** The most /token refresh requests that were being answered at once (single flight check). */
  maxConcurrentRefreshes(): number;
  /** The user approves a device code (what they would do on the verification page). */
  approveDevice(userCode: string, username: string): void;
  denyDevice(userCode: string): void;
  /** The user revokes every grant of theirs (e.g. on the provider's security page). */
  revokeUser(username: string): void;
  /** The username an access token stands for, if it is live (what /introspect answers). */
  introspect(token: string): string | undefined;
  /** Makes every live access token expire now (refresh tokens still work). */
  expireAccessTokens(): void;
  /**
   * While true, /introspect (and `introspect`) deny every access token though /token still issues
   * them: the mail servers refuse this provider's tokens (IMAP turned off for the account, say).
   */
  refuseAllTokens(on: boolean): void;
  /** How many refresh tokens were issued and not yet used or revoked. */
  liveRefreshTokens(): number;
  /** Makes the provider hostile or broken (see TamperedReply); undefined: honest again. */
  tamper(with_: Tamper | undefined): void;
  /** Requests to /token and /device_authorization that were answered by `tamper`. */
  tamperedRequests(): number;
  /** Whether a flood was sent to its end: its client read 64 MiB instead of hanging up. */
  floodedToTheEnd(): boolean;
  stop(): Promise<void>;
}

const FLOOD_BYTES = 64 * 1024 * 1024;

const token = (prefix: string) => `${prefix}-${randomBytes(24).toString("base64url")}`;

function page(body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Test sign-in</title></head><body>${body}</body></html>`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startOAuthServer(opts: OAuthTestServerOptions = {}): Promise<OAuthTestServer> {
  const clientId = opts.clientId ?? "chainmail-test-client";
  const ttl = opts.accessTokenSeconds ?? 3600;
  const interval = opts.deviceInterval ?? 1;
  let slowDowns = opts.slowDownPolls ?? 0;
  let grantIds = 0;
  const codes = new Map<
    string,
    { grant: Grant; redirect_uri: string; challenge: string; expiresAt: number }
  >();
  const access = new Map<string, TokenRecord>();
  const refresh = new Map<string, Grant>(); // live refresh tokens only: a used one is deleted
  const devices = new Map<string, DeviceRecord>();
  const tokenRequests: TokenRequest[] = [];
  let refreshing = 0;
  let maxRefreshing = 0;

  const issue = (grant: Grant) => {
    const at = token("at");
    const rt = token("rt");
    access.set(at, { grant, expiresAt: Date.now() + ttl * 1000 });
    refresh.set(rt, grant);
    return {
      access_token: at,
      token_type: "Bearer",
      expires_in: ttl,
      refresh_token: rt,
      scope: grant.scope,
    };
  };

  const readBody = (req: http.IncomingMessage) =>
    new Promise<URLSearchParams>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString("utf8"))));
      req.on("error", reject);
    });

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };
  const oauthError = (res: http.ServerResponse, error: string, status = 400) =>
    json(res, status, { error, error_description: error });

  /** The client authenticates as registered: its id, and its secret when it has one. */
  const clientOk = (req: http.IncomingMessage, body: URLSearchParams): boolean => {
    let id = body.get("client_id");
    let secret = body.get("client_secret");
    const basic = req.headers.authorization;
    if (basic?.startsWith("Basic ")) {
      const [u, p] = Buffer.from(basic.slice(6), "base64").toString().split(":");
      id = decodeURIComponent(u ?? "");
      secret = decodeURIComponent(p ?? "");
    }
    if (id !== clientId) return false;
    return opts.clientSecret === undefined || secret === opts.clientSecret;
  };

  const loopbackRedirect = (uri: string | null): uri is string => {
    if (!uri) return false;
    try {
      const u = new URL(uri);
      return u.protocol === "http:" && (u.hostname === "127.0.0.1" || u.hostname === "[::1]");
    } catch {
      return false;
    }
  };

  async function authorize(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
    const p = req.method === "POST" ? await readBody(req) : url.searchParams;
    const redirect = p.get("redirect_uri");
    if (p.get("client_id") !== clientId || !loopbackRedirect(redirect)) {
      res.writeHead(400, { "content-type": "text/html" });
      res.end(page("<p id=error>unknown client or redirect_uri</p>"));
      return;
    }
    const back = (params: Record<string, string>) => {
      const to = new URL(redirect);
      for (const [k, v] of Object.entries(params)) to.searchParams.set(k, v);
      res.writeHead(302, { location: to.toString() });
      res.end();
    };
    const state = p.get("state") ?? "";
    if (p.get("response_type") !== "code") return back({ error: "unsupported_response_type", state });
    if (p.get("code_challenge_method") !== "S256" || !p.get("code_challenge"))
      return back({ error: "invalid_request", error_description: "PKCE S256 is required", state });
    if (req.method !== "POST") {
      const hidden = [...p.entries()]
        .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
        .join("");
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        page(
          `<h1>Sign in to the test provider</h1><form method="post" action="/authorize">${hidden}` +
            `<label>User <input id="username" name="username"></label>` +
            `<button id="allow" name="decision" value="allow">Sign in</button>` +
            `<button id="deny" name="decision" value="deny">Cancel</button></form>`,
        ),
      );
      return;
    }
    if (p.get("decision") !== "allow" || !p.get("username")) return back({ error: "access_denied", state });
    const code = token("code");
    codes.set(code, {
      grant: { id: ++grantIds, username: p.get("username")!, scope: p.get("scope") ?? "", revoked: false },
      redirect_uri: redirect,
      challenge: p.get("code_challenge")!,
      expiresAt: Date.now() + 60_000,
    });
    back({ code, state });
  }

  async function tokenEndpoint(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: URLSearchParams,
    json: (res: http.ServerResponse, status: number, body: unknown) => void,
  ) {
    const oauthError = (res: http.ServerResponse, error: string, status = 400) =>
      json(res, status, { error, error_description: error });
    const type = body.get("grant_type") ?? "";
    const record = (outcome: string) => tokenRequests.push({ grant_type: type, at: Date.now(), outcome });
    const fail = (error: string, status = 400) => {
      record(error);
      oauthError(res, error, status);
    };
    if (!clientOk(req, body)) return fail("invalid_client", 401);
    if (type === "authorization_code") {
      const c = codes.get(body.get("code") ?? "");
      codes.delete(body.get("code") ?? "");
      if (!c || c.expiresAt < Date.now() || c.redirect_uri !== body.get("redirect_uri"))
        return fail("invalid_grant");
      const verifier = body.get("code_verifier") ?? "";
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      if (challenge !== c.challenge) return fail("invalid_grant");
      record("ok");
      return json(res, 200, issue(c.grant));
    }
    if (type === "refresh_token") {
      refreshing++;
      maxRefreshing = Math.max(maxRefreshing, refreshing);
      try {
        // A short pause, as a remote server has: two refreshes sent at once overlap here.
        await new Promise((r) => setTimeout(r, 30));
        const rt = body.get("refresh_token") ?? "";
        const grant = refresh.get(rt);
        if (!grant || grant.revoked) return fail("invalid_grant");
        refresh.delete(rt); // rotation: each refresh token is accepted once
        record("ok");
        return json(res, 200, issue(grant));
      } finally {
        refreshing--;
      }
    }
    if (type === "urn:ietf:params:oauth:grant-type:device_code") {
      const d = devices.get(body.get("device_code") ?? "");
      if (!d) return fail("invalid_grant");
      const now = Date.now();
      const early = now - d.lastPoll < interval * 1000 - 50;
      d.lastPoll = now;
      if (d.expiresAt < now) return fail("expired_token");
      if (slowDowns > 0 || early) {
        if (slowDowns > 0) slowDowns--;
        return fail("slow_down");
      }
      if (d.denied) return fail("access_denied");
      if (!d.approvedBy) return fail("authorization_pending");
      devices.delete(body.get("device_code") ?? "");
      record("ok");
      return json(
        res,
        200,
        issue({ id: ++grantIds, username: d.approvedBy, scope: d.scope, revoked: false }),
      );
    }
    return fail("unsupported_grant_type");
  }

  function deviceAuthorization(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: URLSearchParams,
    json: (res: http.ServerResponse, status: number, body: unknown) => void,
  ) {
    if (!clientOk(req, body))
      return json(res, 401, { error: "invalid_client", error_description: "invalid_client" });
    const device_code = token("dc");
    const user_code = randomBytes(4).toString("hex").toUpperCase();
    devices.set(device_code, {
      user_code,
      scope: body.get("scope") ?? "",
      expiresAt: Date.now() + (opts.deviceCodeSeconds ?? 600) * 1000,
      approvedBy: undefined,
      denied: false,
      lastPoll: 0,
    });
    return json(res, 200, {
      device_code,
      user_code,
      verification_uri: `${base}/device`,
      expires_in: opts.deviceCodeSeconds ?? 600,
      interval,
    });
  }

  let tampering: Tamper | undefined;
  let tampered = 0;
  let floodedAll = false;
  const sendTampered = (res: http.ServerResponse, t: Exclude<TamperedReply, { edit: unknown }>) => {
    if ("body" in t) {
      res.writeHead(t.status ?? 200, { "content-type": t.contentType ?? "application/json" });
      res.end(t.body);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    if ("hang" in t) return;
    const chunk = Buffer.alloc(64 * 1024, "a");
    let left = FLOOD_BYTES / chunk.length;
    res.write('{"access_token":"');
    const pump = () => {
      while (!res.destroyed && left > 0) {
        left--;
        if (!res.write(chunk)) return;
      }
      if (left === 0 && !res.destroyed) res.end(() => (floodedAll = true));
    };
    res.on("drain", pump);
    pump();
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const run = async () => {
      if (url.pathname === "/authorize") return authorize(req, res, url);
      if (req.method !== "POST") {
        res.writeHead(404);
        res.end();
        return;
      }
      const body = await readBody(req);
      if (url.pathname === "/token" || url.pathname === "/device_authorization") {
        const endpoint = url.pathname === "/token" ? "token" : "device_authorization";
        const grant_type = body.get("grant_type") ?? undefined;
        const t = tampering?.({ endpoint, ...(grant_type ? { grant_type } : {}) });
        if (t) tampered++;
        if (t && !("edit" in t)) return sendTampered(res, t);
        const send = t
          ? (r: http.ServerResponse, status: number, b: unknown) =>
              json(r, status, t.edit(b as Record<string, unknown>))
          : json;
        if (endpoint === "token") return tokenEndpoint(req, res, body, send);
        return deviceAuthorization(req, res, body, send);
      }
      if (url.pathname === "/revoke") {
        if (!clientOk(req, body)) return oauthError(res, "invalid_client", 401);
        const t = body.get("token") ?? "";
        const grant = refresh.get(t) ?? access.get(t)?.grant;
        if (grant) grant.revoked = true;
        res.writeHead(200);
        res.end();
        return;
      }
      if (url.pathname === "/introspect") {
        const user = introspect(body.get("token") ?? "");
        return json(res, 200, user ? { active: true, username: user } : { active: false });
      }
      res.writeHead(404);
      res.end();
    };
    run().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  let refuseAll = false;
  const introspect = (t: string): string | undefined => {
    if (refuseAll) return undefined;
    const a = access.get(t);
    if (!a || a.grant.revoked || a.expiresAt < Date.now()) return undefined;
    return a.grant.username;
  };

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const base = `http://127.0.0.1:${port}`;

  const deviceByCode = (userCode: string) => {
    const d = [...devices.values()].find((x) => x.user_code === userCode);
    if (!d) throw new Error(`no device code ${userCode}`);
    return d;
  };

  return {
    url: base,
    clientId,
    endpoints: {
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      device_authorization_endpoint: `${base}/device_authorization`,
      revocation_endpoint: `${base}/revoke`,
      introspection_endpoint: `${base}/introspect`,
    },
    tokenRequests,
    maxConcurrentRefreshes: () => maxRefreshing,
    approveDevice: (userCode, username) => {
      deviceByCode(userCode).approvedBy = username;
    },
    denyDevice: (userCode) => {
      deviceByCode(userCode).denied = true;
    },
    revokeUser: (username) => {
      for (const g of [...refresh.values(), ...[...access.values()].map((a) => a.grant)])
        if (g.username === username) g.revoked = true;
    },
    introspect,
    expireAccessTokens: () => {
      for (const a of access.values()) a.expiresAt = 0;
    },
    refuseAllTokens: (on) => {
      refuseAll = on;
    },
    liveRefreshTokens: () => [...refresh.values()].filter((g) => !g.revoked).length,
    tamper: (t) => {
      tampering = t;
    },
    tamperedRequests: () => tampered,
    floodedToTheEnd: () => floodedAll,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A config.toml whose one account "work" (alice@example.com, user alice on the Dovecot at
 * `imapPort`, SMTP at `smtpPort`, no TLS) signs in with OAuth2 at `auth`, the cache off. With
 * `device: false` the account names no device authorization endpoint (sign-in in a browser only).
 */
export function oauthAccountConfig(
  auth: OAuthTestServer,
  imapPort: number,
  smtpPort: number,
  opts: { device?: boolean } = {},
): string {
  const e = auth.endpoints;
  const device =
    opts.device === false ? "" : `device_authorization_endpoint = "${e.device_authorization_endpoint}"\n`;
  return `[cache]
enabled = false

[[accounts]]
name = "work"
provider = "imap"
address = "alice@example.com"
username = "alice"
[accounts.imap]
host = "127.0.0.1"
port = ${imapPort}
tls = "none"
[accounts.smtp]
host = "127.0.0.1"
port = ${smtpPort}
tls = "none"
[accounts.oauth]
client_id = "${auth.clientId}"
authorization_endpoint = "${e.authorization_endpoint}"
token_endpoint = "${e.token_endpoint}"
${device}revocation_endpoint = "${e.revocation_endpoint}"
scopes = ["mail"]
`;
}
