/**
 * An SMTP server that refuses one recipient at RCPT TO and accepts the others: the message goes to
 * the accepted ones, so the result is `sent` (a retry must not send it to them again), naming each
 * refused recipient with the server's reply in `refused_recipients`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

let env: SendEnv;

beforeAll(async () => {
  env = await startSendEnv({}, (address) => address === "nobody@example.com");
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("a partial RCPT refusal", () => {
  it("is sent to the accepted recipients and names the refused one with the server's reply", async () => {
    const p = {
      account: "work",
      to: ["bob@example.com", "nobody@example.com"],
      subject: "partly refused",
      body: "hi",
      idempotency_key: "partial-1",
    };
    const res = await env.client.call("send", p);
    expect(res.status).toBe("sent");
    expect(res.refused_recipients).toHaveLength(1);
    expect(res.refused_recipients?.[0]).toMatch(/^nobody@example\.com \(550 .*no such mailbox here\)$/);
    expect(env.relay.received).toHaveLength(1);
    expect(env.relay.received[0]?.to).toEqual(["bob@example.com"]);
    const row = (await env.client.readAudit({ action: "send" })).rows[0];
    expect(row).toMatchObject({
      decision: "allowed",
      summary: "sent to 1 recipient(s); the SMTP server refused 1",
    });

    // A retry under the same key sends nothing: bob already has it.
    expect(await env.client.call("send", p)).toMatchObject({ status: "duplicate", original_status: "sent" });
    expect(env.relay.received).toHaveLength(1);
  });

  it("is an error when every recipient is refused, and nothing is recorded as sent", async () => {
    const p = {
      account: "work",
      to: ["nobody@example.com"],
      subject: "all refused",
      idempotency_key: "partial-2",
    };
    // The server's reply is outside text: the error's detail, never its message.
    await expect(env.client.call("send", p)).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: "the SMTP server of account work did not take the message; its reply is in detail",
      detail: expect.stringMatching(/^550 .*no such mailbox here/),
    });
    expect(env.relay.received).toHaveLength(1);
  });

  it("says nothing of refusals when every recipient is accepted", async () => {
    const res = await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "all fine",
    });
    expect(res.status).toBe("sent");
    expect(res).not.toHaveProperty("refused_recipients");
  });
});
