/**
 * A same-user agent (told so by an injected message) writes config.toml so that the account's own
 * addresses, the ones a send's From must be one of, include an address of its choosing: a new alias,
 * or a new `address`. Then it sends through the daemon's normal operations (a draft From the alias,
 * send_email, reply and forward From the new address). Judged at the real SMTP server on 127.0.0.1: until the
 * owner confirms, it is asked for nothing From that address (no MAIL FROM, no message whose From
 * names it), and the tool result says why; after `policy confirm` the same sends go. An alias removed
 * from config.toml is not own at once, with no confirmation.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../../src/client/index.js";
import { encodeRef } from "../../src/refs.js";
import { type SendEnv, startSendEnv } from "../../src/testing/index.js";

const CEO = "ceo@bank.example";
const SEND = 'allowed_recipients = ["@example.com"]\nmax_recipients = 5\n';

let env: SendEnv;
let agent: DaemonClient;

/** Whatever the SMTP server was asked to send From `address`: in MAIL FROM or in a From header. */
function sentFrom(address: string): string[] {
  const a = address.toLowerCase();
  return [
    ...env.relay
      .transactions()
      .filter((t) => t.from.toLowerCase() === a)
      .map((t) => `MAIL FROM:<${t.from}>`),
    ...env.relay.received
      .map((r) => /^From:.*$/im.exec(r.raw.toString("utf8"))?.[0] ?? "")
      .filter((line) => line.toLowerCase().includes(a)),
  ];
}

let n = 0;
async function append(folder: string, lines: string[]): Promise<string> {
  const r = await env.dv.appendMessage("alice", folder, `${lines.join("\r\n")}\r\n`);
  return encodeRef({ account: "work", folder, uidValidity: r.uidValidity, uid: r.uid });
}
const draftFrom = (from: string) =>
  append("Drafts", [`From: ${from}`, "To: bob@example.com", `Subject: wire ${++n}`, "", "Pay it."]);
const original = () =>
  append("INBOX", [
    "From: Bob <bob@example.com>",
    "To: alice@example.com",
    `Subject: question ${++n}`,
    `Message-ID: <q-${n}@example.com>`,
    "",
    "Please answer.",
  ]);

const workStatus = async () =>
  (await env.client.call("policy.status", {})).accounts.find((a) => a.account === "work")!;

/**
 * The daemon re-reads config.toml before a call when its mtime changed: each edit gets an mtime of
 * its own (two writes in one clock tick could share one), so the next call runs on it.
 */
let tick = Math.floor(Date.now() / 1000);
function edited(): void {
  tick += 10;
  fs.utimesSync(env.home.configFile, tick, tick);
}

/** config.toml as the env writes it, with work's `address` replaced. */
function withAddress(address: string): void {
  const text = fs.readFileSync(env.home.configFile, "utf8");
  const next = text.replace('address = "alice@example.com"', `address = "${address}"`);
  expect(next).not.toBe(text);
  fs.writeFileSync(env.home.configFile, next);
  edited();
}

beforeAll(async () => {
  env = await startSendEnv({ work: { sendPolicy: SEND } });
  agent = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
}, 60_000);

afterAll(async () => {
  agent?.close();
  await env?.stop();
});

describe("an alias written into config.toml", () => {
  it("is not own until the owner confirms: a draft From it is held and SMTP is asked for nothing", async () => {
    env.writeConfig({ work: { sendPolicy: SEND, aliases: [`The CEO <${CEO.toUpperCase()}>`] } });
    edited();
    const ref = await draftFrom(`"The CEO" <${CEO}>`);
    const res = await agent.call("draft.send", { ref });
    expect(sentFrom(CEO)).toEqual([]);
    expect(res).toMatchObject({ status: "held", draft_ref: ref, blocked: [`"The CEO" <${CEO}>`] });
    expect(res.hint).toContain("its From is not one of the account's own addresses");
    expect(res.hint).toContain("awaits the owner's confirmation");
    // A draft From the confirmed address still goes: only the new alias waits.
    expect(await agent.call("draft.send", { ref: await draftFrom("alice@example.com") })).toMatchObject({
      status: "sent",
    });
    expect(sentFrom(CEO)).toEqual([]);

    const status = await workStatus();
    expect(status.pending).toBe(true);
    expect(status.changes).toEqual([`own addresses (address, aliases) +${CEO}`]);
    expect(status.requested.own_addresses).toEqual(["alice@example.com", CEO]);
    expect(status.confirmed.own_addresses).toEqual(["alice@example.com"]);
    // Newest first.
    const pending = (await env.client.readAudit({ action: "policy.pending" })).rows[0];
    expect(pending).toMatchObject({ decision: "held", account: "work" });
    expect(pending?.summary).toContain(`awaits chainmail policy confirm (${status.digest})`);
    expect(pending?.summary).toContain(`own addresses (address, aliases) +${CEO}`);
  });

  it("is own once the owner confirms the change they were shown", async () => {
    await env.confirmPolicy();
    expect((await workStatus()).pending).toBe(false);
    const res = await agent.call("draft.send", { ref: await draftFrom(`"The CEO" <${CEO}>`) });
    expect(res).toMatchObject({ status: "sent" });
    expect(sentFrom(CEO)).toEqual([`From: "The CEO" <${CEO}>`]);
  });

  it("removed from config.toml, is not own at once (a narrowing needs no confirmation)", async () => {
    const before = env.relay.received.length;
    env.writeConfig({ work: { sendPolicy: SEND } });
    edited();
    const ref = await draftFrom(CEO);
    // The daemon reads config.toml at this call: no waiting, no confirmation.
    expect(await agent.call("draft.send", { ref })).toMatchObject({ status: "held", blocked: [CEO] });
    expect((await workStatus()).pending).toBe(false);
    const narrowed = (await env.client.readAudit({ action: "policy.narrow" })).rows[0];
    expect(narrowed?.summary).toContain(`own addresses (address, aliases) -${CEO}`);
    expect(env.relay.received.length).toBe(before);
  });
});

describe("an address written into config.toml", () => {
  const FRAUD = "fraud@evil.example";

  it("send_email, reply and forward From it are held, and SMTP is asked for nothing From it", async () => {
    withAddress(FRAUD);
    const sent = await agent.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "new bank details",
      body: "Pay here.",
    });
    expect(sent).toMatchObject({ status: "held", blocked: [FRAUD] });
    expect(sent.hint).toContain("its From is not one of the account's own addresses");
    expect(sent.hint).toContain("awaits the owner's confirmation");
    const replied = await agent.call("reply", { ref: await original(), body: "Pay here." });
    expect(replied).toMatchObject({ status: "held", blocked: [FRAUD] });
    const forwarded = await agent.call("forward", { ref: await original(), to: ["bob@example.com"] });
    expect(forwarded).toMatchObject({ status: "held", blocked: [FRAUD] });
    expect(sentFrom(FRAUD)).toEqual([]);
    // The old address left config.toml: gone from the confirmed ones at once (a narrowing), the new waits.
    expect((await workStatus()).changes).toEqual([`own addresses (address, aliases) +${FRAUD}`]);
    const narrowed = (await env.client.readAudit({ action: "policy.narrow" })).rows[0];
    expect(narrowed?.summary).toContain("own addresses (address, aliases) -alice@example.com");
  });

  it("after policy confirm, send_email From it goes", async () => {
    await env.confirmPolicy();
    const sent = await agent.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "confirmed address",
      body: "ok",
    });
    expect(sent).toMatchObject({ status: "sent" });
    expect(sentFrom(FRAUD)).toEqual([`MAIL FROM:<${FRAUD}>`, `From: ${FRAUD}`]);
  });
});
