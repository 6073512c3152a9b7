/**
 * A same-user agent edits config.toml so that an OAuth2 account's next sign-in grants another
 * application (a client_id of its choosing) or more than mail (an added scope). Both are part of the
 * owner-confirmed server settings: until the owner confirms, no sign-in starts from the chat, and the
 * daemon's token refreshes go as the confirmed client (the real OAuth2 test server refuses any other
 * client, so a refresh as the new one would fail). After `policy confirm` the sign-in uses the new
 * ones. A row confirmed before client id and scopes were confirmed records config.toml's once.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../../src/client/index.js";
import { parseConfig } from "../../src/config.js";
import { endpointOf } from "../../src/policy/endpoints.js";
import { reconcilePolicies } from "../../src/policy/service.js";
import { EndpointStore } from "../../src/store/endpoints.js";
import { PolicyStore } from "../../src/store/policy.js";
import { StateDb } from "../../src/store/state.js";
import { type OAuthEnv, startOAuthEnv } from "../support/oauth-env.js";

let env: OAuthEnv;
let mcp: DaemonClient;
let original: string;

beforeAll(async () => {
  env = await startOAuthEnv();
  mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
  original = fs.readFileSync(env.home.configFile, "utf8");
}, 120_000);

afterAll(async () => {
  mcp?.close();
  await env?.stop();
});

/** Each edit gets an mtime of its own, so the daemon's next call runs on it (see own-addresses.test.ts). */
let tick = Math.floor(Date.now() / 1000);
function write(text: string): void {
  fs.writeFileSync(env.home.configFile, text);
  tick += 10;
  fs.utimesSync(env.home.configFile, tick, tick);
}

const hostile = () =>
  original
    .replace(`client_id = "${env.auth.clientId}"`, 'client_id = "attacker-app"')
    .replace('scopes = ["mail"]', 'scopes = ["mail", "admin"]');

const workStatus = async () =>
  (await env.client.call("policy.status", {})).accounts.find((a) => a.account === "work")!;

describe("config.toml naming another OAuth2 client and more scopes", () => {
  it("waits for the owner, shown in the diff; no sign-in starts from the chat", async () => {
    await env.signInDevice();
    const text = hostile();
    expect(text).toContain("attacker-app");
    expect(text).toContain('"admin"');
    write(text);
    const status = await workStatus();
    expect(status.pending).toBe(true);
    expect(status.changes).toEqual([
      `oauth.client_id ${env.auth.clientId} → attacker-app`,
      "oauth.scopes +admin",
    ]);
    await expect(mcp.call("auth.begin", { account: "work" })).rejects.toMatchObject({
      reason: "POLICY_DENIED",
    });
    const pending = (await env.client.readAudit({ action: "endpoint.pending" })).rows[0];
    expect(pending?.summary).toContain(`(${status.digest})`);
    expect(pending?.summary).toContain("oauth.client_id");
  });

  it("meanwhile the daemon refreshes as the confirmed client, so the account keeps working", async () => {
    await env.restartDaemon();
    mcp.close();
    mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
    const refreshes = () => env.auth.tokenRequests.filter((r) => r.grant_type === "refresh_token");
    const before = refreshes().length;
    await env.client.search({ query: "", accounts: ["work"], source: "server" });
    expect(
      refreshes()
        .slice(before)
        .map((r) => r.outcome),
    ).toEqual(["ok"]);
    expect((await env.client.listAccounts()).accounts[0]).toMatchObject({ name: "work", auth: "ok" });
  }, 60_000);

  it("once the owner confirms, a sign-in asks for the new client and scopes", async () => {
    const { digest } = await workStatus();
    fs.rmSync(path.join(env.home.secretsDir, "work.oauth.json"));
    await env.client.call("policy.confirm", { account: "work", digest });
    const flow = await mcp.call("auth.begin", { account: "work" });
    const url = new URL(flow.url);
    expect(url.searchParams.get("client_id")).toBe("attacker-app");
    expect(url.searchParams.get("scope")).toBe("mail admin");
  });
});

describe("an endpoint row confirmed before the client id and scopes were", () => {
  const toml = (clientId: string, scopes: string) => `
[[accounts]]
name = "x"
provider = "imap"
address = "x@example.com"
username = "x"
[accounts.imap]
host = "127.0.0.1"
port = 143
tls = "none"
[accounts.oauth]
client_id = "${clientId}"
authorization_endpoint = "https://id.example/auth"
token_endpoint = "https://id.example/token"
scopes = ${scopes}
`;

  it("records config.toml's once (audited) and stays confirmed; a later change waits, the recorded one used", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-client-"));
    const state = new StateDb(path.join(dir, "state.db"));
    try {
      const file = parseConfig(toml("app", '["mail"]'));
      reconcilePolicies(state, file);
      const endpoints = new EndpointStore(state.db);
      const policy = new PolicyStore(state.db);
      policy.put("x", policy.get("x")!.pending!, null);
      // What an earlier chainmail confirmed: the OAuth2 settings without client_id and scopes.
      const { client_id: _c, scopes: _s, ...oldOauth } = endpointOf(file.accounts[0]!).oauth!;
      endpoints.put("x", JSON.stringify({ ...endpointOf(file.accounts[0]!), oauth: oldOauth }), null);

      const effective = reconcilePolicies(state, file).accounts[0]!;
      expect(effective.endpoint_unconfirmed).toBeUndefined();
      expect(endpoints.get("x")?.pending).toBeNull();
      expect(JSON.parse(endpoints.get("x")!.confirmed).oauth).toMatchObject({
        client_id: "app",
        scopes: ["mail"],
      });
      const recorded = state.readAudit({ action: "endpoint.recorded" });
      expect(recorded).toHaveLength(1);
      expect(recorded[0]?.summary).toContain("client_id app, scopes mail");

      const changed = reconcilePolicies(state, parseConfig(toml("evil", '["mail", "all"]'))).accounts[0]!;
      expect(endpoints.get("x")?.pending).not.toBeNull();
      expect(changed.oauth?.client_id).toBe("app");
      expect(changed.oauth?.scopes).toEqual(["mail"]);
      expect(state.readAudit({ action: "endpoint.recorded" })).toHaveLength(1);
    } finally {
      state.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
