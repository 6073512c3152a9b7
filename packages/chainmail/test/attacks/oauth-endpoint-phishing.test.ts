/**
 * A same-user agent edits config.toml so that an OAuth2 account signs in at its own server: the
 * authorization page (where the person types their password: a phishing page) and the token endpoint
 * (where the code and the refresh token go). A real HTTP listener plays the attacker's server and
 * counts every request it gets. Until the owner confirms at a terminal, the daemon starts no sign-in
 * (`auth.begin`, what a sign-in from the chat uses), hands out no URL at the attacker's host, and
 * refreshes tokens only at the confirmed token endpoint; the listener hears nothing.
 *
 * A provider preset's own pages (Google, Microsoft) are part of the provider: an account using them
 * is confirmed as before, an override of them waits like any change.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../../src/client/index.js";
import { type AccountConfig, parseConfig } from "../../src/config.js";
import { diffEndpoint, endpointOf } from "../../src/policy/endpoints.js";
import { reconcilePolicies } from "../../src/policy/service.js";
import { EndpointStore } from "../../src/store/endpoints.js";
import { StateDb } from "../../src/store/state.js";
import { type OAuthEnv, startOAuthEnv } from "../support/oauth-env.js";

/** The attacker's server: answers every request with a sign-in page and counts them. */
async function attackerServer() {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<form>Password: <input name=p></form>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let env: OAuthEnv;
let attacker: Awaited<ReturnType<typeof attackerServer>>;
let mcp: DaemonClient;
let original: string;

beforeAll(async () => {
  env = await startOAuthEnv();
  attacker = await attackerServer();
  mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
  original = fs.readFileSync(env.home.configFile, "utf8");
}, 120_000);

afterAll(async () => {
  mcp?.close();
  await env?.stop();
  await attacker?.close();
});

/** config.toml with the account's authorization and token endpoints at the attacker's server. */
function hostile(keys: readonly ("authorization_endpoint" | "token_endpoint")[]): string {
  let text = original;
  for (const key of keys) {
    const at = key === "token_endpoint" ? "/token" : "/authorize";
    text = text.replace(new RegExp(`^${key} = ".*"$`, "m"), `${key} = "${attacker.origin}${at}"`);
  }
  expect(text).not.toBe(original);
  return text;
}

const workStatus = async () =>
  (await env.client.call("policy.status", {})).accounts.find((a) => a.account === "work")!;

/** The daemon re-reads config.toml at each call; wait until it has seen the edit. */
async function untilPending(pending: boolean): Promise<void> {
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    if ((await workStatus()).pending === pending) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect((await workStatus()).pending).toBe(pending);
}

describe("config.toml pointing an OAuth2 account's sign-in at an attacker", () => {
  it("starts no sign-in from the chat and sends the person nowhere while the change waits", async () => {
    expect(env.storedRefreshToken()).toBeUndefined();
    fs.writeFileSync(env.home.configFile, hostile(["authorization_endpoint", "token_endpoint"]));
    await untilPending(true);
    const status = await workStatus();
    expect(status.changes).toEqual([
      `oauth.token_endpoint ${env.auth.endpoints.token_endpoint} → ${attacker.origin}/token`,
      `oauth.authorization_endpoint ${env.auth.endpoints.authorization_endpoint} → ${attacker.origin}/authorize`,
    ]);
    const refused = mcp.call("auth.begin", { account: "work" });
    await expect(refused).rejects.toMatchObject({ reason: "POLICY_DENIED" });
    await expect(refused).rejects.toThrow(/wait for the owner's confirmation/);
    // The refusal names no address at all, so nothing of the attacker's reaches the person.
    await expect(refused).rejects.not.toThrow(attacker.origin);
    const denied = (await env.client.readAudit({ action: "auth.begin" })).rows;
    expect(denied.at(-1)).toMatchObject({ client: "mcp", account: "work", decision: "denied" });
    expect(attacker.requests).toEqual([]);
  });

  it("only the authorization page changed: still refused (the page is part of the server settings)", async () => {
    fs.writeFileSync(env.home.configFile, original);
    await untilPending(false);
    fs.writeFileSync(env.home.configFile, hostile(["authorization_endpoint"]));
    await untilPending(true);
    expect((await workStatus()).changes).toEqual([
      `oauth.authorization_endpoint ${env.auth.endpoints.authorization_endpoint} → ${attacker.origin}/authorize`,
    ]);
    await expect(mcp.call("auth.begin", { account: "work" })).rejects.toMatchObject({
      reason: "POLICY_DENIED",
    });
    expect(attacker.requests).toEqual([]);
  });

  it("a signed-in account keeps refreshing at the confirmed token endpoint, never the attacker's", async () => {
    fs.writeFileSync(env.home.configFile, original);
    await untilPending(false);
    await env.signInDevice();
    fs.writeFileSync(env.home.configFile, hostile(["authorization_endpoint", "token_endpoint"]));
    await untilPending(true);
    // A restarted daemon holds no access token: its first login must refresh.
    await env.restartDaemon();
    mcp.close();
    mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
    const refreshes = () => env.auth.tokenRequests.filter((r) => r.grant_type === "refresh_token").length;
    const before = refreshes();
    await env.client.search({ query: "", accounts: ["work"], source: "server" });
    expect(refreshes()).toBe(before + 1);
    expect((await env.client.listAccounts()).accounts[0]).toMatchObject({ name: "work", auth: "ok" });
    expect(attacker.requests).toEqual([]);
  }, 60_000);

  it("once the owner confirms the change they were shown, the new page is used", async () => {
    const { digest } = await workStatus();
    fs.rmSync(path.join(env.home.secretsDir, "work.oauth.json"));
    await env.client.call("policy.confirm", { account: "work", digest });
    const flow = await mcp.call("auth.begin", { account: "work" });
    expect(flow.url.startsWith(`${attacker.origin}/authorize?`)).toBe(true);
    // Starting a flow only hands out the URL: nothing went to the server yet.
    expect(attacker.requests).toEqual([]);
  });
});

describe("provider presets' sign-in pages", () => {
  const google = (oauth: string) => `
[[accounts]]
name = "g"
provider = "google"
address = "alice@gmail.com"
username = "alice@gmail.com"
[accounts.imap]
host = "imap.gmail.com"
port = 993
tls = "tls"
[accounts.smtp]
host = "smtp.gmail.com"
port = 465
tls = "tls"
[accounts.oauth]
client_id = "id"
${oauth}
`;

  it("are part of the provider: a confirmed preset account stays confirmed as it was stored", () => {
    const e = endpointOf(parseConfig(google("")).accounts[0]!);
    // What an earlier chainmail stored for the account: token and revocation endpoints only (the
    // client id, confirmed since, follows them; the preset's scopes are not written).
    expect(Object.keys(e.oauth!)).toEqual(["token_endpoint", "revocation_endpoint", "client_id"]);
    // The same pages written out in config.toml are still the preset's.
    const spelled = parseConfig(
      google(
        'authorization_endpoint = "https://accounts.google.com/o/oauth2/v2/auth"\ndevice_authorization_endpoint = "https://oauth2.googleapis.com/device/code"',
      ),
    ).accounts[0]!;
    expect(spelled.oauth?.authorization_endpoint).toBe("https://accounts.google.com/o/oauth2/v2/auth");
    expect(endpointOf(spelled)).toEqual(e);
  });

  it("overridden in config.toml wait for the owner, and the daemon keeps the preset's page", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-preset-pages-"));
    const state = new StateDb(path.join(dir, "state.db"));
    try {
      const plain = parseConfig(google(""));
      reconcilePolicies(state, plain);
      const endpoints = new EndpointStore(state.db);
      endpoints.put("g", endpoints.get("g")!.pending!, null);
      expect(reconcilePolicies(state, plain).accounts[0]?.oauth?.authorization_endpoint).toBe(
        "https://accounts.google.com/o/oauth2/v2/auth",
      );
      const evil = parseConfig(google('authorization_endpoint = "https://login.attacker.example/auth"'));
      const effective = reconcilePolicies(state, evil).accounts[0]!;
      expect(endpoints.get("g")?.pending).not.toBeNull();
      expect(effective.oauth?.authorization_endpoint).toBe("https://accounts.google.com/o/oauth2/v2/auth");
      expect(effective.oauth?.device_authorization_endpoint).toBe(
        "https://oauth2.googleapis.com/device/code",
      );
      expect(diffEndpoint(endpointOf(plain.accounts[0]!), endpointOf(evil.accounts[0]!))).toEqual([
        "oauth.authorization_endpoint https://accounts.google.com/o/oauth2/v2/auth → https://login.attacker.example/auth",
      ]);
    } finally {
      state.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("any edit of an OAuth2 account's endpoints (property)", () => {
  const KEYS = [
    "authorization_endpoint",
    "token_endpoint",
    "device_authorization_endpoint",
    "revocation_endpoint",
  ] as const;
  type Key = (typeof KEYS)[number];
  const OWN: Record<Key, string> = {
    authorization_endpoint: "https://auth.example/authorize",
    token_endpoint: "https://auth.example/token",
    device_authorization_endpoint: "https://auth.example/device",
    revocation_endpoint: "https://auth.example/revoke",
  };
  const account = (provider: string, oauth: Partial<Record<Key, string>>) => {
    const [imap, smtp] =
      provider === "google" ? ["imap.gmail.com", "smtp.gmail.com"] : ["imap.example.com", "smtp.example.com"];
    const keys = Object.entries(oauth)
      .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
      .join("\n");
    return parseConfig(`
[[accounts]]
name = "a"
provider = "${provider}"
address = "alice@example.com"
username = "alice"
[accounts.imap]
host = "${imap}"
port = 993
tls = "tls"
[accounts.smtp]
host = "${smtp}"
port = 465
tls = "tls"
[accounts.oauth]
client_id = "id"
scopes = ["mail"]
${keys}
`);
  };
  const endpoints = (a: AccountConfig) => Object.fromEntries(KEYS.map((k) => [k, a.oauth?.[k]]));
  const url = fc
    .tuple(fc.domain(), fc.constantFrom("/authorize", "/token", "/o/oauth2/v2/auth", "/device/code", ""))
    .map(([host, at]) => `https://${host}${at}`);

  it("leaves the account on its confirmed endpoints, pending exactly when one differs, naming each", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("imap", "google"),
        fc.record(
          {
            authorization_endpoint: url,
            token_endpoint: url,
            device_authorization_endpoint: url,
            revocation_endpoint: url,
          },
          { requiredKeys: [] },
        ),
        (provider, edit) => {
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-endpoint-prop-"));
          const state = new StateDb(path.join(dir, "state.db"));
          try {
            const base = account(provider, provider === "imap" ? OWN : {});
            reconcilePolicies(state, base);
            const store = new EndpointStore(state.db);
            store.put("a", store.get("a")!.pending!, null);
            const confirmed = endpoints(reconcilePolicies(state, base).accounts[0]!);
            const edited = account(provider, { ...(provider === "imap" ? OWN : {}), ...edit });
            const effective = reconcilePolicies(state, edited).accounts[0]!;
            const changed = KEYS.filter((k) => edited.accounts[0]!.oauth?.[k] !== confirmed[k]);
            // Whatever the file says, the daemon signs in and refreshes where the owner confirmed.
            expect(endpoints(effective)).toEqual(confirmed);
            expect(store.get("a")?.pending != null).toBe(changed.length > 0);
            const named = diffEndpoint(endpointOf(base.accounts[0]!), endpointOf(edited.accounts[0]!));
            expect(named.map((line) => line.split(" ")[0])).toEqual(
              [
                ...changed.filter((k) => k === "token_endpoint" || k === "revocation_endpoint"),
                ...changed.filter(
                  (k) => k === "authorization_endpoint" || k === "device_authorization_endpoint",
                ),
              ].map((k) => `oauth.${k}`),
            );
          } finally {
            state.close();
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});
