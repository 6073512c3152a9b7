/**
 * OAuth2 sign-in against real parts: the test authorization server, Dovecot validating bearer tokens
 * through its oauth2 passdb, an SMTP server that takes only XOAUTH2, and the daemon in between.
 */
import fs from "node:fs";
import path from "node:path";
import * as oauth from "oauth4webapi";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signIn } from "../src/auth/login.js";
import { loadConfig, parseConfig } from "../src/config.js";
import { isMailError } from "../src/errors.js";
import type { Dovecot } from "../src/testing/dovecot.js";
import { startOAuthServer } from "../src/testing/oauth-server.js";
import { type OAuthEnv, oauthConfig, startOAuthEnv } from "./support/oauth-env.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function authState(env: OAuthEnv): Promise<string> {
  const { accounts } = await env.client.listAccounts();
  return accounts[0]!.auth;
}

async function sendOne(env: OAuthEnv, subject: string) {
  return env.client.call("send", {
    account: "work",
    to: ["alice@example.com"],
    cc: [],
    subject,
    body: "over XOAUTH2",
  });
}

describe("signed in with the device flow: IMAP and SMTP over XOAUTH2", () => {
  let env: OAuthEnv;
  beforeAll(async () => {
    env = await startOAuthEnv({ slowDownPolls: 1, deviceInterval: 1 });
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("says missing before the sign-in, and AUTH_REQUIRED naming chainmail auth login", async () => {
    const { accounts } = await env.client.listAccounts();
    expect(accounts[0]).toMatchObject({ name: "work", auth: "missing", auth_method: "oauth2" });
    const err = await env.client
      .search({ query: "", accounts: ["work"], source: "server" })
      .catch((e: unknown) => e);
    expect(isMailError(err) && err.reason).toBe("AUTH_REQUIRED");
    expect((err as Error & { hint: string }).hint).toContain("chainmail auth login work");
  });

  it("polls at the provider's interval and waits 5 s longer after slow_down", async () => {
    const started = Date.now();
    await env.signInDevice();
    const polls = env.auth.tokenRequests.filter((r) => r.grant_type.endsWith("device_code"));
    expect(polls.map((p) => p.outcome)).toEqual(["slow_down", "ok"]);
    expect(polls[0]!.at - started).toBeGreaterThanOrEqual(1000);
    expect(polls[1]!.at - polls[0]!.at).toBeGreaterThanOrEqual(6000);
    // The refresh token is stored like a password; no access token is written anywhere.
    const file = path.join(env.home.secretsDir, "work.oauth.json");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(Object.keys(stored).sort()).toEqual(["refresh_token", "saved_at", "scope"]);
    // The sign-in happened while the daemon ran: it takes effect without a restart, not tried yet.
    expect(await authState(env)).toBe("unknown");
  }, 20_000);

  it("searches over IMAP and sends over SMTP with the access token, and says ok", async () => {
    await env.dv.appendMessage(
      "alice",
      "INBOX",
      "From: x@example.org\r\nTo: alice@example.com\r\nSubject: before\r\n\r\nhi\r\n",
    );
    const found = await env.client.search({ query: "subject:before", accounts: ["work"], source: "server" });
    expect(found.rows.map((r) => r.subject)).toEqual(["before"]);
    const res = (await sendOne(env, "sent with a token")) as { status: string };
    expect(res.status).toBe("sent");
    expect(env.relay.received).toHaveLength(1);
    expect(env.relay.commands.some((c) => /^AUTH XOAUTH2/i.test(c))).toBe(true);
    const again = await env.client.search({
      query: 'subject:"sent with a token"',
      accounts: ["work"],
      source: "server",
    });
    expect(again.rows.length).toBeGreaterThanOrEqual(1);
    expect(await authState(env)).toBe("ok");
  });

  it("refreshes a token the servers refuse once, with one refresh for calls at once", async () => {
    const refreshesBefore = env.auth.tokenRequests.filter((r) => r.grant_type === "refresh_token").length;
    // The provider ends every access token early; the daemon still thinks its token is good.
    env.auth.expireAccessTokens();
    const results = await Promise.all([1, 2, 3].map(() => env.client.testAccount({ account: "work" })));
    for (const r of results) {
      expect(r.imap.ok).toBe(true);
      expect(r.smtp.ok).toBe(true);
    }
    const refreshes = env.auth.tokenRequests.filter((r) => r.grant_type === "refresh_token");
    expect(refreshes.length - refreshesBefore).toBe(1);
    expect(env.auth.maxConcurrentRefreshes()).toBe(1);
    expect(await authState(env)).toBe("ok");
    // Each refused login was tried again once, on a new connection: three refused IMAP logins, and
    // six SMTP connections (EHLO) after the first send's: three refused, three accepted.
    expect(env.dv.log().match(/auth failed/g)).toHaveLength(3);
    expect(env.relay.commands.filter((c) => /^EHLO/i.test(c))).toHaveLength(1 + 3 + 3);
  });
  it("a server that refuses even a fresh token: AUTH_REQUIRED, state rejected, no refresh after that", async () => {
    const refreshes = () => env.auth.tokenRequests.filter((r) => r.grant_type === "refresh_token").length;
    const before = refreshes();
    env.auth.refuseAllTokens(true);
    try {
      const r = await env.client.testAccount({ account: "work" });
      expect(r.imap.error?.reason).toBe("AUTH_REQUIRED");
      expect(r.smtp.error?.reason).toBe("AUTH_REQUIRED");
      expect(r.smtp.error?.message).toContain("also a freshly refreshed one");
      // One refresh for both servers' refusals, and none for the refusal of the fresh token.
      expect(refreshes() - before).toBe(1);
      expect(await authState(env)).toBe("rejected");
      // A watcher retrying, or the agent calling again: the servers are asked, the provider is not.
      const again = await env.client.testAccount({ account: "work" });
      expect(again.smtp.error?.reason).toBe("AUTH_REQUIRED");
      expect(refreshes() - before).toBe(1);
    } finally {
      env.auth.refuseAllTokens(false);
    }
    // The servers take the token again (the user fixed the account's settings): no sign-in needed.
    const ok = await env.client.testAccount({ account: "work" });
    expect(ok.imap.ok && ok.smtp.ok).toBe(true);
    expect(await authState(env)).toBe("ok");
  }, 60_000);
});

describe("tokens over time", () => {
  let env: OAuthEnv;
  beforeAll(async () => {
    env = await startOAuthEnv({ accessTokenSeconds: 3 });
    await env.signInDevice();
  }, 20_000);
  afterAll(async () => {
    await env?.stop();
  });

  it("refreshes a token before it expires mid-session: no call fails", async () => {
    const first = (await sendOne(env, "first")) as { status: string };
    expect(first.status).toBe("sent");
    await sleep(3200);
    // Each send logs in to SMTP (and to IMAP for the Sent copy) anew, after the first token's end.
    const second = (await sendOne(env, "second")) as { status: string };
    expect(second.status).toBe("sent");
    const test = await env.client.testAccount({ account: "work" });
    expect(test.imap.ok && test.smtp.ok).toBe(true);
    expect(env.relay.received).toHaveLength(2);
    // No login was refused (none had to be tried again): the token was refreshed before it ran out.
    // Two sends and one test: three SMTP logins; no IMAP login failed.
    expect(env.relay.commands.filter((c) => /^AUTH/i.test(c))).toHaveLength(3);
    expect(env.dv.log()).not.toMatch(/auth failed/);
    expect(
      env.auth.tokenRequests.filter((r) => r.grant_type === "refresh_token").length,
    ).toBeGreaterThanOrEqual(2);
  }, 20_000);

  it("keeps a rotated refresh token across a daemon restart", async () => {
    const before = env.storedRefreshToken();
    await sleep(3200);
    const r = await env.client.testAccount({ account: "work" });
    expect(r.imap.ok).toBe(true);
    const rotated = env.storedRefreshToken();
    expect(rotated).toBeDefined();
    expect(rotated).not.toBe(before);
    await env.restartDaemon();
    // A new daemon has no access token: it must refresh with the rotated refresh token, the only one
    // the provider still accepts (each is accepted once).
    const after = await env.client.testAccount({ account: "work" });
    expect(after.imap.ok).toBe(true);
    expect(env.auth.tokenRequests.filter((x) => x.outcome === "invalid_grant")).toEqual([]);
    expect(env.storedRefreshToken()).not.toBe(rotated);
  }, 20_000);

  it("a revoked grant: AUTH_REQUIRED with the hint, state expired, and no retry loop", async () => {
    env.auth.revokeUser("alice");
    const err = await sendOne(env, "after revocation").catch((e: unknown) => e);
    expect(isMailError(err) && err.reason).toBe("AUTH_REQUIRED");
    expect((err as { hint: string }).hint).toContain("chainmail auth login work");
    expect(await authState(env)).toBe("expired");
    const asked = env.auth.tokenRequests.length;
    for (let i = 0; i < 3; i++) {
      const t = await env.client.testAccount({ account: "work" });
      expect(t.imap.error?.reason).toBe("AUTH_REQUIRED");
    }
    // The refused refresh token is not presented again.
    expect(env.auth.tokenRequests.length).toBe(asked);
    expect(env.relay.received.filter((m) => m.raw.toString().includes("after revocation"))).toEqual([]);
    // A new sign-in while the daemon runs takes effect at the next login.
    await env.signInDevice();
    const t = await env.client.testAccount({ account: "work" });
    expect(t.imap.ok && t.smtp.ok).toBe(true);
    expect(await authState(env)).toBe("ok");
  }, 20_000);
});

describe("a device sign-in the user denies", () => {
  let env: OAuthEnv;
  beforeAll(async () => {
    env = await startOAuthEnv();
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("ends with AUTH_REQUIRED saying it was denied, and stores nothing", async () => {
    const account = loadConfig(env.home.configFile).accounts[0]!;
    const err = await signIn(account, env.home.secretsDir, {
      flow: "device",
      say: (line) => {
        const code = /enter the code (\S+)/.exec(line)?.[1];
        if (code) env.auth.denyDevice(code);
      },
    }).catch((e: unknown) => e);
    expect(isMailError(err) && err.reason).toBe("AUTH_REQUIRED");
    expect((err as Error).message).toBe("the sign-in was denied at the provider");
    expect(env.storedRefreshToken()).toBeUndefined();
  });
});

describe("a device code that expires before it is approved", () => {
  it("ends with AUTH_REQUIRED saying the code expired", async () => {
    const auth = await startOAuthServer({ deviceCodeSeconds: 1, deviceInterval: 1 });
    try {
      const account = parseConfig(oauthConfig({ port: 1 } as Dovecot, auth, 2)).accounts[0]!;
      const err = await signIn(account, "/nonexistent/secrets", {
        flow: "device",
        say: () => undefined,
      }).catch((e: unknown) => e);
      expect(isMailError(err) && err.reason).toBe("AUTH_REQUIRED");
      expect((err as Error).message).toBe("the sign-in code expired before it was approved");
      expect(auth.tokenRequests.map((r) => r.outcome)).toEqual(["expired_token"]);
    } finally {
      await auth.stop();
    }
  });
});

describe("the browser flow's checks", () => {
  let env: OAuthEnv;
  beforeAll(async () => {
    env = await startOAuthEnv();
  });
  afterEach(() => undefined);
  afterAll(async () => {
    await env?.stop();
  });

  /** Starts a browser sign-in in-process and returns the authorization URL it printed. */
  function startBrowserSignIn() {
    const account = loadConfig(env.home.configFile).accounts[0]!;
    let resolveUrl: (u: URL) => void;
    const url = new Promise<URL>((r) => {
      resolveUrl = r;
    });
    const done = signIn(account, env.home.secretsDir, {
      flow: "browser",
      timeoutMs: 15_000,
      say: (line) => {
        if (line.startsWith("http")) resolveUrl(new URL(line));
      },
    });
    return { url, done };
  }

  /** What the user's browser does on the provider's page: sign in and follow the redirect's Location. */
  async function approve(url: URL): Promise<URL> {
    const form = new URLSearchParams(url.searchParams);
    form.set("username", "alice");
    form.set("decision", "allow");
    const res = await fetch(new URL("/authorize", url), { method: "POST", body: form, redirect: "manual" });
    expect(res.status).toBe(302);
    return new URL(res.headers.get("location")!);
  }

  it("asks with PKCE S256 and a state, and ignores a redirect with another state", async () => {
    const { url, done } = startBrowserSignIn();
    const u = await url;
    expect(u.searchParams.get("code_challenge_method")).toBe("S256");
    expect(u.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(u.searchParams.get("state")?.length).toBeGreaterThanOrEqual(20);
    const redirect = new URL(u.searchParams.get("redirect_uri")!);
    expect(redirect.hostname).toBe("127.0.0.1");
    expect(Number(redirect.port)).toBeGreaterThan(0);

    const back = await approve(u);
    // An attacker's redirect carrying the real code but another state is refused, and not redeemed.
    const forged = new URL(back);
    forged.searchParams.set("state", "forged-state");
    const refused = await fetch(forged);
    expect(refused.status).toBe(400);
    expect(env.auth.tokenRequests.filter((r) => r.grant_type === "authorization_code")).toEqual([]);
    // The real redirect still completes the sign-in.
    const ok = await fetch(back);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Signed in");
    await expect(done).resolves.toMatchObject({ account: "work", flow: "browser" });
    expect(env.storedRefreshToken()).toBeDefined();
  });

  it("a code cannot be redeemed without the sign-in's PKCE verifier", async () => {
    const { url, done } = startBrowserSignIn();
    const u = await url;
    const back = await approve(u);
    // Someone who intercepted the code but not the verifier tries to redeem it.
    const res = await fetch(env.auth.endpoints.token_endpoint, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: env.auth.clientId,
        code: back.searchParams.get("code")!,
        redirect_uri: u.searchParams.get("redirect_uri")!,
        code_verifier: oauth.generateRandomCodeVerifier(),
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
    // The code was spent by the failed attempt, so the real redirect fails too, with a clear error.
    const outcome = done.catch((e: unknown) => e);
    const answer = await fetch(back);
    expect(answer.status).toBe(400);
    const failed = await outcome;
    expect(isMailError(failed) && failed.reason).toBe("AUTH_REQUIRED");
    expect((failed as Error).message).toContain("invalid_grant");
  });
});
