/**
 * A policy widening written into config.toml waits for the owner: over the real daemon and SMTP
 * relay, the wider policy is refused until `chainmail policy confirm` (the built CLI, in a real
 * pseudo-terminal, with the code it shows typed back) runs, a narrowing applies at once, every change
 * is audited with its diff, and only the CLI may confirm. A first start and a lost state.db fail
 * closed: nothing config.toml asks beyond CLOSED applies before the owner confirms it.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";
import { cliInTerminal } from "./support/tty.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: SendEnv;
let mcp: DaemonClient;

const ONLY_ALICE = 'allowed_recipients = ["alice@example.com"]\nmax_recipients = 5\n';
const ALSO_DOMAIN = 'allowed_recipients = ["alice@example.com", "@example.com"]\nmax_recipients = 5\n';

/** The built CLI, run without blocking this process (the daemon under test runs in it). */
function cli(
  args: string[],
  json = true,
): Promise<{ code: number | null; out: string; json: () => Record<string, unknown> }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--home", env.dir, ...args, ...(json ? ["--json"] : [])], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
    });
    child.on("close", (code) =>
      resolve({ code, out, json: () => JSON.parse(out) as Record<string, unknown> }),
    );
  });
}

/** `chainmail policy confirm ARGS` in a terminal, the shown code typed back (or `typed` instead). */
function confirmInTerminal(args: string[] = [], typed?: (code: string) => string) {
  return cliInTerminal(["--home", env.dir, "policy", "confirm", ...args], typed ?? ((code) => code));
}

async function policyRows(action: string) {
  return (await env.client.readAudit({ action })).rows;
}

const toBob = (subject: string) => ({ account: "work", to: ["bob@example.com"], subject, body: "hi" });

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  env = await startSendEnv({ work: { sendPolicy: ONLY_ALICE }, unconfirmed: true });
  mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
}, 60_000);

afterAll(async () => {
  mcp?.close();
  await env?.stop();
});

describe("policy confirmation", () => {
  it("fails closed at the first start: every account waits for the owner, who confirms in a terminal", async () => {
    expect(await policyRows("policy.adopt")).toEqual([]);
    const rows = await policyRows("policy.pending");
    expect(rows.map((r) => [r.account, r.client, r.decision]).sort()).toEqual([
      ["home", "config", "held"],
      ["work", "config", "held"],
    ]);
    expect(rows.find((r) => r.account === "work")?.summary).toContain("no confirmed policy yet");
    const toAlice = { account: "work", to: ["alice@example.com"], subject: "first", body: "hi" };
    // Its server settings wait too, so nothing of the account goes to a server, not even a held copy.
    const unconfirmed = {
      reason: "POLICY_DENIED",
      message: expect.stringContaining("server settings of account work wait for the owner's confirmation"),
    };
    await expect(env.client.call("send", toAlice)).rejects.toMatchObject(unconfirmed);
    expect(env.relay.received).toHaveLength(0);
    expect((await env.client.listAccounts()).accounts.map((a) => [a.name, a.confirmation_pending])).toEqual([
      ["work", true],
      ["home", true],
    ]);
    expect((await cli(["accounts"], false)).out).toContain("confirmation pending");

    // No terminal (an agent's pipe): refused before the daemon is asked, with or without a digest.
    const piped = await cli(["policy", "confirm"]);
    expect(piped.code).toBe(4);
    expect(piped.json()["error"]).toMatchObject({
      reason: "POLICY_DENIED",
      message: expect.stringContaining("needs an interactive terminal"),
    });
    const digest = String(
      ((await cli(["policy", "status"])).json()["accounts"] as Array<Record<string, unknown>>).find(
        (a) => a["account"] === "work",
      )?.["digest"],
    );
    expect((await cli(["policy", "confirm", "work", "--digest", digest])).code).toBe(4);

    // A terminal, but not the code it showed: nothing confirmed.
    const wrong = await confirmInTerminal([], (code) => (code === "AAAAAA" ? "BBBBBB" : "AAAAAA"));
    expect(wrong.code).toBe(4);
    expect(wrong.out).toContain("the code typed is not the one shown");
    await expect(env.client.call("send", { ...toAlice, subject: "still first" })).rejects.toMatchObject(
      unconfirmed,
    );
    expect((await policyRows("policy.confirm")).filter((r) => r.decision === "allowed")).toEqual([]);

    // Each run shows a new code; the one shown, typed back, confirms every account.
    const seen: string[] = [];
    const ok = await confirmInTerminal([], (code) => {
      seen.push(code);
      return code.toLowerCase();
    });
    expect(ok.code).toBe(0);
    expect(seen[0]).toMatch(/^[A-Z0-9]{6}$/);
    expect(wrong.out).not.toContain(`type this code: ${seen[0]}`);
    expect(ok.out).toContain("allowed_recipients +alice@example.com");
    expect((await env.client.call("send", { ...toAlice, subject: "confirmed" })).status).toBe("sent");
    expect(env.relay.received).toHaveLength(1);
    expect((await env.client.listAccounts()).accounts.every((a) => !a.confirmation_pending)).toBe(true);
    expect((await cli(["policy", "status"])).json()["accounts"]).toEqual(
      expect.arrayContaining([expect.objectContaining({ account: "work", pending: false })]),
    );
  });

  it("keeps refusing a widened recipient list until the owner confirms it with the CLI", async () => {
    env.writeConfig({ work: { sendPolicy: ALSO_DOMAIN } });
    const held = await env.client.call("send", toBob("before confirm"));
    expect(held).toMatchObject({ status: "held", blocked: ["bob@example.com"] });
    expect(held.status === "held" && held.hint).toContain("awaits the owner's confirmation");
    expect(env.relay.received).toHaveLength(1);
    const pending = await policyRows("policy.pending");
    expect(pending[0]).toMatchObject({ account: "work", client: "config", decision: "held" });
    expect(pending[0]?.summary).toContain("allowed_recipients +@example.com");

    const status = await cli(["policy", "status"]);
    expect(status.code).toBe(0);
    const work = (status.json()["accounts"] as Array<Record<string, unknown>>).find(
      (a) => a["account"] === "work",
    );
    expect(work).toMatchObject({ pending: true, changes: ["allowed_recipients +@example.com"] });

    const text = (await cli(["policy", "status"], false)).out;
    expect(text).toContain(
      `work\tpending (digest ${String(work?.["digest"])}): allowed_recipients +@example.com`,
    );
    expect(text).toContain("home\tconfirmed, nothing pending");

    // The MCP client cannot confirm, and the refusal is audited.
    await expect(mcp.call("policy.confirm", { account: "work" })).rejects.toMatchObject({
      reason: "POLICY_DENIED",
    });
    expect((await policyRows("policy.confirm"))[0]).toMatchObject({ client: "mcp", decision: "denied" });
    expect((await env.client.call("send", toBob("still held"))).status).toBe("held");

    // A digest that is not the pending policy's is refused (the file changed since status showed it).
    const stale = await confirmInTerminal(["work", "--digest", "000000000000"]);
    expect(stale.code).toBe(9);
    const ok = await confirmInTerminal(["work", "--digest", String(work?.["digest"]), "--json"]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out.trim().split(/\r?\n/).at(-1) ?? "")).toEqual({
      confirmed: [{ account: "work", changes: ["allowed_recipients +@example.com"] }],
    });
    expect((await policyRows("policy.confirm"))[0]).toMatchObject({
      client: "cli",
      decision: "allowed",
      account: "work",
    });
    expect((await policyRows("policy.confirm"))[0]?.summary).toContain("allowed_recipients +@example.com");

    expect((await env.client.call("send", toBob("after confirm"))).status).toBe("sent");
    expect(env.relay.received).toHaveLength(2);
  });

  it("applies a narrowing at once, audited with its diff, and it stays after the file widens again", async () => {
    env.writeConfig({
      work: {
        sendPolicy: 'allowed_recipients = ["alice@example.com", "@example.com"]\nmax_recipients = 1\n',
      },
    });
    const two = { account: "work", to: ["bob@example.com", "alice@example.com"], subject: "two", body: "x" };
    expect(await env.client.call("send", two)).toMatchObject({ status: "held", too_many_recipients: true });
    const narrow = (await policyRows("policy.narrow"))[0];
    expect(narrow).toMatchObject({ account: "work", client: "config", decision: "allowed" });
    expect(narrow?.summary).toContain("max_recipients 5 → 1");

    // Back to 5 in the file: a widening again, so still 1 until confirmed.
    env.writeConfig({ work: { sendPolicy: ALSO_DOMAIN } });
    const again = await env.client.call("send", { ...two, subject: "two again" });
    expect(again).toMatchObject({ status: "held", too_many_recipients: true });
    expect((await policyRows("policy.pending"))[0]?.summary).toContain("max_recipients 1 → 5");
    expect((await confirmInTerminal()).code).toBe(0);
    expect((await env.client.call("send", { ...two, subject: "two confirmed" })).status).toBe("sent");
  });

  it("keeps a pending widening across a restart and says so when expunge is refused", async () => {
    env.writeConfig({ work: { sendPolicy: ALSO_DOMAIN, allow_expunge: true } });
    await env.restartDaemon();
    expect((await env.client.listAccounts()).accounts.find((a) => a.name === "work")?.allow_expunge).toBe(
      false,
    );
    await env.dv.appendMessage("alice", "INBOX", "Subject: doomed\r\nMessage-ID: <doomed@x>\r\n\r\nbye\r\n");
    const { rows } = await env.client.search({
      query: "subject:doomed",
      accounts: ["work"],
      source: "server",
    });
    const err = await env.client.expunge({ refs: [rows[0]!.ref] }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      reason: "POLICY_DENIED",
      hint: expect.stringContaining("awaits the owner's confirmation"),
    });
    await env.confirmPolicy();
    expect((await env.client.listAccounts()).accounts.find((a) => a.name === "work")?.allow_expunge).toBe(
      true,
    );
    expect((await env.client.expunge({ refs: [rows[0]!.ref] })).succeeded).toBe(1);
  });

  it("treats removing allowed_recipients as a widening, and an account added later as closed until confirmed", async () => {
    env.writeConfig({ work: { allow_expunge: true }, extra: [{ name: "later", user: "carol" }] });
    const status = (await env.client.call("policy.status", {})).accounts;
    expect(status.find((s) => s.account === "work")).toMatchObject({
      pending: true,
      changes: ["allowed_recipients removed (any recipient)", "max_recipients 5 → none"],
    });
    expect(status.find((s) => s.account === "later")).toMatchObject({ pending: true });
    expect((await env.client.call("send", { ...toBob("anyone"), to: ["x@elsewhere.test"] })).status).toBe(
      "held",
    );
  });

  it("applies a narrowing even while state.db refuses to record it, and records it afterwards", async () => {
    const narrowRows = (await policyRows("policy.narrow")).length;
    const other = new Database(env.home.dbFile);
    try {
      other.exec(`CREATE TRIGGER policy_refuse_u BEFORE UPDATE ON policy BEGIN SELECT RAISE(ABORT, 'refused'); END;
        CREATE TRIGGER policy_refuse_i BEFORE INSERT ON policy BEGIN SELECT RAISE(ABORT, 'refused'); END;`);
      const narrowed = 'allowed_recipients = ["alice@example.com", "@example.com"]\nmax_recipients = 1\n';
      env.writeConfig({ work: { allow_expunge: true, sendPolicy: narrowed } });
      const two = {
        account: "work",
        to: ["bob@example.com", "alice@example.com"],
        subject: "locked",
        body: "x",
      };
      expect(await env.client.call("send", two)).toMatchObject({ status: "held", too_many_recipients: true });
      expect(await policyRows("policy.narrow")).toHaveLength(narrowRows);
      other.exec("DROP TRIGGER policy_refuse_u; DROP TRIGGER policy_refuse_i;");
      await env.client.listAccounts();
      const rows = await policyRows("policy.narrow");
      expect(rows).toHaveLength(narrowRows + 1);
      expect(rows[0]?.summary).toBe("applied: max_recipients 5 → 1");
    } finally {
      other.close();
    }
  });

  it("fails closed when state.db is deleted: the pending widening is not adopted, every account waits again", async () => {
    // config.toml asks for more than was confirmed (expunge, any recipient): a widening that waits.
    env.writeConfig({
      work: { allow_expunge: true, sendPolicy: ALSO_DOMAIN },
      home: { allow_expunge: true },
    });
    expect((await env.client.call("policy.status", {})).accounts.every((a) => a.pending)).toBe(true);
    env.client.close();
    await env.daemon.stop();
    for (const f of ["", "-wal", "-shm"]) fs.rmSync(`${env.home.dbFile}${f}`, { force: true });
    await env.restartDaemon();
    const sent = env.relay.received.length;
    // The server settings are not confirmed either: nothing of the account reaches a server.
    const unconfirmed = {
      reason: "POLICY_DENIED",
      message: expect.stringContaining("server settings of account work wait for the owner's confirmation"),
    };
    await expect(env.client.call("send", toBob("after the state was lost"))).rejects.toMatchObject(
      unconfirmed,
    );
    await expect(
      env.client.call("send", {
        account: "work",
        to: ["alice@example.com"],
        subject: "even the old allow-list",
        body: "x",
      }),
    ).rejects.toMatchObject(unconfirmed);
    expect(env.relay.received).toHaveLength(sent);
    const accounts = (await env.client.listAccounts()).accounts;
    expect(accounts.map((a) => [a.name, a.allow_expunge, a.confirmation_pending])).toEqual([
      ["work", false, true],
      ["home", false, true],
    ]);
    expect(await policyRows("policy.adopt")).toEqual([]);
    expect((await confirmInTerminal()).code).toBe(0);
    expect((await env.client.call("send", toBob("confirmed again"))).status).toBe("sent");
    expect(env.relay.received).toHaveLength(sent + 1);
  });
});
