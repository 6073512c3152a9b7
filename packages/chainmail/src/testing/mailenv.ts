/**
 * A Dovecot with two users, a CHAINMAIL_HOME in a temp dir with config.toml and stored passwords, a
 * daemon started in-process and a client. Tests fill the mailboxes from the corpus.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DaemonClient } from "../client/index.js";
import { type Daemon, startDaemon } from "../daemon/server.js";
import { type Home, resolveHome } from "../home.js";
import { setSecret } from "../secrets.js";
import { type Dovecot, startDovecot } from "./dovecot.js";

/**
 * The daemon's log in tests: discarded, unless CHAINMAIL_TEST_LOG names a file to append it to
 * (each line with the time and the test process), for tracing a test that fails only now and
 * then: `CHAINMAIL_TEST_LOG=/tmp/daemon.log npx vitest run test/cache-notify.test.ts`. Dovecot's log
 * goes to the same name with `.dovecot` added when the env stops.
 */
function daemonLog(): (line: string) => void {
  const file = process.env.CHAINMAIL_TEST_LOG;
  if (!file) return () => undefined;
  return (line) => fs.appendFileSync(file, `${new Date().toISOString()} [${process.pid}] ${line}\n`);
}

export interface PolicyOpts {
  /** `port`: another IMAP port for work (a dead one, to see which connection a call uses). */
  work?: {
    allow_expunge?: boolean;
    allow_delete_folder?: boolean;
    port?: number;
    sendPolicy?: string;
    /** The account's `aliases` (addresses a draft's From may name besides its own). */
    aliases?: string[];
    /** The account's `display_name`. */
    displayName?: string;
  };
  home?: { allow_expunge?: boolean; allow_delete_folder?: boolean };
  /** Extra lines of the `[cache]` section; the background loop is off unless this turns it on. */
  cache?: string;
  /** More accounts after work and home (Dovecot user carol exists for them; store her password). */
  extra?: Array<{ name: string; user: string; port?: number }>;
  /** An SMTP server (src/testing/smtp.ts) for work and home; none when absent. */
  smtpPort?: number;
  /**
   * Leave config.toml's policies and server settings unconfirmed, as a first start does (every account
   * CLOSED and connecting nowhere until the owner runs `chainmail policy confirm`). By default the env
   * confirms them once, as the owner would.
   */
  unconfirmed?: boolean;
  /**
   * The daemon's, not config.toml's: how long its cache writes wait for cache.db's write lock
   * (CACHE_WRITE_WAIT_MS by default), for tests that want a lock held past it to fail a sync.
   */
  cacheWriteWaitMs?: number;
}

export interface MailEnv {
  dv: Dovecot;
  dir: string;
  home: Home;
  daemon: Daemon;
  client: DaemonClient;
  /** Rewrites config.toml; without `cache`, the options the env was started with are kept. */
  writeConfig(policy: PolicyOpts): void;
  /**
   * Confirms, as the owner with the CLI client, every policy widening and server settings change
   * config.toml asks for, and the settings of accounts with none confirmed yet (these wait for this;
   * a narrowing applies at once).
   */
  confirmPolicy(): Promise<void>;
  restartDaemon(): Promise<void>;
  stop(): Promise<void>;
}

export function configToml(dv: Dovecot, policy: PolicyOpts): string {
  const acct = (name: string, user: string, p: PolicyOpts["work"] = {}, port = dv.port) => `
[[accounts]]
name = "${name}"
provider = "imap"
address = "${user}@example.com"
${p.aliases ? `aliases = ${JSON.stringify(p.aliases)}\n` : ""}${p.displayName ? `display_name = ${JSON.stringify(p.displayName)}\n` : ""}username = "${user}"
archive_folder = "Archive"
signature = "-- \\n${user}"
[accounts.imap]
host = "127.0.0.1"
port = ${port}
tls = "none"
${policy.smtpPort ? `[accounts.smtp]\nhost = "127.0.0.1"\nport = ${policy.smtpPort}\ntls = "none"\n` : ""}[accounts.policy]
allow_expunge = ${p.allow_expunge ?? false}
allow_delete_folder = ${p.allow_delete_folder ?? false}
${p.sendPolicy ?? ""}`;
  const extra = policy.cache ?? "";
  const cache = `[cache]\n${extra.includes("background") ? "" : "background = false\n"}${extra}\n`;
  const more = (policy.extra ?? []).map((x) => acct(x.name, x.user, {}, x.port)).join("");
  return `[daemon]\nbody_limit = 2000\n${cache}${acct("work", "alice", policy.work, policy.work?.port)}${acct("home", "bob", policy.home)}${more}`;
}

export async function startMailEnv(
  policy: PolicyOpts = {},
  /** Extra dovecot.conf lines (ACLs, a smaller capability list). */
  dovecotConfig?: string,
): Promise<MailEnv> {
  const dv = await startDovecot({
    users: [
      { name: "alice", password: "alice-secret-pw" },
      { name: "bob", password: "bob-secret-pw" },
      { name: "carol", password: "carol-secret-pw" },
    ],
    ...(dovecotConfig ? { extraConfig: dovecotConfig } : {}),
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-home-"));
  const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  const writeConfig = (p: PolicyOpts) => {
    fs.writeFileSync(
      home.configFile,
      configToml(dv, { cache: policy.cache, extra: policy.extra, smtpPort: policy.smtpPort, ...p }),
    );
    // mtime resolution can hide two writes in one millisecond from the daemon's reload check.
    const t = new Date(Date.now() + Math.floor(Math.random() * 100000));
    fs.utimesSync(home.configFile, t, t);
  };
  writeConfig(policy);
  const daemonOptions = {
    home,
    log: daemonLog(),
    ...(policy.cacheWriteWaitMs !== undefined ? { cacheWriteWaitMs: policy.cacheWriteWaitMs } : {}),
  };
  setSecret(home.secretsDir, "work", "alice-secret-pw\n");
  setSecret(home.secretsDir, "home", "bob-secret-pw");
  const env: MailEnv = {
    dv,
    dir,
    home,
    daemon: await startDaemon(daemonOptions),
    client: undefined as unknown as DaemonClient,
    writeConfig,
    confirmPolicy: async () => {
      await env.client.call("policy.confirm", {});
    },
    restartDaemon: async () => {
      env.client.close();
      await env.daemon.stop();
      env.daemon = await startDaemon(daemonOptions);
      env.client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
    },
    stop: async () => {
      env.client.close();
      await env.daemon.stop();
      // Dovecot's side of the story, beside the daemon's (see daemonLog)
      if (process.env.CHAINMAIL_TEST_LOG)
        fs.appendFileSync(`${process.env.CHAINMAIL_TEST_LOG}.dovecot`, dv.log());
      await dv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  env.client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  if (!policy.unconfirmed) await env.confirmPolicy();
  return env;
}
