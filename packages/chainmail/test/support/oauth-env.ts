/**
 * An OAuth2 world of real parts: the test authorization server, a Dovecot whose oauth2 passdb asks
 * that server about each bearer token, an SMTP server that accepts only XOAUTH2 (relaying into the
 * Dovecot over LMTP), a CHAINMAIL_HOME whose account "work" (alice) signs in with OAuth2, and a daemon.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { signIn } from "../../src/auth/login.js";
import { DaemonClient } from "../../src/client/index.js";
import { loadConfig } from "../../src/config.js";
import { type Daemon, startDaemon } from "../../src/daemon/server.js";
import { type Home, resolveHome } from "../../src/home.js";
import { type Dovecot, startDovecot } from "../../src/testing/dovecot.js";
import {
  oauthAccountConfig,
  type OAuthTestServer,
  type OAuthTestServerOptions,
  startOAuthServer,
} from "../../src/testing/oauth-server.js";
import { freePort, lmtpConfig, type SmtpRelay, startSmtpRelay } from "../../src/testing/smtp.js";

export interface OAuthEnv {
  auth: OAuthTestServer;
  dv: Dovecot;
  relay: SmtpRelay;
  dir: string;
  home: Home;
  daemon: Daemon;
  client: DaemonClient;
  /** Signs "work" in as alice with the device flow, approving the code at once. */
  signInDevice(): Promise<void>;
  restartDaemon(): Promise<void>;
  /** The refresh token stored for "work" (undefined: none). */
  storedRefreshToken(): string | undefined;
  stop(): Promise<void>;
}

export const oauthConfig = (dv: Dovecot, auth: OAuthTestServer, smtpPort: number): string =>
  oauthAccountConfig(auth, dv.port, smtpPort);

export async function startOAuthEnv(opts: OAuthTestServerOptions = {}): Promise<OAuthEnv> {
  const auth = await startOAuthServer(opts);
  const lmtpPort = await freePort();
  const relay = await startSmtpRelay({ lmtpPort, users: [], xoauth2: { introspect: auth.introspect } });
  const dv = await startDovecot({
    users: [{ name: "alice", password: "alice-secret-pw" }],
    extraConfig: lmtpConfig(lmtpPort),
    oauth2: { introspectionUrl: auth.endpoints.introspection_endpoint },
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-oauth-"));
  const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  fs.writeFileSync(home.configFile, oauthConfig(dv, auth, relay.port));
  const grantFile = path.join(home.secretsDir, "work.oauth.json");
  const env: OAuthEnv = {
    auth,
    dv,
    relay,
    dir,
    home,
    daemon: await startDaemon({ home, log: () => undefined }),
    client: undefined as unknown as DaemonClient,
    signInDevice: async () => {
      const account = loadConfig(home.configFile).accounts[0]!;
      await signIn(account, home.secretsDir, {
        flow: "device",
        say: (line) => {
          const code = /enter the code (\S+)/.exec(line)?.[1];
          if (code) auth.approveDevice(code, "alice");
        },
      });
    },
    restartDaemon: async () => {
      env.client.close();
      await env.daemon.stop();
      env.daemon = await startDaemon({ home, log: () => undefined });
      env.client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
    },
    storedRefreshToken: () => {
      if (!fs.existsSync(grantFile)) return undefined;
      return (JSON.parse(fs.readFileSync(grantFile, "utf8")) as { refresh_token: string }).refresh_token;
    },
    stop: async () => {
      env.client.close();
      await env.daemon.stop();
      await dv.stop();
      await relay.stop();
      await auth.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  env.client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  // A first start fails closed (every account held until the owner confirms): confirm once, as the
  // owner would in their terminal, so the tests see the policy config.toml states.
  await env.client.call("policy.confirm", {});
  return env;
}
