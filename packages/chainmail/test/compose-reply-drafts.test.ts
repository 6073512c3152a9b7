/**
 * reply, forward and the draft operations end to end (SMTP relaying into Dovecot over LMTP),
 * reading every message back over IMAP: threading headers, quoting, reply-all less the account's
 * own address, forwarded attachments, drafts judged by the folder's role, and idempotent sends.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ATTACHMENT_TOTAL } from "../src/limits.js";
import { encodeRef } from "../src/refs.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

let env: SendEnv;
let originalRef: string;

const last = async () => simpleParser(env.relay.received.at(-1)!.raw);

beforeAll(async () => {
  env = await startSendEnv();
  const raw = [
    "From: Carol Über <carol@example.org>",
    "To: alice@example.com, dave@example.org",
    "Cc: erin@example.org, Alice <ALICE@example.com>",
    "Subject: Budget plan",
    "Message-ID: <orig-1@example.org>",
    "References: <root-0@example.org>",
    "Date: Mon, 30 Nov 2026 10:00:00 +0000",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="b1"',
    "",
    "--b1",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Here is the plan.",
    "Second line.",
    "--b1",
    'Content-Type: application/pdf; name="plan.pdf"',
    'Content-Disposition: attachment; filename="plan.pdf"',
    "Content-Transfer-Encoding: base64",
    "",
    Buffer.from("%PDF plan").toString("base64"),
    "--b1--",
    "",
  ].join("\r\n");
  const r = await env.dv.appendMessage("alice", "INBOX", raw);
  originalRef = encodeRef({ account: "work", folder: "INBOX", uidValidity: r.uidValidity, uid: r.uid });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("reply", () => {
  it("replies to the sender with In-Reply-To, References, Re: and the original quoted", async () => {
    const res = await env.client.call("reply", { ref: originalRef, body: "Looks good." });
    expect(res.status).toBe("sent");
    const m = await last();
    expect(env.relay.received.at(-1)!.to).toEqual(["carol@example.org"]);
    expect(m.subject).toBe("Re: Budget plan");
    expect(m.inReplyTo).toBe("<orig-1@example.org>");
    expect(m.references).toEqual(["<root-0@example.org>", "<orig-1@example.org>"]);
    expect(m.text).toContain("Looks good.");
    expect(m.text).toMatch(/wrote:\n> Here is the plan\.\n> Second line\./);
    expect(m.html).toContain("<blockquote");
  });

  it("threads a reply to a message that has In-Reply-To but no References, and does not double Re:", async () => {
    const r = await env.dv.appendMessage(
      "alice",
      "INBOX",
      [
        "From: Bob <bob@example.com>",
        "To: alice@example.com",
        "Subject: RE: Budget plan",
        "Message-ID: <child-2@example.org>",
        "In-Reply-To: <orig-1@example.org>",
        "",
        "A reply from a client that sets In-Reply-To only.",
        "",
      ].join("\r\n"),
    );
    const ref = encodeRef({ account: "work", folder: "INBOX", uidValidity: r.uidValidity, uid: r.uid });
    await env.client.call("reply", { ref, body: "Noted." });
    const m = await last();
    expect(m.subject).toBe("RE: Budget plan");
    expect(m.inReplyTo).toBe("<child-2@example.org>");
    expect(m.references).toEqual(["<orig-1@example.org>", "<child-2@example.org>"]);
  });

  it("with all adds the original To and Cc less the account's own address, in any case", async () => {
    await env.client.call("reply", {
      ref: originalRef,
      all: true,
      body: "All of you.",
      idempotency_key: "reply-all-1",
    });
    const envelope = env.relay.received.at(-1)!.to;
    expect(envelope.sort()).toEqual(["carol@example.org", "dave@example.org", "erin@example.org"]);
  });

  it("with draft saves the reply to Drafts instead of sending it", async () => {
    const before = env.relay.received.length;
    const res = await env.client.call("reply", { ref: originalRef, draft: true, body: "later" });
    expect(res).toEqual({ status: "draft", draft_ref: expect.stringMatching(/^m1\./) });
    expect(env.relay.received.length).toBe(before);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(1);
  });
});

describe("forward", () => {
  it("carries the original's attachments, and leaves them out with no_attachments", async () => {
    await env.client.call("forward", { ref: originalRef, to: ["bob@example.com"], body: "FYI" });
    let m = await last();
    expect(m.subject).toBe("Fwd: Budget plan");
    expect(m.text).toContain("---------- Forwarded message ---------");
    expect(m.text).toContain("Here is the plan.");
    expect(m.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([["plan.pdf", "%PDF plan"]]);
    await env.client.call("forward", {
      ref: originalRef,
      to: ["bob@example.com"],
      body: "FYI 2",
      no_attachments: true,
    });
    m = await last();
    expect(m.attachments).toEqual([]);
    expect(m.subject).toBe("Fwd: Budget plan");
    expect(m.references).toEqual(["<root-0@example.org>", "<orig-1@example.org>"]);
  });

  it("with draft saves the forward, its attachments included, to Drafts instead of sending it", async () => {
    const before = env.relay.received.length;
    const drafts = await env.dv.messageCount("alice", "Drafts");
    const res = await env.client.call("forward", {
      ref: originalRef,
      to: ["bob@example.com"],
      draft: true,
      body: "later",
    });
    expect(res).toEqual({ status: "draft", draft_ref: expect.stringMatching(/^m1\./) });
    expect(env.relay.received.length).toBe(before);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts + 1);
    const c = await env.dv.connect("alice");
    try {
      await c.mailboxOpen("Drafts");
      const msg = await c.fetchOne("*", { source: true });
      const m = await simpleParser((msg as { source: Buffer }).source);
      expect(m.subject).toBe("Fwd: Budget plan");
      expect(m.attachments.map((a) => a.filename)).toEqual(["plan.pdf"]);
    } finally {
      await c.logout().catch(() => undefined);
    }
  });

  it("counts the original's attachments, new files and inline images together against the 25 MiB cap", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-fwd-"));
    try {
      // Exactly the cap on its own (accepted alone), so the carried plan.pdf takes the message over it.
      const img = path.join(dir, "big.png");
      fs.writeFileSync(img, "");
      fs.truncateSync(img, MAX_ATTACHMENT_TOTAL);
      const before = env.relay.received.length;
      await expect(
        env.client.call("forward", {
          ref: originalRef,
          to: ["bob@example.com"],
          body: "![big](big.png)",
          inline: [{ name: "big.png", path: img }],
        }),
      ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringMatching(/more than/) });
      expect(env.relay.received.length).toBe(before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("drafts", () => {
  it("creates, updates (keeping what the call leaves out), sends and deletes drafts", async () => {
    const start = await env.dv.messageCount("alice", "Drafts");
    const created = await env.client.call("draft.create", {
      account: "work",
      to: ["bob@example.com"],
      bcc: ["hidden@example.org"],
      subject: "Draft one",
      body: "first",
    });
    expect(created.status).toBe("draft");
    const updated = await env.client.call("draft.update", {
      ref: created.draft_ref!,
      body: "second version",
    });
    expect(updated.status).toBe("draft");
    expect(updated.draft_ref).not.toBe(created.draft_ref);
    // allow_expunge is off: the old version went to Trash.
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(start + 1);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(1);
    const before = env.relay.received.length;
    const sent = await env.client.call("draft.send", { ref: updated.draft_ref! });
    expect(sent.status).toBe("sent");
    expect(env.relay.received.length).toBe(before + 1);
    const relayed = env.relay.received.at(-1)!;
    expect(relayed.to.sort()).toEqual(["bob@example.com", "hidden@example.org"]);
    const m = await simpleParser(relayed.raw);
    expect(m.subject).toBe("Draft one");
    expect(m.text).toContain("second version");
    expect(m.bcc).toBeUndefined();
    expect(relayed.raw.toString()).not.toMatch(/^bcc:/im);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(start);
    const again = await env.client.call("draft.create", { account: "work", subject: "gone soon" });
    expect(await env.client.call("draft.delete", { ref: again.draft_ref! })).toEqual({
      ref: again.draft_ref,
      deleted: true,
    });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(start);
  });

  it("refuses a ref outside the Drafts-role folder for the draft operations, even in a folder named Drafts", async () => {
    // Judged by the folder's role: a folder that is only called Drafts is not the account's Drafts.
    await env.client.call("folders.create", { account: "work", name: "Archive/Drafts" });
    const r = await env.dv.appendMessage(
      "alice",
      "Archive/Drafts",
      "From: alice@example.com\r\nTo: bob@example.com\r\nSubject: not a draft\r\n\r\nx\r\n",
      ["\\Draft"],
    );
    const named = encodeRef({
      account: "work",
      folder: "Archive/Drafts",
      uidValidity: r.uidValidity,
      uid: r.uid,
    });
    const before = env.relay.received.length;
    for (const ref of [originalRef, named])
      for (const method of ["draft.send", "draft.delete", "draft.update"] as const) {
        await expect(env.client.call(method, { ref }), `${method} ${ref}`).rejects.toMatchObject({
          reason: "INVALID_ARGUMENT",
          message: expect.stringMatching(/Drafts/),
        });
      }
    expect(env.relay.received.length).toBe(before);
    expect(await env.dv.messageCount("alice", "Archive/Drafts")).toBe(1);
  });
});

describe("idempotency", () => {
  it("replays a repeat with the same key (given or derived) as duplicate and sends nothing; a key reused for another message is CONFLICT", async () => {
    const p = { account: "work", to: ["bob@example.com"], subject: "once", body: "only once" };
    const first = await env.client.call("send", p);
    const before = env.relay.received.length;
    const again = await env.client.call("send", p);
    expect(again).toEqual({
      status: "duplicate",
      original_status: "sent",
      idempotency_key: first.idempotency_key,
    });
    const keyed = await env.client.call("send", { ...p, body: "other", idempotency_key: "k-1" });
    expect(keyed.status).toBe("sent");
    expect(await env.client.call("send", { ...p, body: "other", idempotency_key: "k-1" })).toMatchObject({
      status: "duplicate",
    });
    await expect(
      env.client.call("send", { ...p, body: "changed", idempotency_key: "k-1" }),
    ).rejects.toMatchObject({ reason: "CONFLICT" });
    expect(env.relay.received.length).toBe(before + 1);
  });

  it("sends two identical concurrent calls once", async () => {
    const p = { account: "work", to: ["bob@example.com"], subject: "concurrent", body: "same" };
    const before = env.relay.received.length;
    const results = await Promise.all([env.client.call("send", p), env.client.call("send", p)]);
    expect(results.map((r) => r.status).sort()).toEqual(["duplicate", "sent"]);
    expect(env.relay.received.length).toBe(before + 1);
  });
});
