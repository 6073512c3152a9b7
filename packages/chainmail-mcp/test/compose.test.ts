/**
 * The compose tools through MCP against the daemon, Dovecot and a real SMTP server relaying into it
 * over LMTP: results in the compose shape with server text untrusted, duplicates, the draft cycle,
 * and refusals as error results with their reason.
 */
import { DaemonClient } from "@mcpforge/chainmail";
import { type SendEnv, startSendEnv } from "@mcpforge/chainmail/testing";
import { connectInMemory, type Session, session } from "@mcpforge/toolkit/testing";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChainmailMcpServer } from "../src/index.js";

let env: SendEnv;
let daemonClient: DaemonClient;
let tools: Session;
let close: () => Promise<void>;

beforeAll(async () => {
  env = await startSendEnv();
  daemonClient = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
  const kit = createChainmailMcpServer({ client: daemonClient, log: () => undefined });
  const conn = await connectInMemory(kit, { scopes: [] });
  tools = session(conn.client);
  close = () => conn.close();
}, 60_000);

afterAll(async () => {
  await close?.();
  daemonClient?.close();
  await env?.stop();
});

interface Compose {
  status: string;
  message_id?: { untrusted: string };
  sent_ref?: string;
  idempotency_key?: string;
  draft_ref?: string;
  original_status?: string;
}

describe("compose tools", () => {
  it("send_email sends, wraps the Message-ID as untrusted, and a repeat is a duplicate", async () => {
    const args = { account: "work", to: ["Bob <bob@example.com>"], subject: "Über MCP", body: "Hi *Bob*" };
    const r = await tools.ok<Compose>("send_email", args);
    // Exactly the seed's fields of a sent result, the Message-ID untrusted.
    expect(r).toEqual({
      status: "sent",
      message_id: { untrusted: expect.stringMatching(/^<.+>$/) },
      sent_ref: expect.stringMatching(/^m1\./),
      idempotency_key: expect.stringMatching(/^d1\./),
    });
    const again = await tools.ok<Compose>("send_email", args);
    expect(again).toEqual({
      status: "duplicate",
      original_status: "sent",
      idempotency_key: r.idempotency_key,
    });
    expect(env.relay.received).toHaveLength(1);
    const m = await simpleParser(env.relay.received[0]!.raw);
    expect(m.subject).toBe("Über MCP");
    expect(m.html).toContain("<em>Bob</em>");
  });

  it('derives the key when idempotency_key is "" (the seed: "derived from the input when empty"); a malformed key is refused', async () => {
    const args = { account: "work", to: ["bob@example.com"], subject: "empty key", body: "b" };
    const n = env.relay.received.length;
    const r = await tools.ok<Compose>("send_email", { ...args, idempotency_key: "" });
    expect(r.status).toBe("sent");
    expect(r.idempotency_key).toMatch(/^d1\.[0-9a-f]{64}$/);
    // The same derived key as without the argument: a replay.
    expect(await tools.ok<Compose>("send_email", args)).toMatchObject({
      status: "duplicate",
      idempotency_key: r.idempotency_key,
    });
    for (const bad of ["has space", "ä", "k".repeat(129)])
      expect((await tools.fails("send_email", { ...args, idempotency_key: bad })).reason, bad).toBe(
        "INVALID_ARGUMENT",
      );
    expect(env.relay.received.length).toBe(n + 1);
  });

  it("create_draft, update_draft, send_draft and delete_draft work on Drafts", async () => {
    const d = await tools.ok<Compose>("create_draft", {
      account: "work",
      to: ["bob@example.com"],
      subject: "d",
    });
    expect(d).toEqual({ status: "draft", draft_ref: expect.stringMatching(/^m1\./) });
    const u = await tools.ok<Compose>("update_draft", { ref: d.draft_ref, body: "v2" });
    expect(u.status).toBe("draft");
    const s = await tools.ok<Compose>("send_draft", { ref: u.draft_ref });
    expect(s.status).toBe("sent");
    expect(env.relay.received).toHaveLength(3);
    const gone = await tools.fails("send_draft", { ref: u.draft_ref });
    expect(gone.reason).toBe("NOT_FOUND");
    const d2 = await tools.ok<Compose>("create_draft", { account: "work", subject: "bin me" });
    expect(await tools.ok("delete_draft", { ref: d2.draft_ref })).toEqual({
      ref: d2.draft_ref,
      deleted: true,
    });
  });

  it("refuses a forbidden header with INVALID_ARGUMENT and sends nothing", async () => {
    const e = await tools.fails("send_email", {
      account: "work",
      to: ["bob@example.com"],
      subject: "x",
      headers: { Subject: "forged" },
    });
    expect(e.reason).toBe("INVALID_ARGUMENT");
    expect(env.relay.received).toHaveLength(3);
  });

  it("returns a hold as a result (not an error) with exactly the held fields, blocked untrusted; a replay is held again", async () => {
    // A narrowing applies at once (this test runs last: widening back would wait for the owner).
    env.writeConfig({ work: { sendPolicy: 'allowed_recipients = ["bob@example.com"]\n' } });
    const args = { account: "work", to: ["Mallory <mallory@evil.test>"], subject: "the key", body: "x" };
    const raw = await tools.raw("send_email", args);
    expect(raw.isError).toBeFalsy();
    const held = await tools.ok<Compose>("send_email", args);
    expect(held).toEqual({
      status: "held",
      draft_ref: expect.stringMatching(/^m1\./),
      blocked: [{ untrusted: "mallory@evil.test" }],
      too_many_recipients: false,
      hint: expect.stringContaining("Do not retry"),
      message_id: { untrusted: expect.stringMatching(/^</) },
      idempotency_key: expect.stringMatching(/^d1\./),
    });
    expect(env.relay.received).toHaveLength(3);
    const rows = (await env.client.readAudit({ action: "send" })).rows.filter((r) => r.decision === "held");
    expect(rows.map((r) => r.client)).toEqual(["mcp", "mcp"]);
  });
});
