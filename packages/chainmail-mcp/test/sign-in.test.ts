/**
 * Sign in from the chat, with real parts: the test authorization server, a Dovecot whose oauth2
 * passdb asks it about each bearer token, a daemon in this process and the built bin over stdio. The
 * OAuth2 account "work" has no sign-in stored, so a search fails with AUTH_REQUIRED; a client that
 * declares URL-mode elicitation is asked to open the provider's page, and its "person" opens it in
 * headless Chromium and signs in there; the provider redirects to the daemon's loopback listener and
 * the search goes on in the same call. Without URL mode, or when the person declines, the call fails
 * with AUTH_REQUIRED as before and nothing is stored.
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
  type OAuthTestServer,
  startDovecot,
  startOAuthServer,
} from "@mcpforge/chainmail/testing";
import { connectStdio } from "@mcpforge/toolkit/testing";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/chainmail-mcp.js", import.meta.url));
const pkg = path.dirname(path.dirname(BIN));

type Json = Record<string, unknown>;
type Era = "legacy" | "modern";
/**
 * What the person does with the question: sign in on the page, accept but press Cancel on the
 * provider's page, decline or cancel the question, or the client cannot ask (form mode only).
 */
type Person = "sign-in" | "deny-at-provider" | "decline" | "cancel" | "form-only";

let auth: OAuthTestServer;
let dv: Dovecot;
let dir: string;
let home: Home;
let daemon: Daemon;
let cli: DaemonClient;
let browser: Browser;

function config(smtpPort: number): string {
  const e = auth.endpoints;
  return `[cache]
enabled = false

[[accounts]]
name = "work"
provider = "imap"
address = "alice@example.com"
username = "alice"
[accounts.imap]
host = "127.0.0.1"
port = ${dv.port}
tls = "none"
[accounts.smtp]
host = "127.0.0.1"
port = ${smtpPort}
tls = "none"
[accounts.oauth]
client_id = "${auth.clientId}"
authorization_endpoint = "${e.authorization_endpoint}"
token_endpoint = "${e.token_endpoint}"
revocation_endpoint = "${e.revocation_endpoint}"
scopes = ["mail"]
`;
}

const grantFile = () => path.join(home.secretsDir, "work.oauth.json");

beforeAll(async () => {
  if (!fs.existsSync(path.join(pkg, "dist", "bin", "chainmail-mcp.js")))
    execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  auth = await startOAuthServer();
  dv = await startDovecot({
    users: [{ name: "alice", password: "alice-secret-pw" }],
    oauth2: { introspectionUrl: auth.endpoints.introspection_endpoint },
  });
  await dv.appendMessage(
    "alice",
    "INBOX",
    "From: bob@example.com\r\nTo: alice@example.com\r\nSubject: quarterly invoice\r\nMessage-ID: <inv-1@example.com>\r\nDate: Mon, 1 Jun 2026 10:00:00 +0000\r\n\r\nPlease pay.\r\n",
  );
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-mcp-signin-"));
  home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  // No SMTP server: nothing here sends, the account only needs its settings.
  fs.writeFileSync(home.configFile, config(await freePort()));
  daemon = await startDaemon({ home, log: () => undefined });
  cli = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  await cli.call("policy.confirm", {});
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  cli?.close();
  await daemon?.stop();
  await dv?.stop();
  await auth?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  // Each case starts signed out: the stored grant is removed (the daemon sees the file go).
  fs.rmSync(grantFile(), { force: true });
  const { accounts } = await cli.listAccounts();
  expect(accounts.find((a) => a.name === "work")?.auth).toBe("missing");
});

/** The person signs in on the provider's page in Chromium, as they would in their browser. */
async function signInInBrowser(url: string, allow = true): Promise<void> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.fill("#username", "alice");
    await page.click(allow ? "#allow" : "#deny");
    // The provider redirects to the daemon's loopback listener, which answers the browser.
    await page.getByText(allow ? "Signed in" : "The sign-in failed").waitFor({ timeout: 30_000 });
    expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?/);
  } finally {
    await page.close();
  }
}

interface Asked {
  mode?: string;
  url?: string;
  message: string;
}

async function search(era: Era, person: Person) {
  const asked: Asked[] = [];
  const opened: Promise<void>[] = [];
  const conn = await connectStdio(
    { command: process.execPath, args: [BIN, "--home", dir], env: { CHAINMAIL_MCP_GATE_MAX_AGE_MS: "0" } },
    {
      era,
      elicitation: {
        modes: person === "form-only" ? ["form"] : ["form", "url"],
        answer: (params) => {
          const q = params as Asked;
          asked.push(q);
          if (person === "decline" || person === "cancel") return { action: person };
          // Accepting a URL question means "I will open it": the page is opened after the answer,
          // as a client would, and the call waits for the sign-in to finish.
          if (q.url) opened.push(signInInBrowser(q.url, person === "sign-in"));
          return { action: "accept" };
        },
      },
    },
  );
  try {
    const r = await conn.client.callTool({ name: "search", arguments: { query: "invoice" } });
    await Promise.all(opened);
    return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json, asked };
  } finally {
    await conn.close();
  }
}

/** The URL questions; a form question here would be a bug (nothing else in a search asks). */
function urlQuestions(asked: Asked[]): Asked[] {
  for (const q of asked) expect(q.url, "only URL questions are asked").toBeDefined();
  return asked;
}

describe.each<Era>(["legacy", "modern"])("sign in from the chat (%s era)", (era) => {
  it("asks the person to open the provider's page, then the search succeeds in the same call", async () => {
    const r = await search(era, "sign-in");
    expect(r.isError).toBe(false);
    expect(r.structured["count"]).toBe(1);
    const questions = urlQuestions(r.asked);
    expect(questions.length).toBeGreaterThanOrEqual(1);
    // Every round asked about the same flow: one sign-in, not one per re-run of the handler.
    expect(new Set(questions.map((q) => q.url)).size).toBe(1);
    const url = new URL(questions[0]!.url!);
    expect(`${url.origin}${url.pathname}`).toBe(auth.endpoints.authorization_endpoint);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(fs.existsSync(grantFile())).toBe(true);
    const { accounts } = await cli.listAccounts();
    expect(accounts.find((a) => a.name === "work")?.auth).toBe("ok");
  }, 120_000);

  it("a declined question leaves the call failing with AUTH_REQUIRED and nothing stored", async () => {
    const r = await search(era, "decline");
    expect(r.isError).toBe(true);
    expect(r.structured["error"]).toMatchObject({
      reason: "AUTH_REQUIRED",
      message: "account work is not signed in (no OAuth2 grant is stored)",
    });
    expect(urlQuestions(r.asked)).toHaveLength(1);
    expect(fs.existsSync(grantFile())).toBe(false);
  }, 60_000);

  it("a cancelled question is no consent either: AUTH_REQUIRED, nothing stored", async () => {
    const r = await search(era, "cancel");
    expect(r.isError).toBe(true);
    expect(r.structured["error"]).toMatchObject({ reason: "AUTH_REQUIRED" });
    expect(urlQuestions(r.asked)).toHaveLength(1);
    expect(fs.existsSync(grantFile())).toBe(false);
  }, 60_000);

  it("a sign-in refused at the provider ends the call with the provider's refusal", async () => {
    const r = await search(era, "deny-at-provider");
    expect(r.isError).toBe(true);
    expect(r.structured["error"]).toMatchObject({
      reason: "AUTH_REQUIRED",
      message: "the provider refused the sign-in of account work (access_denied)",
    });
    expect(fs.existsSync(grantFile())).toBe(false);
  }, 60_000);

  it("a client without URL mode gets AUTH_REQUIRED as before, asked nothing", async () => {
    const r = await search(era, "form-only");
    expect(r.isError).toBe(true);
    expect(r.structured["error"]).toMatchObject({
      reason: "AUTH_REQUIRED",
      message: "account work is not signed in (no OAuth2 grant is stored)",
    });
    expect(r.asked).toHaveLength(0);
    expect(fs.existsSync(grantFile())).toBe(false);
  }, 60_000);
});

describe("an expired sign-in", () => {
  it("is asked for again from the chat once the provider refuses the refresh token", async () => {
    expect((await search("legacy", "sign-in")).isError).toBe(false);
    const first = JSON.parse(fs.readFileSync(grantFile(), "utf8")) as { refresh_token: string };
    // The person revokes the grant at the provider; a restarted daemon has no access token left,
    // so its next login presents the refresh token and the provider refuses it.
    auth.revokeUser("alice");
    cli.close();
    await daemon.stop();
    daemon = await startDaemon({ home, log: () => undefined });
    cli = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
    const failed = await search("legacy", "form-only");
    expect(failed.structured["error"]).toMatchObject({
      reason: "AUTH_REQUIRED",
      message:
        "the OAuth2 sign-in of account work has expired or was revoked (the provider refused its refresh token)",
    });
    expect((await cli.listAccounts()).accounts.find((a) => a.name === "work")?.auth).toBe("expired");
    const r = await search("modern", "sign-in");
    expect(r.isError).toBe(false);
    expect(r.structured["count"]).toBe(1);
    expect(urlQuestions(r.asked).length).toBeGreaterThanOrEqual(1);
    const second = JSON.parse(fs.readFileSync(grantFile(), "utf8")) as { refresh_token: string };
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await cli.listAccounts()).accounts.find((a) => a.name === "work")?.auth).toBe("ok");
  }, 120_000);
});

describe("the daemon's sign-in operations", () => {
  it("only the MCP client may begin one; the CLI signs in with `chainmail auth login`", async () => {
    await expect(cli.call("auth.begin", { account: "work" })).rejects.toMatchObject({
      reason: "POLICY_DENIED",
    });
  });

  it("refuses to begin a sign-in for an account that is signed in", async () => {
    // Signed in again by the test before; Dovecot may still hold back logins for a while after the
    // refused ones that test caused (its auth penalty), so wait for a search to go through.
    let ok = false;
    for (const until = Date.now() + 45_000; !ok && Date.now() < until; ) {
      ok = !(await search("legacy", "sign-in")).isError;
      if (!ok) await new Promise((r) => setTimeout(r, 500));
    }
    expect(ok).toBe(true);
    const mcp = new DaemonClient({ socketPath: home.socketPath, client: "mcp" });
    try {
      await expect(mcp.call("auth.begin", { account: "work" })).rejects.toMatchObject({
        reason: "CONFLICT",
        message: "account work does not need a sign-in (its auth state is ok)",
      });
    } finally {
      mcp.close();
    }
  }, 60_000);

  it("a second auth.begin for the account finds the flow under way", async () => {
    const mcp = new DaemonClient({ socketPath: home.socketPath, client: "mcp" });
    try {
      const rows = async () => (await cli.call("audit.read", { action: "auth.begin" })).rows;
      const before = (await rows()).length;
      const a = await mcp.call("auth.begin", { account: "work" });
      const b = await mcp.call("auth.begin", { account: "work" });
      expect(b).toEqual(a);
      // One audit row for the one sign-in started, by the MCP client.
      const after = await rows();
      expect(after.length).toBe(before + 1);
      expect(after.filter((r) => r.client === "mcp" && r.account === "work").length).toBe(after.length);
      expect(await mcp.call("auth.wait", { flow_id: a.flow_id, timeout_seconds: 0 })).toMatchObject({
        state: "pending",
      });
    } finally {
      mcp.close();
    }
  });
});
