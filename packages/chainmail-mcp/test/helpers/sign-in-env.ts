/**
 * The world of a sign-in from the chat, with real parts: the test authorization server, a Dovecot
 * whose oauth2 passdb asks it about each bearer token (alice has one message, "quarterly invoice"), a
 * daemon in this process whose OAuth2 account "work" is confirmed but not signed in, and headless
 * Chromium for the person who opens the provider's page. The built bin is spawned by the tests.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Daemon, DaemonClient, type Home, resolveHome, startDaemon } from "@mcpforge/chainmail";
import {
  type Dovecot,
  freePort,
  oauthAccountConfig,
  type OAuthTestServer,
  startDovecot,
  startOAuthServer,
} from "@mcpforge/chainmail/testing";
import type { StdioSpawn } from "@mcpforge/toolkit/testing";
import { type Browser, chromium } from "playwright-core";
import { expect } from "vitest";

export const BIN = fileURLToPath(new URL("../../bin/chainmail-mcp.js", import.meta.url));
const pkg = path.dirname(path.dirname(BIN));

export interface SignInEnv {
  auth: OAuthTestServer;
  dv: Dovecot;
  dir: string;
  home: Home;
  daemon: Daemon;
  /** A CLI client of the daemon (replaced by restartDaemon). */
  cli: DaemonClient;
  /** config.toml as the env wrote it (the owner has confirmed it). */
  config: string;
  /** The built bin with this home, for stdio (and, with `--http`, for HTTP). */
  spawn: StdioSpawn;
  /** Where the daemon keeps work's OAuth2 grant. */
  grantFile(): string;
  /** work's auth state as list_accounts says it. */
  authState(): Promise<string | undefined>;
  /**
   * The person signs in (or presses Cancel) on the provider's page in Chromium, as in their browser;
   * `fails`: the sign-in fails after it (the provider refuses the code).
   */
  signInInBrowser(url: string, allow?: boolean, fails?: boolean): Promise<void>;
  restartDaemon(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSignInEnv(): Promise<SignInEnv> {
  if (!fs.existsSync(path.join(pkg, "dist", "bin", "chainmail-mcp.js")))
    execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  const auth = await startOAuthServer();
  const dv = await startDovecot({
    users: [{ name: "alice", password: "alice-secret-pw" }],
    oauth2: { introspectionUrl: auth.endpoints.introspection_endpoint },
  });
  await dv.appendMessage(
    "alice",
    "INBOX",
    "From: bob@example.com\r\nTo: alice@example.com\r\nSubject: quarterly invoice\r\nMessage-ID: <inv-1@example.com>\r\nDate: Mon, 1 Jun 2026 10:00:00 +0000\r\n\r\nPlease pay.\r\n",
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-mcp-signin-"));
  const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  // No SMTP server: nothing here sends, the account only needs its settings.
  const config = oauthAccountConfig(auth, dv.port, await freePort(), { device: false });
  fs.writeFileSync(home.configFile, config);
  const daemon = await startDaemon({ home, log: () => undefined });
  const cli = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  await cli.call("policy.confirm", {});
  const browser: Browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
  });
  const env: SignInEnv = {
    auth,
    dv,
    dir,
    home,
    daemon,
    cli,
    config,
    spawn: {
      command: process.execPath,
      args: [BIN, "--home", dir],
      env: { CHAINMAIL_MCP_GATE_MAX_AGE_MS: "0" },
    },
    grantFile: () => path.join(home.secretsDir, "work.oauth.json"),
    authState: async () => (await env.cli.listAccounts()).accounts.find((a) => a.name === "work")?.auth,
    signInInBrowser: async (url, allow = true, fails = !allow) => {
      const page = await browser.newPage();
      try {
        await page.goto(url);
        await page.fill("#username", "alice");
        await page.click(allow ? "#allow" : "#deny");
        // The provider redirects to the daemon's loopback listener, which answers the browser.
        await page.getByText(fails ? "The sign-in failed" : "Signed in").waitFor({ timeout: 30_000 });
        expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?/);
      } finally {
        await page.close();
      }
    },
    restartDaemon: async () => {
      env.cli.close();
      await env.daemon.stop();
      env.daemon = await startDaemon({ home, log: () => undefined });
      env.cli = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
    },
    stop: async () => {
      await browser.close();
      env.cli.close();
      await env.daemon.stop();
      await dv.stop();
      await auth.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return env;
}
