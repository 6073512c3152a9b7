/**
 * Sending end to end: the daemon over a real SMTP server that relays into Dovecot over LMTP. Each
 * message is read back from the recipient's INBOX and the sender's Sent over IMAP and parsed part
 * by part.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeRef } from "../src/refs.js";
import { configToml, type SendEnv, startSendEnv, TINY_PNG } from "../src/testing/index.js";

let env: SendEnv;
let files: string;

async function inbox(user: string, folder = "INBOX") {
  const c = await env.dv.connect(user);
  try {
    await c.mailboxOpen(folder);
    const out: Array<{ uid: number; raw: Buffer }> = [];
    for await (const m of c.fetch("1:*", { uid: true, source: true }))
      if (m.source) out.push({ uid: m.uid, raw: m.source });
    return out;
  } catch {
    return [];
  } finally {
    await c.logout().catch(() => undefined);
  }
}

async function waitFor<T>(fn: () => Promise<T[]>, n: number): Promise<T[]> {
  for (let i = 0; i < 100; i++) {
    const got = await fn();
    if (got.length >= n) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
  return fn();
}

beforeAll(async () => {
  env = await startSendEnv();
  files = fs.mkdtempSync(path.join(os.tmpdir(), "cm-files-"));
  fs.writeFileSync(path.join(files, "report.pdf"), Buffer.from("%PDF-1.4 fake report"));
  fs.writeFileSync(path.join(files, "chart.png"), TINY_PNG);
  fs.writeFileSync(path.join(files, "naïve résumé.txt"), "ünïcödé file\n");
}, 60_000);

afterAll(async () => {
  await env?.stop();
  fs.rmSync(files, { recursive: true, force: true });
});

describe("send_email", () => {
  it("sends Markdown as an HTML and a text part with the signature, attachments and an inline image, and files the same bytes in Sent", async () => {
    const res = await env.client.call("send", {
      account: "work",
      to: ["Bob Böhm <bob@example.com>"],
      cc: [],
      subject: "Quarterly réport ✓",
      body: "Hello **Bob**,\n\n![chart](chart.png)\n\nSee the report.",
      attachments: [path.join(files, "report.pdf"), path.join(files, "naïve résumé.txt")],
      inline: [{ name: "chart.png", path: path.join(files, "chart.png") }],
      headers: { "Reply-To": "replies@example.com", "X-Tracking": "t-1" },
    });
    // Exactly the seed's fields of a sent result (sent_copy_error only when the Sent copy failed).
    expect(res).toEqual({
      status: "sent",
      message_id: expect.stringMatching(/^<.+@example\.com>$/),
      idempotency_key: expect.stringMatching(/^d1\.[0-9a-f]{64}$/),
      sent_ref: expect.stringMatching(/^m1\./),
    });
    const [got] = await waitFor(() => inbox("bob"), 1);
    const m = await simpleParser(got!.raw, { skipImageLinks: true });
    expect(m.subject).toBe("Quarterly réport ✓");
    expect(m.messageId).toBe(res.message_id);
    expect(m.to && !Array.isArray(m.to) ? m.to.value[0] : undefined).toEqual({
      name: "Bob Böhm",
      address: "bob@example.com",
    });
    expect(m.replyTo?.value[0]?.address).toBe("replies@example.com");
    expect(m.headers.get("x-tracking")).toBe("t-1");
    expect(m.text).toContain("Hello **Bob**");
    expect(m.text).toContain("-- \nalice");
    expect(m.html).toContain("<strong>Bob</strong>");
    expect(m.html).toContain('class="signature"');
    const img = m.attachments.find((a) => a.contentType === "image/png");
    expect(img?.related).toBe(true);
    expect(m.html).toContain(`cid:${img?.cid}`);
    expect(m.attachments.map((a) => a.filename)).toEqual(
      expect.arrayContaining(["report.pdf", "naïve résumé.txt"]),
    );
    expect(m.attachments.find((a) => a.filename === "report.pdf")?.content.toString()).toBe(
      "%PDF-1.4 fake report",
    );
    const sent = await inbox("alice", "Sent");
    expect(sent).toHaveLength(1);
    // The relay's copy went through LMTP (which adds trace headers); the bytes from SMTP are the Sent copy.
    expect(sent[0]!.raw.equals(env.relay.received[0]!.raw)).toBe(true);
    expect(
      encodeRef({ account: "work", folder: "Sent", uidValidity: 0, uid: sent[0]!.uid }).length,
    ).toBeGreaterThan(0);
  });

  it("writes an internationalized domain as punycode in the envelope and the headers", async () => {
    const res = await env.client.call("send", {
      account: "work",
      to: ["Bob Bücher <bob@bücher.example>"],
      subject: "IDN",
      body: "b",
    });
    expect(res.status).toBe("sent");
    // What went over the wire (smtp-server itself decodes punycode for onRcptTo).
    expect(env.relay.commands.filter((c) => /^RCPT TO:/i.test(c)).at(-1)).toBe(
      "RCPT TO:<bob@xn--bcher-kva.example>",
    );
    const head = env.relay.received.at(-1)!.raw.toString("latin1").split("\r\n\r\n")[0]!;
    expect(head).toMatch(/^To: .*<bob@xn--bcher-kva\.example>$/m);
    expect(/[\u0080-\uffff]/.test(head)).toBe(false);
  });

  it("sends text and HTML bodies, and leaves the signature out with no_signature", async () => {
    const before = env.relay.received.length;
    await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "plain",
      body: "just *text*",
      body_format: "text",
      no_signature: true,
    });
    await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "html",
      body: "<p>Hi <b>there</b></p>",
      body_format: "html",
    });
    await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "html with text",
      body: "<p>Hi</p>",
      body_format: "html",
      html_text: "Hi (text part)",
    });
    const [plain, html, both] = await Promise.all(
      env.relay.received.slice(before).map((r) => simpleParser(r.raw)),
    );
    expect(plain?.html).toBe(false);
    expect(plain?.text?.trim()).toBe("just *text*");
    expect(html?.html).toContain("<b>there</b>");
    expect(html?.text).toContain("Hi there");
    expect(html?.text).toContain("alice");
    expect(both?.text).toContain("Hi (text part)");
  });

  it("reports a failed Sent copy as sent_copy_error: the send succeeded, and a retry is a duplicate", async () => {
    const before = env.relay.received.length;
    // A sent_folder the server does not have: the copy fails after the SMTP server accepted.
    const toml = configToml(env.dv, { smtpPort: env.relay.port }).replace(
      'archive_folder = "Archive"',
      'archive_folder = "Archive"\nsent_folder = "NoSuchSent"',
    );
    fs.writeFileSync(env.home.configFile, toml);
    const t = new Date(Date.now() + 5000);
    fs.utimesSync(env.home.configFile, t, t);
    try {
      const p = { account: "work", to: ["bob@example.com"], subject: "no sent copy", body: "b" };
      const res = await env.client.call("send", p);
      expect(res).toEqual({
        status: "sent",
        message_id: expect.stringMatching(/^</),
        sent_ref: "",
        sent_copy_error: expect.stringContaining("NoSuchSent"),
        idempotency_key: expect.stringMatching(/^d1\./),
      });
      expect(env.relay.received.length).toBe(before + 1);
      expect(await env.client.call("send", p)).toMatchObject({ status: "duplicate" });
      expect(env.relay.received.length).toBe(before + 1);
      const row = (await env.client.readAudit({ action: "send" })).rows[1];
      expect(row).toMatchObject({
        decision: "allowed",
        summary: expect.stringContaining("Sent copy failed"),
      });
    } finally {
      env.writeConfig({});
    }
  });

  it("refuses headers other than Reply-To and X-, line breaks and case duplicates with INVALID_ARGUMENT, sending nothing", async () => {
    const before = env.relay.received.length;
    const base = { account: "work", to: ["bob@example.com"], subject: "h", body: "b" };
    for (const headers of <Array<Record<string, string>>>[
      { From: "evil@example.com" },
      { Subject: "forged" },
      { "Content-Type": "text/html" },
      { "X-A": "one\r\nBcc: evil@example.com" },
      { "X-A": "one\nBcc: evil@example.com" },
      { "Reply-To": "a@example.com\rBcc: evil@example.com" },
      { "X-Dup": "1", "x-dup": "2" },
      { "Reply-To": "a@example.com", "REPLY-TO": "b@example.com" },
    ]) {
      await expect(env.client.call("send", { ...base, headers })).rejects.toMatchObject({
        reason: "INVALID_ARGUMENT",
      });
    }
    expect(env.relay.received.length).toBe(before);
  });

  it("refuses attachments that are relative, symlinks, directories or inside the chainmail home", async () => {
    const link = path.join(files, "link.pdf");
    fs.symlinkSync(path.join(files, "report.pdf"), link);
    // A hard link to the account's password, made outside the home: its own path, the secret's inode.
    const hard = path.join(files, "notes.txt");
    fs.linkSync(path.join(env.home.secretsDir, "work.secret"), hard);
    const base = { account: "work", to: ["bob@example.com"], subject: "f", body: "b" };
    const cases: Array<[string, RegExp]> = [
      ["report.pdf", /absolute path/],
      [link, /symbolic link/],
      [files, /not a regular file/],
      [env.home.configFile, /chainmail home/],
      [path.join(env.home.secretsDir, "work.secret"), /chainmail home/],
      [hard, /chainmail home/],
    ];
    const before = env.relay.received.length;
    for (const [file, message] of cases) {
      await expect(env.client.call("send", { ...base, attachments: [file] }), file).rejects.toMatchObject({
        reason: "INVALID_ARGUMENT",
        message: expect.stringMatching(message),
      });
      await expect(
        env.client.call("send", { ...base, inline: [{ name: "x.png", path: file }] }),
        file,
      ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringMatching(message) });
    }
    expect(env.relay.received.length).toBe(before);
  });
});
