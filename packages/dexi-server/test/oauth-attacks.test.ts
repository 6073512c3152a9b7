import { request as httpRequest } from "node:http";
import { connectHttp, postWithoutEnd } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oauthSetup } from "../src/app.js";
import { SignInLimiter } from "../src/auth/limiter.js";
import { REGISTRATIONS_PER_HOUR } from "../src/web/routes.js";
import { storeRows, userId } from "./helpers.js";
import {
  authorizeUrl,
  FormClient,
  field,
  mcpCall,
  type OAuthServer,
  PASSWORD,
  pkce,
  rawConsent,
  register,
  startOAuthServer,
  tokenRequest,
} from "./oauth-helpers.js";

/** Each attack on the authorization server and the resource server, refused, one test each. */

const REDIRECT = "http://127.0.0.1:9/callback";
let clock = Date.now();
let server: OAuthServer;

beforeAll(async () => {
  server = await startOAuthServer({ now: () => clock });
  const ann = { userId: await userId(server.app, "ann"), scopes: ["notes:read", "notes:write"] };
  await server.app.notes.create(ann, { title: "Plan", text: "The plan #work" });
});
afterAll(async () => server?.close());

interface Tokens {
  access_token: string;
  refresh_token: string;
  scope: string;
}

/** Registration, consent and code exchange by plain HTTP; what each step returned. */
async function flow(form: Record<string, string | string[]> = {}) {
  const clientId = await register(server.base, REDIRECT);
  const p = pkce();
  const consented = await rawConsent(
    new FormClient(server.base),
    authorizeUrl(server.base, { clientId, redirectUri: REDIRECT, challenge: p.challenge, method: "S256" }),
    form,
  );
  const back = new URL(consented.headers.get("location") ?? "http://x/");
  const code = back.searchParams.get("code") ?? "";
  const exchange = (over: Record<string, string> = {}) =>
    tokenRequest(server.base, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: p.verifier,
      resource: server.mcpUrl,
      ...over,
    });
  return { clientId, p, consented, back, code, exchange };
}

async function tokens(): Promise<Tokens & { clientId: string }> {
  const f = await flow();
  const r = await f.exchange();
  expect(r.status).toBe(200);
  return { ...((await r.json()) as Tokens), clientId: f.clientId };
}

const errorOf = async (r: Response) => (await r.json()) as { error: string; error_description: string };

describe("authorization requests", () => {
  it("refuses a redirect URI the client did not register, without redirecting", async () => {
    const clientId = await register(server.base, REDIRECT);
    const { challenge } = pkce();
    for (const wrong of [
      "http://127.0.0.1:9/other",
      "http://127.0.0.1:9//callback",
      "http://127.0.0.1:9/callback/",
      "http://127.0.0.1:9/callback?x=1",
    ]) {
      const r = await fetch(
        authorizeUrl(server.base, { clientId, redirectUri: wrong, challenge, method: "S256" }),
        {
          redirect: "manual",
        },
      );
      expect(r.status, wrong).toBe(400);
      expect(r.headers.get("location")).toBeNull();
      expect(await r.text()).toContain("The redirect URI is not one this app registered");
    }
  });

  it("refuses a request without PKCE, and one with the plain method", async () => {
    const clientId = await register(server.base, REDIRECT);
    const missing = await fetch(authorizeUrl(server.base, { clientId, redirectUri: REDIRECT }), {
      redirect: "manual",
    });
    const toMissing = new URL(missing.headers.get("location")!);
    expect(toMissing.origin + toMissing.pathname).toBe(REDIRECT);
    expect(toMissing.searchParams.get("error")).toBe("invalid_request");
    expect(toMissing.searchParams.get("error_description")).toContain("PKCE is required");
    expect(toMissing.searchParams.get("iss")).toBe(server.base);
    const plain = await fetch(
      authorizeUrl(server.base, {
        clientId,
        redirectUri: REDIRECT,
        challenge: "a".repeat(43),
        method: "plain",
      }),
      { redirect: "manual" },
    );
    const toPlain = new URL(plain.headers.get("location")!);
    expect(toPlain.searchParams.get("error")).toBe("invalid_request");
    expect(toPlain.searchParams.get("error_description")).toBe(
      "Only the S256 PKCE method is accepted, never plain",
    );
    expect(toPlain.searchParams.get("state")).toBe("st");
  });

  it("refuses a code redeemed without its verifier or with another one", async () => {
    const f = await flow();
    const r = await f.exchange({ code_verifier: pkce().verifier });
    expect(await errorOf(r)).toEqual({
      error: "invalid_grant",
      error_description: "code_verifier does not match the code_challenge",
    });
  });

  it("refuses a forged CSRF token on the consent form and issues no code", async () => {
    const f = await flow({ csrf: "csrf_forged" });
    expect(f.consented.status).toBe(403);
    expect(await f.consented.text()).toContain("This form is stale or was not sent from Dexi");
    expect(f.code).toBe("");
  });

  it("refuses a restriction tag Dexi's parser reads differently, typed into the form by hand", async () => {
    for (const [tag, readAs] of [
      ["work.notes", '"#work.notes" is not one tag: Dexi reads it as #work (a hashtag ends at ".")'],
      ["c++", '"#c++" is not one tag: Dexi reads it as #c (a hashtag ends at "+")'],
    ]) {
      const f = await flow({ tag: tag! });
      expect(f.consented.status, tag).toBe(400);
      expect((await f.consented.text()).replaceAll("&quot;", '"')).toContain(`Restriction tag ${readAs}`);
    }
    const notOwn = await flow({ folder: "Somebody else's" });
    expect(notOwn.consented.status).toBe(400);
    expect(await notOwn.consented.text()).toContain("Pick a folder and tag from your own notes");
  });
});

describe("codes", () => {
  it("takes a code once; a second use fails and revokes what the first one issued", async () => {
    const f = await flow();
    const first = await f.exchange();
    expect(first.status).toBe(200);
    const issued = (await first.json()) as Tokens;
    expect((await mcpCall(server.mcpUrl, issued.access_token)).status).not.toBe(401);
    const again = await f.exchange();
    expect(await errorOf(again)).toEqual({
      error: "invalid_grant",
      error_description: "This authorization code was already used",
    });
    expect((await mcpCall(server.mcpUrl, issued.access_token)).status).toBe(401);
  });

  it("refuses a code presented by another client", async () => {
    const f = await flow();
    const other = await register(server.base, REDIRECT, "Other App");
    const r = await f.exchange({ client_id: other });
    expect(await errorOf(r)).toEqual({
      error: "invalid_grant",
      error_description: "This authorization code was issued to another client",
    });
  });

  it("refuses a code after its minute", async () => {
    const f = await flow();
    clock += 61_000;
    const r = await f.exchange();
    expect(await errorOf(r)).toEqual({
      error: "invalid_grant",
      error_description: "This authorization code has expired",
    });
  });

  it("refuses a code with a redirect URI other than the request's", async () => {
    const f = await flow();
    const r = await f.exchange({ redirect_uri: "http://127.0.0.1:9//callback" });
    expect((await errorOf(r)).error).toBe("invalid_grant");
  });
});

describe("tokens", () => {
  it("stores codes and tokens only hashed", async () => {
    const t = await tokens();
    const dump = JSON.stringify(await storeRows(server.app, "SELECT * FROM oauth_tokens"));
    expect(dump).not.toContain(t.access_token);
    expect(dump).not.toContain(t.refresh_token);
    expect(dump).not.toContain(t.access_token.slice(4));
  });

  it("refuses an expired access token with 401 naming the metadata", async () => {
    const t = await tokens();
    clock += 60 * 60_000 + 1;
    const r = await mcpCall(server.mcpUrl, t.access_token);
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="Token has expired", resource_metadata="${server.setup.resourceMetadataUrl}"`,
    );
  });

  it("refuses a token revoked at the revocation endpoint (a refresh token ends its whole grant)", async () => {
    const t = await tokens();
    const r = await fetch(`${server.base}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: t.refresh_token, client_id: t.clientId }),
    });
    expect(r.status).toBe(200);
    expect((await mcpCall(server.mcpUrl, t.access_token)).status).toBe(401);
  });

  it("refuses a token issued for another resource (another Dexi on the same database)", async () => {
    const other = oauthSetup(server.app, { issuer: "http://127.0.0.1:1", now: () => clock });
    const { client_id } = (await other.auth.register({
      client_name: "Elsewhere",
      redirect_uris: [REDIRECT],
    })) as {
      client_id: string;
    };
    const p = pkce();
    const q = new URLSearchParams({
      client_id,
      redirect_uri: REDIRECT,
      response_type: "code",
      code_challenge: p.challenge,
      code_challenge_method: "S256",
    });
    const req = await other.auth.checkRequest(q);
    const code = new URL(
      await other.auth.consent(req, await userId(server.app, "ann"), { scopes: ["notes:read"] }),
    ).searchParams.get("code")!;
    const t = await other.auth.token(
      new URLSearchParams({
        grant_type: "authorization_code",
        code,
        client_id,
        redirect_uri: REDIRECT,
        code_verifier: p.verifier,
      }),
    );
    const r = await mcpCall(server.mcpUrl, t.access_token);
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toContain(
      'error_description="Token was not issued for this resource"',
    );
  });

  it("rotates refresh tokens; a replayed one fails and revokes the family", async () => {
    const t = await tokens();
    const refresh = (token: string) =>
      tokenRequest(server.base, { grant_type: "refresh_token", refresh_token: token, client_id: t.clientId });
    const first = await refresh(t.refresh_token);
    expect(first.status).toBe(200);
    const next = (await first.json()) as Tokens;
    expect(next.refresh_token).not.toBe(t.refresh_token);
    expect((await mcpCall(server.mcpUrl, next.access_token)).status).not.toBe(401);
    const replay = await refresh(t.refresh_token);
    expect(await errorOf(replay)).toEqual({
      error: "invalid_grant",
      error_description: "This refresh token was already used; the connection is revoked",
    });
    expect((await mcpCall(server.mcpUrl, next.access_token)).status).toBe(401);
    expect((await errorOf(await refresh(next.refresh_token))).error).toBe("invalid_grant");
  });

  it("answers a tool call outside the token's scopes with 403 insufficient_scope naming what is needed", async () => {
    const f = await flow({ scope: ["notes:read"] });
    const t = (await (await f.exchange()).json()) as Tokens;
    expect(t.scope).toBe("notes:read");
    const r = await mcpCall(server.mcpUrl, t.access_token, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "create_note", arguments: { text: "x" } },
    });
    expect(r.status).toBe(403);
    expect(r.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", error_description="The tool create_note needs the scope notes:write", scope="notes:read notes:write", resource_metadata="${server.setup.resourceMetadataUrl}"`,
    );
    // Both eras call within the grant with the same token.
    for (const era of ["legacy", "modern"] as const) {
      const c = await connectHttp(server.mcpUrl, t.access_token, { era });
      const listed = await c.client.callTool({ name: "list_notes", arguments: {} });
      expect(listed.isError, era).toBeFalsy();
      await c.close();
    }
  });
});

describe("the pages", () => {
  /** A raw request with a Host header of our choosing (fetch may not set one). */
  const withHost = (path: string, host: string, method = "GET") =>
    new Promise<number>((resolve, reject) => {
      const u = new URL(path, server.base);
      const req = httpRequest(
        { host: "127.0.0.1", port: u.port, path: u.pathname + u.search, method, headers: { host } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end();
    });

  it("refuses a Host header of another origin on pages, OAuth endpoints and metadata", async () => {
    for (const path of [
      "/signin",
      "/apps",
      "/authorize?client_id=x",
      "/.well-known/oauth-authorization-server",
    ])
      expect(await withHost(path, "evil.example:80"), path).toBe(403);
    expect(await withHost("/token", "evil.example", "POST")).toBe(403);
    expect(await withHost("/signin", `127.0.0.1:${new URL(server.base).port}`)).toBe(200);
  });

  it("sets a strict CSP without framing on every page", async () => {
    const r = await fetch(`${server.base}/signin`);
    expect(r.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(await r.text()).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);
  });

  it("locks an account after five failed sign-ins, even for the right password, and says when to retry", async () => {
    const limited = await startOAuthServer({
      limiter: new SignInLimiter({ perAccount: 5, perAddress: 8 }),
      users: ["ann", "bob"],
    });
    try {
      const browser = new FormClient(limited.base);
      const csrf = field(await (await browser.get("/signin")).text(), "csrf");
      const attempt = (name: string, password: string) =>
        browser.post("/signin", { csrf, next: "/apps", name, password });
      for (let i = 0; i < 5; i++) expect((await attempt("ann", "wrong password!")).status).toBe(401);
      const locked = await attempt("ann", PASSWORD);
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await locked.text()).toContain("Too many failed sign-ins. Try again in 15 minutes.");
      // Per address: three more failures on other names reach eight from this address.
      for (const name of ["x1", "x2", "x3"]) expect((await attempt(name, "nope nope nope")).status).toBe(401);
      expect((await attempt("bob", PASSWORD)).status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it("refuses a registration or token request whose body never ends, without reading it whole, and serves the next", async () => {
    for (const path of ["/register", "/token"]) {
      const r = await postWithoutEnd(`${server.base}${path}`, {
        "content-type": path === "/token" ? "application/x-www-form-urlencoded" : "application/json",
      });
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      expect(r.status, path).toBeLessThan(500);
      expect(r.sentBytes, path).toBeLessThan(256 * 1024 * 1024);
    }
    expect(await register(server.base, REDIRECT)).toMatch(/\S/);
  });

  it("limits client registrations per address", async () => {
    const fresh = await startOAuthServer();
    try {
      const attempt = () =>
        fetch(`${fresh.base}/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ client_name: "flood", redirect_uris: [REDIRECT] }),
        });
      for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) expect((await attempt()).status).toBe(201);
      const refused = await attempt();
      expect(refused.status).toBe(429);
      expect((await errorOf(refused)).error_description).toBe(
        "Too many client registrations from this address; try again later",
      );
    } finally {
      await fresh.close();
    }
  });

  it("signs in with the right password only", async () => {
    const browser = new FormClient(server.base);
    const csrf = field(await (await browser.get("/signin")).text(), "csrf");
    const wrong = await browser.post("/signin", {
      csrf,
      next: "/apps",
      name: "ann",
      password: "not the password",
    });
    expect(wrong.status).toBe(401);
    const right = await browser.post("/signin", {
      csrf,
      next: "//evil.example/",
      name: "ann",
      password: PASSWORD,
    });
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe("/apps");
    expect(await (await browser.get("/apps")).text()).toContain("Connected apps");
  });
});

describe("U+0000 in what a caller names", () => {
  it("a sign-in name or client id holding it is refused as any unknown one, never a server error", async () => {
    const own = await startOAuthServer();
    try {
      for (const name of ["nobody", "ann\u0000"]) {
        const browser = new FormClient(own.base);
        const csrf = field(await (await browser.get("/signin")).text(), "csrf");
        const r = await browser.post("/signin", { csrf, next: "/apps", name, password: PASSWORD });
        expect(r.status, JSON.stringify(name)).toBe(401);
      }
      const { challenge } = pkce();
      const answer = async (clientId: string) => {
        const r = await fetch(
          authorizeUrl(own.base, { clientId, redirectUri: REDIRECT, challenge, method: "S256" }),
          {
            redirect: "manual",
          },
        );
        return [r.status, await r.text()];
      };
      expect(await answer("app\u0000")).toEqual(await answer("app"));
      expect((await answer("app"))[0]).toBe(400);
    } finally {
      await own.close();
    }
  });
});
