/**
 * A reply, or a forward without the original's attachments, to a message with a 6 MiB attachment
 * reads the original's header and its text part, not the attachment: the bytes Dovecot sends during
 * the call are counted at a tap between the daemon and Dovecot, and the message the SMTP server
 * receives quotes the text (plain, or HTML as text). A forward that carries the attachments reads
 * the original whole, and sends the attachment byte for byte; one whose original's attachments alone
 * pass the 25 MiB bound is refused from BODYSTRUCTURE's sizes, before the original is read, whose
 * lower bound never passes an attachment's real size.
 */
import { createHash, randomBytes } from "node:crypto";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, expect, it } from "vitest";
import { attachedBytesAtLeast } from "../src/imap/messages.js";
import { MAX_ATTACHMENT_TOTAL } from "../src/limits.js";
import { decodeRef, encodeRef } from "../src/refs.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";
import { type TcpTap, startTcpTap } from "./support/tcp-tap.js";

let env: SendEnv;
let tap: TcpTap;
const refs: Record<string, string> = {};
/** A message from Carol with `content` as its one attachment (base64). */
const withAttachment = (subject: string, body: { text: string } | { html: string }, content: Buffer) =>
  buildMessage({
    from: "Carol <carol@example.org>",
    to: ["alice@example.com"],
    subject,
    date: new Date("2026-12-07T10:00:00Z"),
    messageId: `<${subject.replace(/\W+/g, "-").toLowerCase()}@example.org>`,
    ...body,
    attachments: [{ filename: "big.bin", contentType: "application/octet-stream", content }],
  });
const big = randomBytes(6 * 1024 * 1024);
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

beforeAll(async () => {
  env = await startSendEnv();
  const shapes = {
    text: { text: "The file is attached.\nSecond line." },
    html: { html: "<p>The <b>file</b> is attached:</p><table><tr><td>size</td><td>6 MiB</td></tr></table>" },
  };
  for (const [name, body] of Object.entries(shapes)) {
    const r = await env.dv.appendMessage("alice", "INBOX", withAttachment(`Big ${name}`, body, big));
    refs[name] = encodeRef({ account: "work", folder: "INBOX", uidValidity: r.uidValidity, uid: r.uid });
  }
  tap = await startTcpTap(env.dv.port);
  env.writeConfig({ work: { port: tap.port }, smtpPort: env.relay.port });
  await env.confirmPolicy();
}, 120_000);

afterAll(async () => {
  await env?.stop();
  await tap?.stop();
});

/** Runs a compose call; what Dovecot sent meanwhile, and the message the SMTP server received. */
async function counted(call: () => Promise<{ status: string }>) {
  const before = tap.fromServer();
  const res = await call();
  const fromServer = tap.fromServer() - before;
  const received = await simpleParser(env.relay.received.at(-1)?.raw ?? "");
  return { res, fromServer, received };
}

it("a reply to a message with a large attachment reads its header and text, and quotes the text", async () => {
  for (const [name, quoted] of [
    ["text", /wrote:\n> The file is attached\.\n> Second line\./],
    ["html", /wrote:\n> The file is attached:\n> ?\n> size 6 MiB/],
  ] as const) {
    const { res, fromServer, received } = await counted(() =>
      env.client.call("reply", { ref: refs[name] as string, body: "Thanks." }),
    );
    expect(res.status).toBe("sent");
    expect(received.subject).toBe(`Re: Big ${name}`);
    expect(received.inReplyTo).toBe(`<big-${name}@example.org>`);
    expect(received.text).toMatch(quoted);
    // The attachment's 8 MiB of base64 never crossed: the first MiB did, with the text part
    expect(fromServer).toBeLessThan(2 * 1024 * 1024);
  }
});

it("a forward without the attachments reads the same; with them it reads the original whole and sends them", async () => {
  const ref = refs.text as string;
  const without = await counted(() =>
    env.client.call("forward", { ref, to: ["bob@example.com"], body: "FYI", no_attachments: true }),
  );
  expect(without.res.status).toBe("sent");
  expect(without.received.text).toContain("---------- Forwarded message ---------");
  expect(without.received.text).toContain("The file is attached.\nSecond line.");
  expect(without.received.attachments).toEqual([]);
  expect(without.fromServer).toBeLessThan(2 * 1024 * 1024);

  const carried = await counted(() =>
    env.client.call("forward", { ref, to: ["bob@example.com"], body: "FYI" }),
  );
  expect(carried.res.status).toBe("sent");
  expect(carried.received.attachments.map((a) => [a.filename, sha(a.content)])).toEqual([
    ["big.bin", sha(big)],
  ]);
  expect(carried.fromServer).toBeGreaterThan(8 * 1024 * 1024);
});

it("a forward whose original's attachments pass the bound is refused before the original is read", async () => {
  const r = await env.dv.appendMessage(
    "alice",
    "INBOX",
    withAttachment("Too big", { text: "Far too big." }, randomBytes(MAX_ATTACHMENT_TOTAL + 3 * 1024 * 1024)),
  );
  const ref = encodeRef({ account: "work", folder: "INBOX", uidValidity: r.uidValidity, uid: r.uid });
  const sent = env.relay.received.length;
  const before = tap.fromServer();
  await expect(
    env.client.call("forward", { ref, to: ["bob@example.com"], body: "FYI" }),
  ).rejects.toMatchObject({
    reason: "INVALID_ARGUMENT",
    message: `the attachments add up to more than ${MAX_ATTACHMENT_TOTAL} bytes`,
  });
  expect(tap.fromServer() - before).toBeLessThan(64 * 1024);
  expect(env.relay.received.length).toBe(sent);
  // Without them it goes, reading the header and text alone
  const without = await counted(() =>
    env.client.call("forward", { ref, to: ["bob@example.com"], body: "FYI", no_attachments: true }),
  );
  expect(without.res.status).toBe("sent");
  expect(without.received.text).toContain("Far too big.");
  expect(without.fromServer).toBeLessThan(2 * 1024 * 1024);
});

it("BODYSTRUCTURE's lower bound of the attachments never passes their real size", async () => {
  const sizes = [0, 1, 2, 3, 56, 57, 58, 76, 77, 1000, 65_536, 1024 * 1024 + 1];
  const added = await env.dv.appendMessages(
    "alice",
    "Archive",
    sizes.map((n) => ({ raw: withAttachment(`Sized ${n}`, { text: "sized" }, randomBytes(n)) })),
  );
  const client = await env.dv.connect("alice");
  try {
    for (const [i, n] of sizes.entries()) {
      const a = added[i] as (typeof added)[number];
      const least = await attachedBytesAtLeast(
        client,
        decodeRef(encodeRef({ account: "work", folder: "Archive", uidValidity: a.uidValidity, uid: a.uid })),
      );
      expect(least, `${n} bytes`).toBeLessThanOrEqual(n);
      // (76-character lines: the bound takes 40, so it comes within 3% of the size)
      expect(least, `${n} bytes`).toBeGreaterThanOrEqual(Math.floor(n * 0.97) - 3);
    }
  } finally {
    await client.logout();
  }
});
