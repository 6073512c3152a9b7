/**
 * A ref to mail that arrived after the daemon's connection opened its folder: the watch's new-mail
 * event names it, or another client's APPEND (a draft saved elsewhere, a rule's copy) gives its UID.
 * The IMAP server tells a connection of new messages only when it looks (NOOP, IDLE; Dovecot not on a
 * UID FETCH), so a read on a connection that had the folder open answered "the message is no longer
 * in its folder on the server" for a message that had just arrived. Every operation on a ref is
 * checked on such a message, each after a read that leaves the folder open on the pooled connection.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeRef } from "../src/refs.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
let dir: string;
let n = 0;

const raw = (subject: string) =>
  [
    "From: Ann <ann@example.com>",
    "To: Alice <alice@example.com>",
    `Subject: ${subject}`,
    `Message-ID: <${subject.replace(/\W+/g, "-")}@example.com>`,
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="b"',
    "",
    "--b",
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Hello, ${subject}.`,
    "--b",
    "Content-Type: application/octet-stream; name=notes.bin",
    "Content-Disposition: attachment; filename=notes.bin",
    "Content-Transfer-Encoding: base64",
    "",
    Buffer.from("twelve bytes").toString("base64"),
    "--b--",
    "",
  ].join("\r\n");

const append = async (subject: string) => {
  const put = await env.dv.appendMessage("alice", "INBOX", raw(subject));
  return encodeRef({ account: "work", folder: "INBOX", uidValidity: put.uidValidity, uid: put.uid });
};

/**
 * A message appended after a read (or a change: `opener`) that leaves INBOX open on the daemon's
 * connection, read-only (EXAMINE) or read-write (SELECT).
 */
async function arrivedAfterOpen(opener: "read" | "change" = "read"): Promise<string> {
  const before = await append(`before ${++n}`);
  if (opener === "read") expect((await env.client.getMessages({ refs: [before] })).messages).toHaveLength(1);
  else expect((await env.client.setFlags({ refs: [before], add: ["seen"] })).failed).toBe(0);
  return append(`arrived ${n}`);
}

beforeAll(async () => {
  env = await startMailEnv();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-new-mail-"));
  await env.client.createFolder({ account: "work", name: "Keep" });
}, 60_000);
afterAll(async () => {
  await env?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a message that arrived after its folder was opened", () => {
  it("is read by get_message and get_thread", async () => {
    const ref = await arrivedAfterOpen();
    const got = await env.client.getMessages({ refs: [ref] });
    expect(got.errors).toEqual([]);
    expect(got.messages.map((m) => m.subject)).toEqual([`arrived ${n}`]);
    const thread = await env.client.getThread({ ref: await arrivedAfterOpen() });
    expect(thread.messages.map((m) => m.subject)).toEqual([`arrived ${n}`]);
  });

  it("is in get_thread's answer, as a reply to a message read before it came", async () => {
    const root = await append("root of a thread");
    expect((await env.client.getThread({ ref: root })).messages).toHaveLength(1);
    const reply = raw("Re: root of a thread").replace(
      "MIME-Version: 1.0",
      "In-Reply-To: <root-of-a-thread@example.com>\r\nReferences: <root-of-a-thread@example.com>\r\nMIME-Version: 1.0",
    );
    await env.dv.appendMessage("alice", "INBOX", reply);
    const thread = await env.client.getThread({ ref: root });
    expect(thread.messages.map((m) => m.subject)).toEqual(["root of a thread", "Re: root of a thread"]);
  });

  it("has its attachment and its raw bytes saved", async () => {
    const a = await env.client.downloadAttachment({ ref: await arrivedAfterOpen(), part: "2", dir });
    expect(fs.readFileSync(a.path, "utf8")).toBe("twelve bytes");
    const r = await env.client.saveRaw({ ref: await arrivedAfterOpen(), dir });
    expect(fs.readFileSync(r.path, "utf8")).toContain(`Subject: arrived ${n}`);
  });

  it("is flagged, copied and moved", async () => {
    const flagged = await env.client.setFlags({ refs: [await arrivedAfterOpen("change")], add: ["flagged"] });
    expect(flagged.failed).toBe(0);
    const marked = await env.client.search({ query: "is:flagged", accounts: ["work"], source: "server" });
    expect(marked.rows.map((r) => r.subject)).toEqual([`arrived ${n}`]);
    const copied = await env.client.copy({ refs: [await arrivedAfterOpen("change")], folder: "Keep" });
    expect(copied.failed).toBe(0);
    const moved = await env.client.move({ refs: [await arrivedAfterOpen("change")], folder: "Keep" });
    expect(moved.failed).toBe(0);
    const kept = await env.client.search({ query: "in:Keep", accounts: ["work"], source: "server" });
    expect(kept.rows.map((r) => r.subject).sort()).toEqual([`arrived ${n - 1}`, `arrived ${n}`]);
  });
});
