import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type HttpHandle, serveHttp } from "@mcpforge/toolkit";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import { type Browser, chromium, type Page } from "playwright-core";
import { type OAuthSetup, oauthMcpServer, oauthSetup } from "../src/app.js";
import type { TestApp as App } from "./helpers.js";
import type { ClientDocuments } from "../src/auth/documents.js";
import type { SignInLimiter } from "../src/auth/limiter.js";
import type { Restriction } from "../src/domain/access.js";
import { testApp } from "./helpers.js";

export const PASSWORD = "correct horse battery";

/** A free loopback port (the issuer names its port before the server listens). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export interface OAuthServer {
  app: App;
  setup: OAuthSetup;
  http: HttpHandle;
  base: string;
  mcpUrl: string;
  close(): Promise<void>;
}

/** Dexi's OAuth HTTP endpoint in process, exactly as dexi-mcp --http wires it, on a fresh store (testApp). */
export async function startOAuthServer(
  options: {
    now?: () => number;
    documents?: ClientDocuments;
    limiter?: SignInLimiter;
    users?: string[];
  } = {},
): Promise<OAuthServer> {
  const app = await testApp(options.now ? { now: options.now } : {});
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const setup = oauthSetup(app, {
    issuer: base,
    ...(options.now ? { now: options.now } : {}),
    ...(options.documents ? { documents: options.documents } : {}),
    ...(options.limiter ? { limiter: options.limiter } : {}),
  });
  for (const name of options.users ?? ["ann"]) {
    await app.store.accounts.ensureUser(name, Date.now());
    await setup.passwords.set(name, PASSWORD);
  }
  const http = await serveHttp(
    oauthMcpServer(app, () => {}),
    {
      host: "127.0.0.1",
      port,
      verifier: setup.verifier,
      routes: setup.routes,
      scopeChallenge: true,
      resourceMetadataUrl: setup.resourceMetadataUrl,
      log: () => {},
    },
  );
  return {
    app,
    setup,
    http,
    base,
    mcpUrl: `${base}/mcp`,
    close: async () => {
      await http.close();
      await app.close();
    },
  };
}

/** Headless Debian Chromium; playwright gives it a throwaway profile of its own. */
export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  return {
    browser,
    close: () => browser.close(),
  };
}

/** A loopback redirect target: each hit resolves the next `wait()` with its query. */
export async function callbackServer(): Promise<{
  url: string;
  wait(): Promise<URLSearchParams>;
  close(): Promise<void>;
}> {
  let waiting: ((q: URLSearchParams) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const q = new URL(req.url ?? "/", "http://127.0.0.1").searchParams;
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("done");
    const next = waiting.shift();
    next?.(q);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    wait: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => {
      waiting = [];
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The SDK's OAuth client provider contract, in memory; the authorization URL is kept for the test. */
export class TestProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  discovery?: OAuthDiscoveryState;
  authUrls: URL[] = [];

  constructor(
    readonly redirectUrl: string,
    readonly name = "Test App",
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authUrls.push(url);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error("no code verifier saved");
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") this.info = undefined;
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }
}

export interface ConsentChoice {
  user?: string;
  password?: string;
  /** Scopes to untick on the consent page. */
  untick?: string[];
  folder?: string;
  tag?: string;
  /** Where to write a screenshot of the sign-in and consent pages. */
  shots?: { signIn?: string; consent?: string };
}

/** Signs in (when asked to) and allows on the real pages, as a person would. */
export async function consentIn(page: Page, authUrl: URL, choice: ConsentChoice = {}): Promise<void> {
  await page.goto(authUrl.toString());
  if (await page.locator('input[name="password"]').count()) {
    if (choice.shots?.signIn) await page.screenshot({ path: choice.shots.signIn, fullPage: true });
    await page.fill('input[name="name"]', choice.user ?? "ann");
    await page.fill('input[name="password"]', choice.password ?? PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForSelector('button[value="allow"]');
  }
  if (choice.shots?.consent) await page.screenshot({ path: choice.shots.consent, fullPage: true });
  for (const scope of choice.untick ?? []) await page.uncheck(`input[name="scope"][value="${scope}"]`);
  if (choice.folder) await page.selectOption('select[name="folder"]', choice.folder);
  if (choice.tag) await page.selectOption('select[name="tag"]', choice.tag);
  await page.click('button[value="allow"]');
}

/** A cookie-keeping browser stand-in for tests that drive the pages by plain HTTP (no Chromium). */
export class FormClient {
  cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  async get(path: string): Promise<Response> {
    return this.keep(await fetch(new URL(path, this.base), { headers: this.headers(), redirect: "manual" }));
  }

  async post(path: string, form: Record<string, string | string[]>): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    return this.keep(
      await fetch(new URL(path, this.base), {
        method: "POST",
        headers: { ...this.headers(), "content-type": "application/x-www-form-urlencoded" },
        body,
        redirect: "manual",
      }),
    );
  }

  private headers(): Record<string, string> {
    const c = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    return c ? { cookie: c } : {};
  }

  private keep(r: Response): Response {
    for (const line of r.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [k, ...v] = pair!.split("=");
      this.cookies.set(k!, v.join("="));
    }
    return r;
  }
}

/** A hidden field's value in a page. */
export const field = (page: string, name: string): string =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? "";

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** Registers a public client by dynamic registration. */
export async function register(base: string, redirectUri: string, name = "Raw App"): Promise<string> {
  const r = await fetch(`${base}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri] }),
  });
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { client_id: string }).client_id;
}

export function authorizeUrl(
  base: string,
  q: {
    clientId: string;
    redirectUri: string;
    challenge?: string;
    method?: string;
    scope?: string;
    state?: string;
  },
): string {
  const u = new URL(`${base}/authorize`);
  u.searchParams.set("response_type", "code");
  u.searchParams.set("client_id", q.clientId);
  u.searchParams.set("redirect_uri", q.redirectUri);
  if (q.challenge !== undefined) u.searchParams.set("code_challenge", q.challenge);
  if (q.method !== undefined) u.searchParams.set("code_challenge_method", q.method);
  u.searchParams.set("scope", q.scope ?? "notes:read notes:write");
  u.searchParams.set("state", q.state ?? "st");
  u.searchParams.set("resource", `${base}/mcp`);
  return u.toString();
}

/**
 * Signs in and consents by plain HTTP; returns the redirect the consent answered with. `form`
 * overrides the consent form's fields (a forged CSRF token, a tag typed by hand).
 */
export async function rawConsent(
  browser: FormClient,
  url: string,
  form: Record<string, string | string[]> = {},
): Promise<Response> {
  let page = await browser.get(url);
  let html = await page.text();
  if (html.includes('name="password"')) {
    const signed = await browser.post("/signin", {
      csrf: field(html, "csrf"),
      next: field(html, "next").replaceAll("&amp;", "&"),
      name: "ann",
      password: PASSWORD,
    });
    page = await browser.get(signed.headers.get("location")!);
    html = await page.text();
  } else if (page.status === 303) {
    page = await browser.get(page.headers.get("location")!);
    html = await page.text();
  }
  return browser.post("/authorize/consent", {
    csrf: field(html, "csrf"),
    rid: field(html, "rid"),
    decision: "allow",
    scope: ["notes:read", "notes:write"],
    ...form,
  });
}

export async function tokenRequest(base: string, form: Record<string, string>): Promise<Response> {
  return fetch(`${base}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
}

/** A tools/list over HTTP with a bearer token; its status and WWW-Authenticate. */
export async function mcpCall(
  mcpUrl: string,
  token: string,
  body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
): Promise<Response> {
  return fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
    },
    body: JSON.stringify(body),
  });
}

export interface HttpRestricted {
  mcpUrl: string;
  /** A bearer token of a consent by `user` to both scopes within `restriction`. */
  tokenFor(user: string, restriction: Restriction): Promise<string>;
  close(): Promise<void>;
}

/**
 * Dexi's OAuth endpoint over an existing app, with grants made through the authorization server's
 * own consent and code exchange (no pages), for tests that need many differently restricted tokens.
 */
export async function restrictedOverHttp(app: App): Promise<HttpRestricted> {
  const port = await freePort();
  const setup = oauthSetup(app, { issuer: `http://127.0.0.1:${port}` });
  const http = await serveHttp(
    oauthMcpServer(app, () => {}),
    {
      host: "127.0.0.1",
      port,
      verifier: setup.verifier,
      routes: setup.routes,
      scopeChallenge: true,
      resourceMetadataUrl: setup.resourceMetadataUrl,
      log: () => {},
    },
  );
  const redirect = "http://127.0.0.1:9/cb";
  return {
    mcpUrl: `http://127.0.0.1:${port}/mcp`,
    async tokenFor(user, restriction) {
      const { auth } = setup;
      const { client_id } = (await auth.register({ client_name: "diff", redirect_uris: [redirect] })) as {
        client_id: string;
      };
      const p = pkce();
      const req = await auth.checkRequest(
        new URLSearchParams({
          client_id,
          redirect_uri: redirect,
          response_type: "code",
          code_challenge: p.challenge,
          code_challenge_method: "S256",
        }),
      );
      const uid = (await app.store.accounts.ensureUser(user, Date.now())).id;
      const back = new URL(
        await auth.consent(req, uid, { scopes: ["notes:read", "notes:write"], ...restriction }),
      );
      const code = back.searchParams.get("code") ?? "";
      return (
        await auth.token(
          new URLSearchParams({
            grant_type: "authorization_code",
            code,
            client_id,
            redirect_uri: redirect,
            code_verifier: p.verifier,
          }),
        )
      ).access_token;
    },
    close: () => http.close(),
  };
}
