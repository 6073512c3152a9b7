/**
 * Issue 30, point 5, for server settings: an attacker who can edit config.toml and delete state.db
 * points the account's IMAP and SMTP servers at their own and restarts the daemon. A lost state.db
 * fails closed: the daemon confirms nothing, so it sends no password to the new servers (judged at
 * those servers: a recording proxy in front of a second Dovecot, a second SMTP server that keeps
 * every command line) until the owner confirms, and every call that needs the server says why.
 */
import fs from "node:fs";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../../src/client/index.js";
import { startDaemon } from "../../src/daemon/server.js";
import { type Dovecot, startDovecot } from "../../src/testing/dovecot.js";
import { type SendEnv, startSendEnv } from "../../src/testing/index.js";
import { freePort, lmtpConfig, type SmtpRelay, startSmtpRelay } from "../../src/testing/smtp.js";

const ALICE = { name: "alice", password: "alice-secret-pw" };
const POLICY = 'allowed_recipients = ["@example.com"]\nmax_recipients = 3\n';

/** A TCP proxy to `port` that keeps every byte clients sent through it. */
async function recordingProxy(port: number) {
  const sent: Buffer[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    client.on("data", (b: Buffer) => sent.push(b));
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    bytes: () => Buffer.concat(sent).length,
    /** Whether alice's password came through, plain (LOGIN) or base64 (AUTHENTICATE PLAIN). */
    sawPassword: () => {
      const all = Buffer.concat(sent).toString("latin1");
      const plain = Buffer.from(`\0alice\0${ALICE.password}`).toString("base64");
      return all.includes(ALICE.password) || all.includes(plain);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let env: SendEnv;
let evilDv: Dovecot;
let evilSmtp: SmtpRelay;
let evilImap: Awaited<ReturnType<typeof recordingProxy>>;
let agent: DaemonClient;

beforeAll(async () => {
  env = await startSendEnv({ work: { sendPolicy: POLICY } });
  const lmtpPort = await freePort();
  evilSmtp = await startSmtpRelay({ lmtpPort, users: [ALICE] });
  evilDv = await startDovecot({
    users: [ALICE, { name: "bob", password: "bob-secret-pw" }],
    extraConfig: lmtpConfig(lmtpPort),
  });
  evilImap = await recordingProxy(evilDv.port);
}, 90_000);

afterAll(async () => {
  agent?.close();
  await env?.stop();
  await evilImap?.close();
  await evilSmtp?.stop();
  await evilDv?.stop();
});

const send = (subject: string) =>
  agent.call("send", { account: "work", to: ["bob@example.com"], subject, body: "hello" });

describe("a lost state.db and config.toml pointing at an attacker's servers", () => {
  it("sends nothing to them until the owner confirms; then the account works there", async () => {
    // The owner's setup works: a send reaches the owner's SMTP server.
    agent = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
    expect(await send("before")).toMatchObject({ status: "sent" });
    expect(env.relay.transactions()).toHaveLength(1);

    // The attack: the daemon stops, state.db goes, config.toml names the attacker's servers.
    agent.close();
    env.client.close();
    await env.daemon.stop();
    for (const f of [env.home.dbFile, `${env.home.dbFile}-wal`, `${env.home.dbFile}-shm`])
      fs.rmSync(f, { force: true });
    env.writeConfig({ work: { sendPolicy: POLICY, port: evilImap.port }, smtpPort: evilSmtp.port });
    env.daemon = await startDaemon({ home: env.home, log: () => undefined });
    env.client = new DaemonClient({ socketPath: env.home.socketPath, client: "cli" });
    agent = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });

    const search = await agent.call("search", { query: "hello", accounts: ["work"] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(search).toMatchObject({ reason: "POLICY_DENIED" });
    expect((search as Error).message).toContain(
      "server settings of account work wait for the owner's confirmation",
    );

    const sent = await send("after").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(sent).toMatchObject({ reason: "POLICY_DENIED" });
    expect((sent as Error).message).toContain(
      "server settings of account work wait for the owner's confirmation",
    );
    const test = await agent.call("account.test", { account: "work" });
    expect(test.smtp).toMatchObject({ ok: false });
    expect(JSON.stringify(test)).toContain("wait for the owner's confirmation");

    expect(evilImap.bytes()).toBe(0);
    expect(evilSmtp.commands).toEqual([]);
    expect(env.relay.transactions()).toHaveLength(1);

    const accounts = (await agent.call("accounts.list", {})).accounts;
    expect(accounts.find((a) => a.name === "work")).toMatchObject({ confirmation_pending: true });
    const status = (await env.client.call("policy.status", {})).accounts.find((a) => a.account === "work");
    expect(status).toMatchObject({ pending: true, endpoint: { pending: true, confirmed: null } });
    const audit = (await env.client.readAudit({ action: "endpoint.pending" })).rows;
    expect(audit.find((r) => r.account === "work")).toMatchObject({ client: "config", decision: "held" });
    expect((await env.client.readAudit({ action: "endpoint.adopt" })).rows).toEqual([]);

    // Only the owner confirms; the agent's attempt is refused and changes nothing.
    await expect(agent.call("policy.confirm", {})).rejects.toMatchObject({ reason: "POLICY_DENIED" });
    expect(evilImap.bytes()).toBe(0);

    await env.confirmPolicy();
    expect((await agent.call("accounts.list", {})).accounts.map((a) => a.confirmation_pending)).toEqual([
      false,
      false,
    ]);
    expect(await agent.call("search", { query: "hello", accounts: ["work"] })).toMatchObject({
      rows: [],
      partial: [],
    });
    expect(evilImap.sawPassword()).toBe(true);
    expect(await send("confirmed")).toMatchObject({ status: "sent" });
    expect(evilSmtp.transactions()).toEqual([{ from: "alice@example.com", rcpts: ["bob@example.com"] }]);
  });
});
