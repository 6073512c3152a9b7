/**
 * Where an account's password goes waits for the owner: config.toml pointing an account at another
 * IMAP or SMTP server (host, port, TLS mode, username, provider) changes nothing until the owner runs
 * `chainmail policy confirm`; until then the daemon connects where it did (an account with no
 * confirmed settings yet connects nowhere), and the change is audited and shown by `policy status`. A listener stands in for an attacker's server and records what it is
 * sent: it must never see the password before the confirmation.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { parseConfig } from "../src/config.js";
import { reconcilePolicies } from "../src/policy/service.js";
import { setSecret } from "../src/secrets.js";
import { EndpointStore } from "../src/store/endpoints.js";
import { StateDb } from "../src/store/state.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

/** A server that greets like IMAP, refuses every command, and keeps every byte it was sent. */
async function rogueImap() {
  const received: string[] = [];
  const server = net.createServer((socket) => {
    socket.setEncoding("utf8");
    socket.write("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n");
    // The tag of an AUTHENTICATE waiting for its credentials line.
    let authenticating: string | undefined;
    socket.on("data", (chunk: string) => {
      received.push(chunk);
      for (const line of chunk.split("\r\n").filter(Boolean)) {
        const [tag, command] = line.split(" ");
        if (authenticating) {
          socket.write(`${authenticating} NO [AUTHENTICATIONFAILED] no\r\n`);
          authenticating = undefined;
        } else if (command?.toUpperCase() === "AUTHENTICATE") {
          authenticating = tag;
          socket.write("+ \r\n");
        } else socket.write(`${tag} NO [AUTHENTICATIONFAILED] no\r\n`);
      }
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Whether alice's password reached it, plain (LOGIN) or base64 (AUTHENTICATE PLAIN). */
    sawPassword: () => {
      const all = received.join("");
      const plain = Buffer.from("\0alice\0alice-secret-pw").toString("base64");
      return all.includes("alice-secret-pw") || all.includes(plain);
    },
    connections: () => received.length,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let env: MailEnv;
let rogue: Awaited<ReturnType<typeof rogueImap>>;
let mcp: DaemonClient;

beforeAll(async () => {
  env = await startMailEnv();
  rogue = await rogueImap();
  mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
}, 60_000);
afterAll(async () => {
  mcp?.close();
  await env?.stop();
  await rogue?.close();
});

const audit = async (action: string) => (await env.client.readAudit({ action })).rows;
const workStatus = async () => {
  const s = await env.client.call("policy.status", {});
  return s.accounts.find((a) => a.account === "work")!;
};
const folderCount = async (account: string) =>
  (await env.client.listFolders({ accounts: [account] })).accounts[0]?.folders.length ?? 0;

describe("an account's server settings", () => {
  it("wait for the owner when the daemon first sees the account, audited (the env then confirms them)", async () => {
    expect(await audit("endpoint.adopt")).toEqual([]);
    const rows = await audit("endpoint.pending");
    expect(rows.map((r) => [r.account, r.client, r.decision]).sort()).toEqual([
      ["home", "config", "held"],
      ["work", "config", "held"],
    ]);
    expect(rows.find((r) => r.account === "work")?.summary).toContain(
      `no confirmed server settings yet (a new account, or state.db was missing): imap, user alice, imap 127.0.0.1:${env.dv.port} (none), smtp none await chainmail policy confirm`,
    );
    expect((await workStatus()).pending).toBe(false);
  });

  it("keep connecting to the confirmed server when config.toml points elsewhere, across a restart", async () => {
    env.writeConfig({ work: { port: rogue.port } });
    expect(await folderCount("work")).toBeGreaterThan(0);
    await env.restartDaemon();
    expect(await folderCount("work")).toBeGreaterThan(0);
    expect(rogue.connections()).toBe(0);

    const pending = (await audit("endpoint.pending")).filter((r) =>
      r.summary.startsWith("server settings change"),
    );
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ account: "work", client: "config", decision: "held" });
    expect(pending[0]?.summary).toContain(`imap.port ${env.dv.port} → ${rogue.port}`);
    const status = await workStatus();
    expect(status).toMatchObject({
      pending: true,
      changes: [`imap.port ${env.dv.port} → ${rogue.port}`],
      endpoint: {
        pending: true,
        confirmed: { imap: { port: env.dv.port } },
        requested: { imap: { port: rogue.port } },
      },
    });
    expect(pending[0]?.summary).toContain(`(${status.digest})`);

    // Only the owner's CLI confirms; an MCP client's attempt is refused and audited.
    await expect(mcp.call("policy.confirm", { account: "work" })).rejects.toMatchObject({
      reason: "POLICY_DENIED",
    });
    expect(rogue.sawPassword()).toBe(false);

    const confirmed = await env.client.call("policy.confirm", { account: "work", digest: status.digest });
    expect(confirmed).toEqual({
      confirmed: [{ account: "work", changes: [`imap.port ${env.dv.port} → ${rogue.port}`] }],
    });
    // Confirmed: the next call goes to the new server, which is sent the password and refuses it.
    const after = await env.client.listFolders({ accounts: ["work"] });
    expect(after.partial?.[0]?.account).toBe("work");
    expect(rogue.sawPassword()).toBe(true);
    expect((await audit("policy.confirm"))[0]?.summary).toContain(`imap.port ${env.dv.port} → ${rogue.port}`);

    // Back to Dovecot is a change too, and waits for the owner like any other.
    env.writeConfig({});
    expect((await env.client.listFolders({ accounts: ["work"] })).partial?.[0]?.account).toBe("work");
    await env.confirmPolicy();
    expect(await folderCount("work")).toBeGreaterThan(0);
    expect((await workStatus()).pending).toBe(false);
  });

  it("stop waiting when config.toml goes back to the confirmed settings", async () => {
    const before = (await audit("endpoint.pending")).length;
    env.writeConfig({ work: { port: rogue.port } });
    await env.client.listAccounts();
    env.writeConfig({});
    await env.client.listAccounts();
    const rows = await audit("endpoint.pending");
    expect(rows).toHaveLength(before + 2);
    expect(rows[0]).toMatchObject({
      decision: "allowed",
      summary: "no server settings change pending any more",
    });
    expect((await workStatus()).pending).toBe(false);
  });

  it("of an account removed and added back with another server wait like any change", async () => {
    setSecret(env.home.secretsDir, "later", "carol-secret-pw");
    // An account added to a running daemon connects nowhere until the owner confirms it, as at a first start.
    env.writeConfig({ extra: [{ name: "later", user: "carol" }] });
    const before = await env.client.listFolders({ accounts: ["later"] });
    expect(before.partial?.[0]).toMatchObject({ account: "later", error: { reason: "POLICY_DENIED" } });
    expect((await env.client.listAccounts()).accounts.find((a) => a.name === "later")).toMatchObject({
      confirmation_pending: true,
    });
    await env.confirmPolicy();
    expect(await folderCount("later")).toBeGreaterThan(0);
    env.writeConfig({});
    await env.client.listAccounts();
    const seen = rogue.connections();
    env.writeConfig({ extra: [{ name: "later", user: "carol", port: rogue.port }] });
    expect(await folderCount("later")).toBeGreaterThan(0);
    expect(rogue.connections()).toBe(seen);
    const later = (await env.client.call("policy.status", {})).accounts.find((a) => a.account === "later");
    // Its confirmed server stays, and the other one waits like any change.
    expect(later?.endpoint.pending).toBe(true);
    expect(later?.changes).toContain(`imap.port ${env.dv.port} → ${rogue.port}`);
  });
});

describe("reconciling server settings", () => {
  const toml = (smtp: string, user = "alice") => `
[[accounts]]
name = "work"
provider = "imap"
address = "alice@example.com"
username = "${user}"
[accounts.imap]
host = "imap.example.com"
port = 993
tls = "tls"
${smtp}
[accounts.policy]
allow_expunge = false
allow_delete_folder = false
`;
  const SMTP = '[accounts.smtp]\nhost = "smtp.example.com"\nport = 465\ntls = "tls"';

  it("keeps the confirmed SMTP server and username while a change waits, and names each change", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-endpoints-"));
    const state = new StateDb(path.join(dir, "state.db"));
    try {
      // Never seen: it connects nowhere (a login is refused) until the owner confirms, as policy.confirm does.
      expect(reconcilePolicies(state, parseConfig(toml(SMTP))).accounts[0]?.endpoint_unconfirmed).toBe(true);
      const endpoints = new EndpointStore(state.db);
      endpoints.put("work", endpoints.get("work")!.pending!, null);
      expect(reconcilePolicies(state, parseConfig(toml(SMTP))).accounts[0]?.endpoint_unconfirmed).toBe(
        undefined,
      );
      const changed = parseConfig(
        toml(SMTP.replace("smtp.example.com", "smtp.attacker.example").replace('"tls"', '"none"'), "mallory"),
      );
      const effective = reconcilePolicies(state, changed).accounts[0]!;
      expect(effective.smtp).toEqual({ host: "smtp.example.com", port: 465, tls: "tls" });
      expect(effective.username).toBe("alice");
      const row = state.db
        .prepare(
          "SELECT summary FROM audit WHERE action = 'endpoint.pending' AND summary LIKE 'server settings change%'",
        )
        .get() as {
        summary: string;
      };
      expect(row.summary).toContain(
        "username alice → mallory; smtp.host smtp.example.com → smtp.attacker.example; smtp.tls tls → none",
      );
      // Removing the SMTP server waits too; so does adding one where there was none.
      const none = reconcilePolicies(state, parseConfig(toml(""))).accounts[0]!;
      expect(none.smtp).toEqual({ host: "smtp.example.com", port: 465, tls: "tls" });
    } finally {
      state.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
