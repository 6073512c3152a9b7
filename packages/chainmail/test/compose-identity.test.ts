/**
 * The sender's identity and the marks on the original (issue 33 point 6): every From carries the
 * account's display_name, as the SMTP server received it; a reply sets \Answered on the original
 * and a forward sets $Forwarded, as the owner's other mail clients show them; a reply saved as a
 * draft, or held, marks nothing.
 */
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeRef, encodeRef } from "../src/refs.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

let env: SendEnv;

async function flagsOf(uid: number): Promise<string[]> {
  const c = await env.dv.connect("alice");
  try {
    await c.mailboxOpen("INBOX");
    const m = await c.fetchOne(String(uid), { flags: true }, { uid: true });
    return m ? [...(m.flags ?? [])].sort() : [];
  } finally {
    await c.logout().catch(() => undefined);
  }
}

async function original(subject: string): Promise<string> {
  const raw = Buffer.from(
    `From: Carol <carol@example.com>\r\nTo: alice@example.com\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, "")}@example.com>\r\nDate: Mon, 1 Jun 2026 10:00:00 +0000\r\n\r\nHello Alice\r\n`,
  );
  const [m] = await env.dv.appendMessages("alice", "INBOX", [{ raw }]);
  return encodeRef({ account: "work", folder: "INBOX", uidValidity: m!.uidValidity, uid: m!.uid });
}

const uidOf = (ref: string) => decodeRef(ref).uid;

beforeAll(async () => {
  env = await startSendEnv({
    work: { displayName: "Alice Ämmerle, Ops", sendPolicy: 'allowed_recipients = ["@example.com"]' },
  });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("display_name", () => {
  it("is in the From of what the SMTP server received, quoted as RFC 5322 needs", async () => {
    const before = env.relay.received.length;
    const res = await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "From with a name",
      body: "hi",
    });
    expect(res.status).toBe("sent");
    const got = env.relay.received.slice(before).at(-1);
    expect(got).toBeDefined();
    const m = await simpleParser(got!.raw);
    expect(m.from?.value).toEqual([{ name: "Alice Ämmerle, Ops", address: "alice@example.com" }]);
    // the envelope is the bare address
    expect(got!.from).toBe("alice@example.com");
  });

  it("is refused in config.toml when it has a line break", async () => {
    const { loadConfig } = await import("../src/config.js");
    const fs = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-id-"));
    const file = path.join(dir, "config.toml");
    fs.writeFileSync(
      file,
      `[[accounts]]\nname = "x"\naddress = "x@example.com"\ndisplay_name = "A\\nBcc: evil@y.com"\n[accounts.imap]\nhost = "127.0.0.1"\n`,
    );
    expect(() => loadConfig(file)).toThrow(/display_name must be one line/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("marks on the original", () => {
  it("a sent reply sets \\Answered on the original", async () => {
    const ref = await original("Answer me");
    expect(await flagsOf(uidOf(ref))).not.toContain("\\Answered");
    const res = await env.client.call("reply", { ref, body: "Done." });
    expect(res.status).toBe("sent");
    expect(await flagsOf(uidOf(ref))).toContain("\\Answered");
  });

  it("a sent forward sets $Forwarded on the original", async () => {
    const ref = await original("Forward me");
    const res = await env.client.call("forward", { ref, to: ["bob@example.com"], body: "FYI" });
    expect(res.status).toBe("sent");
    expect(await flagsOf(uidOf(ref))).toContain("$Forwarded");
  });

  it("a reply saved as a draft or held by the policy marks nothing", async () => {
    const ref = await original("Not yet");
    expect((await env.client.call("reply", { ref, body: "later", draft: true })).status).toBe("draft");
    const held = await env.client.call("forward", { ref, to: ["evil@elsewhere.test"], body: "x" });
    expect(held.status).toBe("held");
    const flags = await flagsOf(uidOf(ref));
    expect(flags).not.toContain("\\Answered");
    expect(flags).not.toContain("$Forwarded");
  });
});
