import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MailError } from "../src/errors.js";
import { decodeRef, encodeRef } from "../src/refs.js";
import { setSecret } from "../src/secrets.js";
import { generateCorpus, INJECTION_TEXT, TINY_PNG } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const corpus = generateCorpus({ hugeBytes: 1_000_000 });

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    corpus.map((m) => ({ raw: m.raw, flags: m.flags ?? [] })),
  );
});
afterAll(async () => {
  await env?.stop();
});

async function refOf(subject: string): Promise<string> {
  const res = await env.client.search({ query: `subject:"${subject}"`, accounts: ["work"] });
  expect(res.rows.length).toBeGreaterThan(0);
  return res.rows[0]!.ref;
}

describe("accounts and folders", () => {
  it("lists accounts with auth state and policy", async () => {
    const { accounts } = await env.client.listAccounts();
    expect(accounts.map((a) => a.name)).toEqual(["work", "home"]);
    expect(accounts[0]).toMatchObject({
      provider: "imap",
      address: "alice@example.com",
      // A password is stored, and this daemon has not logged in with it yet.
      auth: "unknown",
      auth_method: "password",
      allow_expunge: false,
    });
    expect(JSON.stringify(accounts)).not.toContain("secret-pw");
  });

  it("the auth state tells the truth: ok after a login, rejected when refused, unknown when replaced", async () => {
    const state = async (name: string) =>
      (await env.client.listAccounts()).accounts.find((a) => a.name === name)!.auth;
    expect((await env.client.testAccount({ account: "work" })).imap.ok).toBe(true);
    expect(await state("work")).toBe("ok");
    setSecret(env.home.secretsDir, "home", "not-bobs-password");
    const refused = await env.client.testAccount({ account: "home" });
    expect(refused.imap.error?.reason).toBe("AUTH_REJECTED");
    expect(await state("home")).toBe("rejected");
    // A new password (chainmail secret set) has not been tried yet.
    setSecret(env.home.secretsDir, "home", "bob-secret-pw");
    expect(await state("home")).toBe("unknown");
    expect((await env.client.testAccount({ account: "home" })).imap.ok).toBe(true);
    expect(await state("home")).toBe("ok");
    fs.rmSync(path.join(env.home.secretsDir, "home.secret"));
    expect(await state("home")).toBe("missing");
    setSecret(env.home.secretsDir, "home", "bob-secret-pw");
  });

  it("tests an account: IMAP ok with capabilities, SMTP not configured", async () => {
    const res = await env.client.testAccount({ account: "work" });
    expect(res.imap.ok).toBe(true);
    expect(res.imap.capabilities).toContain("UIDPLUS");
    expect(res.smtp.ok).toBe(false);
    await expect(env.client.testAccount({ account: "nope" })).rejects.toMatchObject({ reason: "NOT_FOUND" });
  });

  it("lists folders with roles, counts and unseen", async () => {
    const res = await env.client.listFolders({ accounts: ["work"] });
    expect(res.partial).toEqual([]);
    const folders = res.accounts[0]!.folders;
    const inbox = folders.find((f) => f.name === "INBOX")!;
    expect(inbox.role).toBe("inbox");
    expect(inbox.messages).toBe(corpus.length);
    expect(inbox.unseen).toBe(corpus.filter((m) => !m.flags).length);
    expect(folders.find((f) => f.name === "Trash")?.role).toBe("trash");
    expect(folders.find((f) => f.name === "Archive")?.role).toBe("archive");
  });

  it("reports an account whose password is wrong as partial", async () => {
    const { setSecret } = await import("../src/secrets.js");
    setSecret(env.home.secretsDir, "home", "wrong");
    await env.client.testAccount({ account: "home" }); // drops the pooled connection
    const res = await env.client.listFolders();
    expect(res.accounts.map((a) => a.account)).toEqual(["work"]);
    expect(res.partial[0]).toMatchObject({ account: "home", error: { reason: "AUTH_REJECTED" } });
    setSecret(env.home.secretsDir, "home", "bob-secret-pw");
    await env.client.testAccount({ account: "home" });
  });
});

describe("search (server path)", () => {
  it("finds by subject and from, newest first, with pages", async () => {
    const res = await env.client.search({ query: "subject:thread", accounts: ["work"], limit: 4 });
    expect(res.count).toBe(9);
    expect(res.rows).toHaveLength(4);
    expect(res.source).toBe("server");
    expect(res.account_counts).toEqual([{ account: "work", count: 9, source: "server" }]);
    // Newest first by arrival (the server's SORT REVERSE ARRIVAL, as the cache orders): the corpus
    // was appended in one go, so arrival follows the append order, which UIDs follow too.
    const uids = res.rows.map((r) => decodeRef(r.ref).uid);
    expect([...uids].sort((a, b) => b - a)).toEqual(uids);
    const page2 = await env.client.search({
      query: "subject:thread",
      accounts: ["work"],
      limit: 4,
      cursor: res.next_cursor!,
    });
    expect(page2.rows[0]!.ref).not.toBe(res.rows[3]!.ref);
    await expect(
      env.client.search({ query: "other", accounts: ["work"], cursor: res.next_cursor! }),
    ).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
  });

  it("collapses threads, counts only, adds snippets", async () => {
    const threads = await env.client.search({ query: "subject:thread", accounts: ["work"], threads: true });
    expect(threads.count).toBe(3);
    const c = await env.client.search({ query: "from:filler1", count_only: true });
    expect(c).toMatchObject({ count: 1, rows: [] });
    const s = await env.client.search({ query: "subject:Invoice", snippets: true });
    expect(s.rows[0]!.snippet).toContain("Two files attached");
    expect(s.rows[0]!.has_attachment).toBe(true);
  });

  it("reports a parse error with its position; the cache source before a sync says what it lacks", async () => {
    await expect(env.client.search({ query: "(from:a" })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
    const cached = await env.client.search({ query: "x", source: "cache", accounts: ["work"] });
    expect(cached).toMatchObject({ source: "cache", count: 0, rows: [] });
    expect(cached.partial).toEqual([
      { account: "work", error: expect.objectContaining({ reason: "UNSUPPORTED" }) },
    ]);
    await expect(env.client.search({ query: "x", limit: 0 })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
    await expect(env.client.search({ accounts: ["ghost"] })).rejects.toMatchObject({ reason: "NOT_FOUND" });
  });
});

describe("reading", () => {
  it("gets messages without marking them read, with quotes cut unless full", async () => {
    const ref = await refOf("Re: Project thread 1");
    const before = await env.client.search({ query: "is:unread", accounts: ["work"], count_only: true });
    const res = await env.client.getMessages({ refs: [ref] });
    expect(res.errors).toEqual([]);
    expect(res.source).toBe("server");
    const m = res.messages[0]!;
    expect(m.body).toContain("Reply");
    expect(m.body).not.toContain("> Opening");
    expect(m.body).not.toContain("Sent from a phone");
    const full = await env.client.getMessages({ refs: [ref], full: true });
    expect(full.messages[0]!.body).toContain("> Opening");
    const after = await env.client.search({ query: "is:unread", accounts: ["work"], count_only: true });
    expect(after.count).toBe(before.count);
    expect(m.flags).not.toContain("seen");
  });

  it("decodes non-ASCII headers, derives text of HTML-only mail, lists attachment parts", async () => {
    const uni = (await env.client.getMessages({ refs: [await refOf("Grüße")] })).messages[0]!;
    expect(uni.subject).toBe("Grüße aus Köln — 日本語のテスト ✓");
    expect(uni.from[0]).toEqual({ name: "Jürgen Müller", address: "juergen@example.com" });
    const html = (await env.client.getMessages({ refs: [await refOf("HTML only")] })).messages[0]!;
    expect(html.body).toContain("quarterly");
    expect(html.attachments.map((a) => a.filename)).toEqual(["report.csv"]);
    const inv = (await env.client.getMessages({ refs: [await refOf("Invoice with")] })).messages[0]!;
    expect(inv.attachments.map((a) => [a.part, a.filename, a.content_type])).toEqual([
      ["2", "invoice.pdf", "application/pdf"],
      ["3", "pixel.png", "image/png"],
    ]);
  });

  it("cuts a huge body at the body limit unless full", async () => {
    const ref = await refOf("Huge message");
    const m = (await env.client.getMessages({ refs: [ref] })).messages[0]!;
    expect(m.body_truncated).toBe(true);
    expect(m.body.length).toBe(2000);
    const f = (await env.client.getMessages({ refs: [ref], full: true })).messages[0]!;
    expect(f.body.length).toBeGreaterThan(50_000);
    expect(f.body_truncated).toBe(false);
  });

  it("returns per-ref errors and fails only when every ref fails", async () => {
    const ref = await refOf("Filler message 2");
    const r = decodeRef(ref);
    const { encodeRef } = await import("../src/refs.js");
    const missing = encodeRef({ ...r, uid: 99999 });
    const res = await env.client.getMessages({ refs: [ref, "garbage", missing] });
    expect(res.messages).toHaveLength(1);
    expect(res.errors.map((e) => [e.ref, e.error.reason])).toEqual([
      ["garbage", "INVALID_ARGUMENT"],
      [missing, "NOT_FOUND"],
    ]);
    await expect(env.client.getMessages({ refs: ["garbage"] })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
    await expect(env.client.getMessages({ refs: [] })).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
  });

  it("keeps injection text as plain data", async () => {
    const m = (await env.client.getMessages({ refs: [await refOf("Urgent")] })).messages[0]!;
    expect(m.body).toContain(INJECTION_TEXT);
  });

  it("reads a thread oldest first from any message of it", async () => {
    const ref = await refOf("Re: Project thread 2");
    const t = await env.client.getThread({ ref });
    expect(t.messages.map((m) => m.message_id)).toEqual([
      "<thread2.msg0@example.com>",
      "<thread2.msg1@example.com>",
      "<thread2.msg2@example.com>",
    ]);
    expect(t).toMatchObject({
      thread_id: "<thread2.msg0@example.com>",
      truncated: false,
      omitted_refs: [],
      errors: [],
      source: "server",
    });
  });
});

describe("files", () => {
  it("downloads an attachment to a new 0600 file, never replacing, with (2) on a clash", async () => {
    const dir = fs.mkdtempSync(path.join(env.dir, "dl-"));
    fs.chmodSync(dir, 0o700);
    const ref = await refOf("Invoice with");
    const a = await env.client.downloadAttachment({ ref, part: "3", dir });
    expect(a).toMatchObject({ filename: "pixel.png", content_type: "image/png", size: TINY_PNG.length });
    expect(fs.readFileSync(a.path)).toEqual(TINY_PNG);
    expect(fs.statSync(a.path).mode & 0o777).toBe(0o600);
    const b = await env.client.downloadAttachment({ ref, part: "3", dir });
    expect(path.basename(b.path)).toBe("pixel (2).png");
    expect(fs.readdirSync(dir).sort()).toEqual(["pixel (2).png", "pixel.png"]);
  });

  it("sanitizes a hostile file name", async () => {
    const dir = fs.mkdtempSync(path.join(env.dir, "dl-"));
    fs.chmodSync(dir, 0o700);
    const ref = await refOf("Urgent");
    const m = (await env.client.getMessages({ refs: [ref] })).messages[0]!;
    const a = await env.client.downloadAttachment({ ref, part: m.attachments[0]!.part, dir });
    expect(path.dirname(a.path)).toBe(dir);
    expect(path.basename(a.path)).toBe("etc_.passwd.txt");
  });

  it("strips invisible characters from a saved name; refuses a dir under a symlink or a shared ancestor", async () => {
    const raw = [
      "From: Sender <s@example.com>",
      "To: alice@example.com",
      "Subject: Invisible name",
      "Message-ID: <invisible@example.com>",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "see attached",
      "--b",
      "Content-Type: application/pdf",
      // in<ZWSP>voice<LS><BOM><RLO>.pdf
      "Content-Disposition: attachment; filename*=utf-8''in%E2%80%8Bvoice%E2%80%A8%EF%BB%BF%E2%80%AE.pdf",
      "Content-Transfer-Encoding: base64",
      "",
      Buffer.from("%PDF-1.4 test").toString("base64"),
      "--b--",
      "",
    ].join("\r\n");
    // A folder of its own, opened fresh, so no earlier selection of INBOX hides the new message.
    const c = await env.dv.connect("alice");
    await c.mailboxCreate("Invisible");
    await c.logout();
    const put = await env.dv.appendMessage("alice", "Invisible", raw);
    const ref = encodeRef({
      account: "work",
      folder: "Invisible",
      uidValidity: put.uidValidity,
      uid: put.uid,
    });
    const m = (await env.client.getMessages({ refs: [ref] })).messages[0]!;
    const part = m.attachments[0]!.part;
    const dir = fs.mkdtempSync(path.join(env.dir, "dl-"));
    fs.chmodSync(dir, 0o700);
    const a = await env.client.downloadAttachment({ ref, part, dir });
    expect(path.basename(a.path)).toBe("invoice.pdf");

    // A dir that is fine itself but reached through a symlink, or under a dir others can write to.
    fs.symlinkSync(env.dir, path.join(dir, "via"));
    await expect(
      env.client.downloadAttachment({ ref, part, dir: path.join(dir, "via", path.basename(dir)) }),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringMatching(/symlink/) });
    const open = fs.mkdtempSync(path.join(env.dir, "open-"));
    fs.mkdirSync(path.join(open, "mine"), { mode: 0o700 });
    fs.chmodSync(open, 0o777);
    await expect(
      env.client.downloadAttachment({ ref, part, dir: path.join(open, "mine") }),
    ).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringMatching(/writable by other users/),
    });
    expect(fs.readdirSync(path.join(open, "mine"))).toEqual([]);
  });

  it("removes temp files a crash left: in the default dir at start, in a dir before a save there", async () => {
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    const leftover = ".chainmail-00112233445566ff.part";
    const defaultDir = path.join(env.dir, "cache", "chainmail", "attachments");
    fs.mkdirSync(defaultDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(defaultDir, leftover), "half a message");
    fs.utimesSync(path.join(defaultDir, leftover), old, old);
    await env.restartDaemon();
    expect(fs.existsSync(path.join(defaultDir, leftover))).toBe(false);

    const dir = fs.mkdtempSync(path.join(env.dir, "dl-"));
    fs.chmodSync(dir, 0o700);
    fs.writeFileSync(path.join(dir, leftover), "half an attachment");
    fs.utimesSync(path.join(dir, leftover), old, old);
    await env.client.saveRaw({ ref: await refOf("Filler message 3"), dir });
    expect(fs.readdirSync(dir)).toEqual(["message.eml"]);
  });

  it("refuses relative, missing, shared and foreign dirs; an unknown part is NOT_FOUND", async () => {
    const ref = await refOf("Invoice with");
    await expect(
      env.client.downloadAttachment({ ref, part: "2", dir: "relative/dir" }),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    await expect(
      env.client.downloadAttachment({ ref, part: "2", dir: path.join(env.dir, "nope") }),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    const shared = fs.mkdtempSync(path.join(env.dir, "shared-"));
    fs.chmodSync(shared, 0o777);
    await expect(env.client.downloadAttachment({ ref, part: "2", dir: shared })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
    if (process.getuid?.() === 0) {
      const foreign = fs.mkdtempSync(path.join(env.dir, "foreign-"));
      fs.chownSync(foreign, 65534, 65534);
      await expect(env.client.downloadAttachment({ ref, part: "2", dir: foreign })).rejects.toMatchObject({
        reason: "INVALID_ARGUMENT",
      });
    }
    const mine = fs.mkdtempSync(path.join(env.dir, "dl-"));
    fs.chmodSync(mine, 0o700);
    await expect(env.client.downloadAttachment({ ref, part: "9", dir: mine })).rejects.toMatchObject({
      reason: "NOT_FOUND",
    });
    await expect(env.client.downloadAttachment({ ref, part: "../1" })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
  });

  it("saves the raw message as message.eml in the default XDG cache dir", async () => {
    const ref = await refOf("Filler message 3");
    const a = await env.client.saveRaw({ ref });
    expect(a.path).toBe(path.join(env.dir, "cache", "chainmail", "attachments", "message.eml"));
    expect(a.content_type).toBe("message/rfc822");
    expect(fs.readFileSync(a.path, "utf8")).toContain("Message-ID: <filler3@example.com>");
    const b = await env.client.saveRaw({ ref });
    expect(path.basename(b.path)).toBe("message (2).eml");
  });
});

describe("errors", () => {
  it("MailError carries the reason across the socket", async () => {
    const err = await env.client.getThread({ ref: "m1.xx" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailError);
    expect((err as MailError).reason).toBe("INVALID_ARGUMENT");
  });
});
