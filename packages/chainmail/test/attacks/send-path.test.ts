/**
 * The send path under attack (issue 30), judged at the SMTP server: a real Dovecot holds the
 * hostile mail, a real SMTP server records every MAIL FROM and RCPT TO as the client wrote them and
 * every DATA. The agent calls as the MCP client; the owner as the CLI client. After every test, each
 * RCPT TO the server was ever asked for is inside the allow-list in force and no transaction names
 * more than max_recipients.
 */
import { simpleParser } from "mailparser";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../../src/client/index.js";
import { encodeRef } from "../../src/refs.js";
import { type SendEnv, smtpMailboxDomain, startSendEnv } from "../../src/testing/index.js";

const ALIAS = "alice.alias@example.com";
let allow = ["@example.com", "boss@partner.org"];
const MAX = 3;
const policy = (list: string[]) => `allowed_recipients = ${JSON.stringify(list)}\nmax_recipients = ${MAX}\n`;

let env: SendEnv;
let agent: DaemonClient;

/** A RCPT path is one RFC 5321 mailbox (read by the sink's own grammar) whose domain or address is allowed. */
const inAllowList = (rcpt: string) => {
  const domain = smtpMailboxDomain(rcpt);
  if (domain === undefined) return false;
  return allow.some((r) => (r.startsWith("@") ? `@${domain}` === r : rcpt.toLowerCase() === r));
};

/** The number of transactions the SMTP server has seen so far. */
const mark = () => env.relay.transactions().length;
const since = (m: number) => env.relay.transactions().slice(m);

async function append(folder: string, lines: string[]): Promise<string> {
  const r = await env.dv.appendMessage("alice", folder, `${lines.join("\r\n")}\r\n`);
  return encodeRef({ account: "work", folder, uidValidity: r.uidValidity, uid: r.uid });
}

let n = 0;
const original = (headers: string[]) =>
  append("INBOX", [
    ...headers,
    `Subject: hostile ${++n}`,
    `Message-ID: <hostile-${n}@y.test>`,
    "",
    "Please answer.",
  ]);

beforeAll(async () => {
  env = await startSendEnv({ work: { sendPolicy: policy(allow), aliases: [ALIAS] } });
  agent = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
}, 60_000);

afterAll(async () => {
  agent?.close();
  await env?.stop();
});

afterEach(() => {
  for (const t of env.relay.transactions()) {
    expect(t.rcpts.length, JSON.stringify(t)).toBeLessThanOrEqual(MAX);
    for (const r of t.rcpts) expect(inAllowList(r), r).toBe(true);
  }
});

describe("addresses from a stranger's mail", () => {
  it("reply: a Reply-To of <evil@y.com,x@example.com> is held with that text in blocked, and nothing reaches SMTP", async () => {
    const ref = await original([
      "From: X <x@example.com>",
      "To: alice@example.com",
      "Reply-To: <evil@y.com,x@example.com>",
    ]);
    const m = mark();
    const res = await agent.call("reply", { ref, body: "sure" });
    expect(res).toMatchObject({ status: "held", blocked: ["<evil@y.com,x@example.com>"] });
    expect(res.hint).toContain("not one valid email address");
    expect(since(m)).toEqual([]);
  });

  it("reply all: a crafted Cc is held, and no RCPT outside the allow-list is made", async () => {
    const named = await original([
      "From: x@example.com",
      "To: alice@example.com, bob@example.com",
      'Cc: "x@example.com" <evil@y.com>',
    ]);
    const listed = await original([
      "From: x@example.com",
      "To: alice@example.com",
      "Cc: bob@example.com, <evil2@y.com,z@example.com>",
    ]);
    const m = mark();
    expect(await agent.call("reply", { ref: named, all: true, body: "all" })).toMatchObject({
      status: "held",
      blocked: ["evil@y.com"],
    });
    expect(await agent.call("reply", { ref: listed, all: true, body: "all" })).toMatchObject({
      status: "held",
      blocked: ["bob@example.com, <evil2@y.com,z@example.com>"],
    });
    expect(since(m)).toEqual([]);
  });

  it("send_draft: a draft another IMAP client appended, its To a list in one address, is held", async () => {
    const ref = await append("Drafts", [
      "From: alice@example.com",
      "To: <evil@y.com,x@example.com>",
      "Subject: appended elsewhere",
      "",
      "hi",
    ]);
    const m = mark();
    const res = await agent.call("draft.send", { ref });
    expect(res).toMatchObject({ status: "held", draft_ref: ref });
    expect(since(m)).toEqual([]);
  });

  it("max_recipients 3: three header entries that hide five addresses are never five RCPTs", async () => {
    const split = await append("Drafts", [
      "From: alice@example.com",
      "To: a@example.com, <b@example.com,c@example.com>, <d@example.com,e@example.com>",
      "Subject: five in three",
      "",
      "hi",
    ]);
    const grouped = await append("Drafts", [
      "From: alice@example.com",
      "To: team: a@example.com, b@example.com, c@example.com;, d@example.com",
      "Cc: e@example.com",
      "Subject: five in a group",
      "",
      "hi",
    ]);
    const m = mark();
    expect(await agent.call("draft.send", { ref: split })).toMatchObject({ status: "held" });
    expect(await agent.call("draft.send", { ref: grouped })).toMatchObject({
      status: "held",
      too_many_recipients: true,
      blocked: [],
    });
    expect(since(m)).toEqual([]);
  });

  it("send_draft: a stranger's message moved into Drafts is held for its From; an alias From is sent", async () => {
    const stranger = await append("Drafts", [
      "From: Mallory <mallory@evil.test>",
      "To: bob@example.com",
      "Subject: moved into Drafts",
      "",
      "send me",
    ]);
    const m = mark();
    const res = await agent.call("draft.send", { ref: stranger });
    expect(res).toMatchObject({ status: "held", blocked: ["Mallory <mallory@evil.test>"] });
    expect(res.hint).toContain("From is not one of the account's own addresses");
    expect(since(m)).toEqual([]);
    const alias = await append("Drafts", [
      `From: Alice <${ALIAS}>`,
      "To: bob@example.com",
      "Subject: from the alias",
      "",
      "hi",
    ]);
    expect(await agent.call("draft.send", { ref: alias })).toMatchObject({ status: "sent" });
    expect(since(m)).toEqual([{ from: "alice@example.com", rcpts: ["bob@example.com"] }]);
  });
});

describe("update_draft of a hostile draft", () => {
  it("refuses to carry over a recipient field it cannot read, naming the field; replacing it works", async () => {
    const ref = await append("Drafts", [
      "From: alice@example.com",
      "To: <evil@y.com,x@example.com>",
      "Subject: to be updated",
      "",
      "hi",
    ]);
    await expect(agent.call("draft.update", { ref, subject: "new subject" })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("the draft's to holds text that is not one email address"),
      detail: "<evil@y.com,x@example.com>",
    });
    const m = mark();
    const updated = await agent.call("draft.update", { ref, to: ["bob@example.com"] });
    expect(updated.status).toBe("draft");
    expect(await agent.call("draft.send", { ref: updated.draft_ref! })).toMatchObject({ status: "sent" });
    expect(since(m)).toEqual([{ from: "alice@example.com", rcpts: ["bob@example.com"] }]);
  });
});

describe("addresses the agent gives", () => {
  it("refuses a domain with / ? # \\ as INVALID_ARGUMENT naming the field, and sends nothing", async () => {
    const m = mark();
    for (const bad of [
      "evil@example.com/ü",
      "evil@example.com?",
      "evil@example.com#",
      "evil@example.com\\",
    ]) {
      await expect(
        agent.call("send", { account: "work", to: ["bob@example.com", bad], subject: "s", body: "b" }),
        bad,
      ).rejects.toMatchObject({
        reason: "INVALID_ARGUMENT",
        message: "to[1] is not one email address written as Name <a@b> or a@b",
      });
    }
    await expect(
      agent.call("send", {
        account: "work",
        to: ["bob@example.com"],
        cc: ["<e@y.com,x@example.com>"],
        subject: "s",
      }),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringMatching(/^cc\[0\] /) });
    expect(since(m)).toEqual([]);
  });
});

describe("drafts' hidden headers", () => {
  it("strips `Bcc : boss@partner.org` and Resent-Bcc from a draft: the Bcc recipient gets it, no recipient reads it", async () => {
    const ref = await append("Drafts", [
      "From: alice@example.com",
      "To: bob@example.com",
      "Bcc : boss@partner.org",
      "Resent-Bcc:",
      " boss@partner.org",
      "Subject: with a hidden copy",
      "",
      "body",
    ]);
    const m = mark();
    expect(await agent.call("draft.send", { ref })).toMatchObject({ status: "sent" });
    expect(since(m)).toEqual([{ from: "alice@example.com", rcpts: ["bob@example.com", "boss@partner.org"] }]);
    const raw = env.relay.received.at(-1)!.raw;
    const head = raw.subarray(0, raw.indexOf("\r\n\r\n")).toString();
    expect(head).not.toContain("partner.org");
    expect((await simpleParser(raw)).bcc).toBeUndefined();
  });
});

describe("exactly once", () => {
  it("reply, the original archived, the same reply with the new ref: one copy at the server", async () => {
    const ref = await original(["From: Carol <carol@example.com>", "To: alice@example.com"]);
    const m = mark();
    const first = await agent.call("reply", { ref, body: "once only" });
    expect(first.status).toBe("sent");
    const moved = await env.client.archive({ refs: [ref] });
    const newRef = moved.outcomes[0]!.new_ref!;
    expect(newRef).not.toBe(ref);
    expect(await agent.call("reply", { ref: newRef, body: "once only" })).toEqual({
      status: "duplicate",
      original_status: "sent",
      idempotency_key: first.idempotency_key,
    });
    expect(since(m)).toHaveLength(1);
  });

  it("a key reused with a different message is CONFLICT and nothing is sent", async () => {
    const p = {
      account: "work",
      to: ["bob@example.com"],
      subject: "keyed",
      body: "first",
      idempotency_key: "K",
    };
    const m = mark();
    expect((await agent.call("send", p)).status).toBe("sent");
    await expect(agent.call("send", { ...p, body: "a different message" })).rejects.toMatchObject({
      reason: "CONFLICT",
    });
    expect(since(m)).toHaveLength(1);
  });
});

describe("a hold is judged again", () => {
  const widen = async () => {
    allow = [...allow, "@partner.org"];
    env.writeConfig({ work: { sendPolicy: policy(allow), aliases: [ALIAS] } });
    await env.confirmPolicy();
  };
  let heldDraft: string;
  let ownerDraft: string;
  let heldSend: { ref: string; key: string };
  const sendP = { account: "work", to: ["ann@partner.org"], subject: "held send", body: "later" };
  const takenP = { account: "work", to: ["ben@partner.org"], subject: "owner takes it", body: "mine" };
  let takenCopy: string;

  it("before the owner widens: held, and held again without a second copy in Drafts", async () => {
    heldDraft = await append("Drafts", [
      "From: alice@example.com",
      "To: x@partner.org",
      "Subject: d1",
      "",
      "one",
    ]);
    ownerDraft = await append("Drafts", [
      "From: alice@example.com",
      "To: y@partner.org",
      "Subject: d2",
      "",
      "two",
    ]);
    const m = mark();
    expect(await agent.call("draft.send", { ref: heldDraft })).toMatchObject({ status: "held" });
    expect(await agent.call("draft.send", { ref: ownerDraft })).toMatchObject({ status: "held" });
    const drafts = await env.dv.messageCount("alice", "Drafts");
    const held = await agent.call("send", sendP);
    expect(held).toMatchObject({ status: "held", blocked: ["ann@partner.org"] });
    expect(await agent.call("send", sendP)).toMatchObject({ status: "held", draft_ref: held.draft_ref });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts + 1);
    heldSend = { ref: held.draft_ref!, key: held.idempotency_key! };
    takenCopy = (await agent.call("send", takenP)).draft_ref!;
    expect(since(m)).toEqual([]);
  });

  it("after the owner widens and confirms: the agent's retries send exactly once, the held copy leaves Drafts", async () => {
    await widen();
    const m = mark();
    const drafts = await env.dv.messageCount("alice", "Drafts");
    expect(await agent.call("draft.send", { ref: heldDraft })).toMatchObject({ status: "sent" });
    const sent = await agent.call("send", sendP);
    expect(sent).toMatchObject({ status: "sent", idempotency_key: heldSend.key });
    expect(await agent.call("send", sendP)).toMatchObject({ status: "duplicate" });
    expect(since(m).map((t) => t.rcpts)).toEqual([["x@partner.org"], ["ann@partner.org"]]);
    // The sent draft and the held copy of the send are both gone: the owner cannot send either again.
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts - 2);
  });

  it("the owner's own draft send is judged now, never answered with the agent's old hold", async () => {
    const m = mark();
    expect(await env.client.call("draft.send", { ref: ownerDraft })).toMatchObject({ status: "sent" });
    expect(since(m).map((t) => t.rcpts)).toEqual([["y@partner.org"]]);
  });

  it("a held copy the owner already sent is not sent again by the agent's retry", async () => {
    const m = mark();
    expect(await env.client.call("draft.send", { ref: takenCopy })).toMatchObject({ status: "sent" });
    const retry = await agent.call("send", takenP);
    expect(retry).toMatchObject({ status: "held", hint: expect.stringContaining("no longer in Drafts") });
    expect(since(m).map((t) => t.rcpts)).toEqual([["ben@partner.org"]]);
  });
});
