/**
 * Sending from a Google account, against the X-GM-EXT-1 test server and a real SMTP server: Gmail
 * files its own Sent copy, so the daemon appends none; and the recovery at start finds an
 * unconfirmed send's Message-ID in All Mail with X-GM-RAW `rfc822msgid:` (and only that one).
 */
import fs from "node:fs";
import { ImapFlow } from "imapflow";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { type Daemon, startDaemon } from "../src/daemon/server.js";
import { loadConfig } from "../src/config.js";
import { outboxOf } from "../src/outbox/index.js";
import { StateDb } from "../src/store/state.js";
import { type GmailServer, startGmail } from "../src/testing/gmail.js";
import { confirmServerSettings } from "./support/confirmed.js";
import { gmailHome } from "./support/gmail-home.js";

/** A message Gmail filed in All Mail for a send whose outcome the daemon never recorded. */
const ALREADY_SENT = [
  "From: gina@example.com",
  "To: bob@example.com",
  "Subject: went out before the crash",
  "Message-ID: <went-out.1@example.com>",
  "Date: Tue, 1 Dec 2026 09:00:00 +0000",
  "",
  "sent",
  "",
].join("\r\n");

let gm: GmailServer;
let smtp: SMTPServer;
const received: Buffer[] = [];
let dir: string;
let daemon: Daemon;
let client: DaemonClient;

async function sentMailCount(): Promise<number> {
  const c = new ImapFlow({
    host: "127.0.0.1",
    port: gm.port,
    secure: false,
    auth: { user: "gina", pass: "gina-pw" },
    logger: false,
  });
  await c.connect();
  try {
    const s = await c.status("[Gmail]/Sent Mail", { messages: true });
    return s ? (s.messages ?? 0) : 0;
  } finally {
    await c.logout().catch(() => undefined);
  }
}

beforeAll(async () => {
  gm = await startGmail({
    user: "gina",
    password: "gina-pw",
    inbox: [{ raw: ALREADY_SENT, labels: ["\\Sent"] }],
  });
  smtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _s, done) {
      if (auth.username === "gina" && auth.password === "gina-pw") done(null, { user: "gina" });
      else done(Object.assign(new Error("no"), { responseCode: 535 }));
    },
    onData(stream, _s, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        received.push(Buffer.concat(chunks));
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const smtpPort = (smtp.server.address() as { port: number }).port;
  const made = gmailHome("cm-gsend-", gm.port, smtpPort);
  dir = made.dir;
  const home = made.home;
  // Two sends a killed daemon left unconfirmed: one Gmail has in All Mail, one it has not.
  const state = new StateDb(home.dbFile);
  const created = new Date().toISOString();
  const pending = (key: string, message_id: string) =>
    outboxOf(state).store.begin({
      key,
      account: "gmail",
      tool: "send_email",
      message_id,
      status: "pending",
      created,
    });
  pending("k-found", "<went-out.1@example.com>");
  pending("k-lost", "<never-arrived.2@example.com>");
  // That daemon ran with the account's server settings confirmed by the owner.
  confirmServerSettings(state, loadConfig(home.configFile));
  state.close();
  daemon = await startDaemon({ home, log: () => undefined });
  // A first start leaves config.toml's policy unconfirmed: the owner confirms it once.
  const owner = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  await owner.call("policy.confirm", {});
  owner.close();
  client = new DaemonClient({ socketPath: home.socketPath, client: "mcp" });
}, 60_000);

afterAll(async () => {
  client?.close();
  await daemon?.stop();
  await gm?.stop();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const send = (subject: string, idempotency_key?: string) =>
  client.call("send", {
    account: "gmail",
    to: ["bob@example.com"],
    subject,
    body: "hello",
    ...(idempotency_key ? { idempotency_key } : {}),
  });

describe("sending on Google", () => {
  it("records an unconfirmed send found in All Mail by rfc822msgid as sent, and leaves the other unconfirmed", async () => {
    // The recovery pass holds both keys from the daemon's start, so these wait for its lookups.
    expect(await send("went out before the crash", "k-found")).toEqual({
      status: "duplicate",
      original_status: "sent",
      idempotency_key: "k-found",
    });
    await expect(send("never arrived", "k-lost")).rejects.toMatchObject({
      reason: "SEND_UNCONFIRMED",
      hint: expect.stringContaining("chainmail outbox confirm k-lost"),
    });
    expect(received).toHaveLength(0);
  });

  it("sends without appending a Sent copy (Gmail files its own): sent_ref empty, no sent_copy_error", async () => {
    const before = await sentMailCount();
    const res = await send("from gmail");
    expect(res).toEqual({
      status: "sent",
      message_id: expect.stringMatching(/^<.+@example\.com>$/),
      sent_ref: "",
      idempotency_key: expect.stringMatching(/^d1\./),
    });
    expect(received).toHaveLength(1);
    expect(received[0]!.toString("latin1")).toContain("Subject: from gmail\r\n");
    expect(await sentMailCount()).toBe(before);
    expect(await send("from gmail")).toMatchObject({ status: "duplicate" });
    expect(received).toHaveLength(1);
  });
});
