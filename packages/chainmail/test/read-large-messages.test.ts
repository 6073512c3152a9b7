/**
 * Reading a large message from the server takes its header and its text part, not the whole
 * message: the Message is the one the whole-message read gives (checked shape by shape, the large
 * path forced by a low bound), and the bytes that cross from Dovecot for get_message of a message
 * with a 6 MiB attachment (its text plain, or HTML) are counted at a proxy between the daemon and
 * Dovecot.
 */
import { randomBytes } from "node:crypto";
import { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchMessages } from "../src/imap/messages.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { startTcpTap } from "./support/tcp-tap.js";

let env: MailEnv;

const b64 = (b: Buffer) => b.toString("base64").replace(/.{76}/g, "$&\r\n");
const head = (subject: string, type: string) =>
  [
    "From: Ann Example <ann@example.com>",
    "To: Alice <alice@example.com>, bob@example.com",
    "Cc: carol@example.com",
    `Subject: ${subject}`,
    `Message-ID: <${subject.replace(/\W+/g, "-")}@example.com>`,
    "In-Reply-To: <earlier@example.com>",
    "References: <first@example.com> <earlier@example.com>",
    "Date: Mon, 07 Dec 2026 10:00:00 +0000",
    "MIME-Version: 1.0",
    `Content-Type: ${type}`,
    "",
  ].join("\r\n");
const attachment = (name: string, bytes: Buffer) =>
  [
    "Content-Type: application/octet-stream",
    `Content-Disposition: attachment; filename="${name}"`,
    "Content-Transfer-Encoding: base64",
    "",
    b64(bytes),
  ].join("\r\n");
const TEXT =
  "Hello Alice,\r\n\r\nthe numbers are attached. Grüße!\r\n\r\n> an old quote\r\n\r\n-- \r\nAnn\r\n";

/** Message shapes a large message comes in; the body text of each is read from one part. */
const SHAPES: Record<string, string> = {
  "text and an attachment": [
    head("text and attachment", 'multipart/mixed; boundary="m"'),
    "--m",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    TEXT.replace("ü", "=C3=BC").replace("ß", "=C3=9F"),
    "--m",
    attachment("data.bin", randomBytes(300_000)),
    "--m--",
    "",
  ].join("\r\n"),
  "alternatives and an attachment": [
    head("alternatives and attachment", 'multipart/mixed; boundary="m"'),
    "--m",
    'Content-Type: multipart/alternative; boundary="a"',
    "",
    "--a",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    b64(Buffer.from(TEXT)),
    "--a",
    "Content-Type: text/html; charset=utf-8",
    "",
    "<p>Hello Alice,</p><p>the numbers are attached.</p>",
    "--a--",
    "--m",
    attachment("data.bin", randomBytes(300_000)),
    "--m--",
    "",
  ].join("\r\n"),
  "HTML only and an attachment": [
    head("html and attachment", 'multipart/mixed; boundary="m"'),
    "--m",
    "Content-Type: text/html; charset=utf-8",
    "",
    "<p>Hello <b>Alice</b>,</p><p>see the attachment.</p>",
    "--m",
    attachment("data.bin", randomBytes(300_000)),
    "--m--",
    "",
  ].join("\r\n"),
  "quoted-printable HTML with links, a list and a table, and an attachment": [
    head("html qp and attachment", 'multipart/mixed; boundary="m"'),
    "--m",
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    "<html><head><style>p { color: red }</style></head><body>",
    '<p>Gr=C3=BC=C3=9Fe, see <a href=3D"https://example.com/report?id=3D7">the report</a>=',
    ' and <img src=3D"cid:logo" alt=3D"logo">.</p>',
    "<ul><li>one</li><li>two</li></ul>",
    "<table><tr><td>Q1</td><td>10</td></tr><tr><td>Q2</td><td>12</td></tr></table>",
    "</body></html>",
    "--m",
    attachment("data.bin", randomBytes(300_000)),
    "--m--",
    "",
  ].join("\r\n"),
  "an HTML body that is the whole message (read whole)": [
    head("html alone", "text/html; charset=utf-8"),
    "<p>Hello <b>Alice</b>, all of it is here.</p>".repeat(30_000),
  ].join("\r\n"),
  "a latin-1 text (read whole)": [
    head("latin1 and attachment", 'multipart/mixed; boundary="m"'),
    "--m",
    "Content-Type: text/plain; charset=iso-8859-1",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    "Gr=FC=DFe aus K=F6ln",
    "--m",
    attachment("data.bin", randomBytes(300_000)),
    "--m--",
    "",
  ].join("\r\n"),
  "one plain text part (read whole)": [
    head("plain only", "text/plain; charset=utf-8"),
    TEXT.repeat(5000),
  ].join("\r\n"),
};

beforeAll(async () => {
  env = await startMailEnv({});
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    Object.values(SHAPES).map((raw) => ({ raw })),
  );
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

async function imap(port = env.dv.port): Promise<ImapFlow> {
  const c = new ImapFlow({
    host: "127.0.0.1",
    port,
    secure: false,
    doSTARTTLS: false,
    auth: { user: "alice", pass: "alice-secret-pw" },
    logger: false,
  });
  await c.connect();
  return c;
}

describe("a large message read by its header and text part", () => {
  it("is the Message the whole read gives, for every shape, with and without full", async () => {
    const c = await imap();
    try {
      const box = await c.mailboxOpen("INBOX", { readOnly: true });
      const uids = (await c.search({ all: true }, { uid: true })) || [];
      expect(uids).toHaveLength(Object.keys(SHAPES).length);
      for (const full of [false, true]) {
        const read = (wholeReadBytes: number) =>
          fetchMessages(
            c,
            "work",
            "INBOX",
            Number(box.uidValidity),
            uids,
            { full, bodyLimit: 200, wholeReadBytes },
            false,
          );
        const whole = await read(64 * 1024 * 1024);
        const parts = await read(1);
        for (const [i, name] of Object.keys(SHAPES).entries()) {
          const uid = uids[i] as number;
          expect(parts.get(uid), `${name}, full ${full}`).toEqual(whole.get(uid));
        }
        // (the test is about something: the bodies are there)
        expect(whole.get(uids[0] as number)?.body).toContain("the numbers are attached. Grüße!");
        const html = whole.get(uids[3] as number);
        expect(html?.body).toContain("Grüße, see the report [https://example.com/report?id=7]");
        if (full) expect(html?.body).toMatch(/\* one\n \* two[\s\S]*Q2 +12/);
      }
    } finally {
      await c.logout();
    }
  });
});

it("get_message of a message with a 6 MiB attachment takes its header and text, not the attachment", async () => {
  const big = randomBytes(6 * 1024 * 1024);
  const bigOne = (subject: string, body: { text: string } | { html: string }) => ({
    raw: buildMessage({
      from: "Ann Example <ann@example.com>",
      to: ["alice@example.com"],
      subject,
      date: new Date("2026-12-07T10:00:00Z"),
      messageId: `<${subject.replace(/\W+/g, "-")}@example.com>`,
      ...body,
      attachments: [{ filename: "big.bin", contentType: "application/octet-stream", content: big }],
    }),
  });
  await env.dv.appendMessages("alice", "Archive", [
    bigOne("the big one", { text: "The file is attached." }),
    bigOne("the big page", {
      html: "<p>The <b>file</b> is attached:</p><table><tr><td>size</td><td>6 MiB</td></tr></table>",
    }),
  ]);
  const proxy = await startTcpTap(env.dv.port);
  try {
    env.writeConfig({ work: { port: proxy.port } });
    await env.confirmPolicy();
    for (const [subject, body] of [
      ["one", "The file is attached."],
      ["page", "The file is attached:\n\nsize 6 MiB"],
    ]) {
      const found = await env.client.search({
        query: `subject:"big ${subject}"`,
        accounts: ["work"],
        source: "server",
      });
      const ref = found.rows[0]?.ref as string;
      const before = proxy.fromServer();
      const [m] = (await env.client.getMessages({ refs: [ref] })).messages;
      expect(m?.body).toBe(body);
      expect(m?.attachments.map((a) => a.filename)).toEqual(["big.bin"]);
      // The 8 MiB of the attachment's base64 never crossed: its first MiB did, with the text part
      expect(proxy.fromServer() - before).toBeLessThan(2 * 1024 * 1024);
    }
  } finally {
    env.writeConfig({});
    await env.confirmPolicy();
    await proxy.stop();
  }
});

it("a message past 32 MiB of a shape read whole is read by its first text part; a large HTML body by its part", async () => {
  const attachmentB64 = b64(randomBytes(33 * 1024 * 1024));
  const twoTexts = [
    head("two texts and a huge file", 'multipart/mixed; boundary="m"'),
    "--m",
    "Content-Type: text/plain; charset=iso-8859-1",
    "",
    "First part, Gr\xfc\xdfe.",
    "--m",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Second part.",
    "--m",
    "Content-Type: application/octet-stream",
    'Content-Disposition: attachment; filename="huge.bin"',
    "Content-Transfer-Encoding: base64",
    "",
    attachmentB64,
    "--m--",
    "",
  ].join("\r\n");
  const page = `<p>${"A long page of words. ".repeat(600_000)}</p>`; // 13 MB of HTML, the whole message
  const htmlOnly = [head("a huge page", "text/html; charset=utf-8"), page, ""].join("\r\n");
  await env.dv.appendMessages("alice", "Archive", [
    { raw: Buffer.from(twoTexts, "latin1") },
    { raw: htmlOnly },
  ]);
  const proxy = await startTcpTap(env.dv.port);
  try {
    env.writeConfig({ work: { port: proxy.port } });
    await env.confirmPolicy();
    const refOf = async (subject: string) =>
      (await env.client.search({ query: `subject:"${subject}"`, accounts: ["work"], source: "server" }))
        .rows[0]?.ref as string;
    const [texts, huge] = [await refOf("two texts"), await refOf("a huge page")];
    let before = proxy.fromServer();
    const [m] = (await env.client.getMessages({ refs: [texts], full: true })).messages;
    // The first text part, decoded from Latin-1; cut, as the second is not shown
    expect(m?.body).toBe("First part, Grüße.");
    expect(m?.body_truncated).toBe(true);
    expect(m?.attachments.map((a) => a.filename)).toEqual(["huge.bin"]);
    // 45 MB of base64 stayed on the server: the first MiB and the text part crossed
    expect(proxy.fromServer() - before).toBeLessThan(2 * 1024 * 1024);
    before = proxy.fromServer();
    const [p] = (await env.client.getMessages({ refs: [huge], full: true })).messages;
    expect(p?.body.startsWith("A long page of words. A long page")).toBe(true);
    expect(p?.body_truncated).toBe(true);
    // Its first 8 MiB (and the first MiB of the message), not its 13 MB
    expect(proxy.fromServer() - before).toBeLessThan(10 * 1024 * 1024);
  } finally {
    env.writeConfig({});
    await env.confirmPolicy();
    await proxy.stop();
  }
}, 120_000);
