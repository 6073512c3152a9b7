/**
 * The send policy end to end: a send to a recipient outside allowed_recipients, over
 * max_recipients or over max_attachment_bytes is held in Drafts (never reaching the SMTP server),
 * audited as held, and a replay is held again without a second draft.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

let env: SendEnv;
let big: string;

async function drafts(): Promise<number> {
  const c = await env.dv.connect("alice");
  try {
    const s = await c.status("Drafts", { messages: true });
    return s ? (s.messages ?? 0) : 0;
  } finally {
    await c.logout().catch(() => undefined);
  }
}

beforeAll(async () => {
  env = await startSendEnv({
    work: {
      sendPolicy:
        'allowed_recipients = ["bob@example.com", "@example.org"]\nmax_recipients = 2\nmax_attachment_bytes = 100\n',
    },
  });
  big = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cm-pol-")), "big.bin");
  fs.writeFileSync(big, Buffer.alloc(500, 1));
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("send policy holds", () => {
  it("sends to allowed recipients and holds a blocked one in Drafts, audited held; a replay is held again", async () => {
    const ok = await env.client.call("send", {
      account: "work",
      to: ["bob@example.com", "x@example.org"],
      subject: "fine",
    });
    expect(ok.status).toBe("sent");
    const p = { account: "work", to: ["Mallory <mallory@evil.test>"], subject: "key", body: "the key" };
    const held = await env.client.call("send", p);
    expect(held).toMatchObject({
      status: "held",
      draft_ref: expect.stringMatching(/^m1\./),
      blocked: ["mallory@evil.test"],
      too_many_recipients: false,
      hint: expect.stringContaining("Do not retry"),
      message_id: expect.stringMatching(/^</),
      idempotency_key: expect.stringMatching(/^d1\./),
    });
    expect(env.relay.received).toHaveLength(1);
    expect(await drafts()).toBe(1);
    expect(await env.client.call("send", p)).toEqual(held);
    expect(await drafts()).toBe(1);
    expect(env.relay.received).toHaveLength(1);
    const rows = (await env.client.readAudit({ action: "send" })).rows.filter((r) => r.decision === "held");
    expect(rows).toHaveLength(2);
  });

  it("holds too many recipients and too large attachments", async () => {
    const many = await env.client.call("send", {
      account: "work",
      to: ["bob@example.com", "a@example.org", "b@example.org"],
      subject: "many",
    });
    expect(many).toMatchObject({ status: "held", too_many_recipients: true, blocked: [] });
    const large = await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "large",
      attachments: [big],
    });
    expect(large).toMatchObject({
      status: "held",
      too_many_recipients: false,
      hint: expect.stringContaining("max_attachment_bytes"),
    });
    expect(env.relay.received).toHaveLength(1);
  });
});
