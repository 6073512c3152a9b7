/**
 * Every tool through a real SDK client, with the daemon and a real Dovecot behind it: results,
 * untrusted wrapping (refs never wrapped), batch outcomes and error results.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MAX_LABEL_LENGTH } from "@mcpforge/chainmail";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  generateCorpus,
  INJECTION_TEXT,
  isUntrusted,
  type Json,
  type McpEnv,
  startMcpEnv,
  u,
} from "./helpers.js";

let m: McpEnv;
const corpus = generateCorpus({ hugeBytes: 0 });
let saveDir: string;

beforeAll(async () => {
  m = await startMcpEnv({ work: { allow_expunge: true, allow_delete_folder: true } });
  await m.env.dv.appendMessages(
    "alice",
    "INBOX",
    corpus.map((c) => ({ raw: c.raw, flags: c.flags ?? [] })),
  );
  await m.env.dv.appendMessages(
    "bob",
    "INBOX",
    corpus.slice(0, 3).map((c) => ({ raw: c.raw })),
  );
  saveDir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-mcp-save-"));
  fs.chmodSync(saveDir, 0o700);
});

afterAll(async () => {
  await m?.close();
  if (saveDir) fs.rmSync(saveDir, { recursive: true, force: true });
});

type Row = { ref: string; subject: { untrusted: string }; [k: string]: unknown };

async function find(query: string, accounts = ["work"]): Promise<Row[]> {
  const r = await m.tools.ok<{ rows: Row[] }>("search", { query, accounts, limit: 200 });
  return r.rows;
}

async function refOf(subject: string, account = "work"): Promise<string> {
  const rows = await find(`subject:"${subject}"`, [account]);
  expect(rows.length).toBeGreaterThan(0);
  return rows[0]!.ref;
}

describe("the listed tools", () => {
  it("lists all 38 tools while the policy allows expunge and delete_folder on some account", async () => {
    const { tools } = await m.client.listTools();
    expect(tools).toHaveLength(38);
    expect(tools.map((t) => t.name)).toContain("expunge");
    expect(tools.map((t) => t.name)).toContain("delete_folder");
  });
});

describe("accounts and folders", () => {
  it("list_accounts gives names, providers, auth state and policy, and no secret", async () => {
    const res = await m.tools.raw("list_accounts");
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({
      accounts: [
        {
          name: "work",
          provider: "imap",
          address: "alice@example.com",
          auth: "unknown",
          auth_method: "password",
          allow_expunge: true,
          allow_delete_folder: true,
          confirmation_pending: false,
        },
        {
          name: "home",
          provider: "imap",
          address: "bob@example.com",
          auth: "unknown",
          auth_method: "password",
          allow_expunge: false,
          allow_delete_folder: false,
          confirmation_pending: false,
        },
      ],
    });
    // The kit's text mode: a summary line, a blank line, then the JSON.
    const text = (res.content[0] as { text: string }).text;
    expect(text).toBe(`2 accounts\n\n${JSON.stringify(res.structuredContent)}`);
    expect(text).not.toContain("secret-pw");
  });

  it("test_account wraps the IMAP capabilities and a server's error text", async () => {
    const r = await m.tools.ok<Json>("test_account", { account: "work" });
    const imap = r["imap"] as { ok: boolean; capabilities: unknown[] };
    expect(r["account"]).toBe("work");
    expect(imap.ok).toBe(true);
    expect(imap.capabilities.every(isUntrusted)).toBe(true);
    expect(imap.capabilities).toContainEqual(u("UIDPLUS"));
    // No SMTP server is configured in the test env: a skipped check with a wrapped message.
    expect(r["smtp"]).toMatchObject({ ok: false, skipped: true, error: { reason: "NOT_FOUND" } });
    expect(isUntrusted((r["smtp"] as { error: { message: unknown } }).error.message)).toBe(true);
  });

  it("test_account of an unknown account is NOT_FOUND", async () => {
    const e = await m.tools.fails("test_account", { account: "nope" });
    expect(e.reason).toBe("NOT_FOUND");
  });

  it("list_folders wraps folder names and keeps roles and counts", async () => {
    const r = await m.tools.ok<{
      accounts: Array<{ account: string; folders: Array<Json> }>;
      partial: unknown[];
    }>("list_folders", { accounts: ["work"] });
    expect(r.partial).toEqual([]);
    expect(r.accounts.map((a) => a.account)).toEqual(["work"]);
    const folders = r.accounts[0]!.folders;
    expect(folders.every((f) => isUntrusted(f["name"]))).toBe(true);
    const inbox = folders.find((f) => (f["name"] as { untrusted: string }).untrusted === "INBOX")!;
    expect(inbox).toEqual({
      name: u("INBOX"),
      role: "inbox",
      messages: corpus.length,
      unseen: corpus.filter((c) => !c.flags).length,
    });
    const all = await m.tools.ok<{ accounts: Array<{ account: string }> }>("list_folders", {});
    expect(all.accounts.map((a) => a.account)).toEqual(["work", "home"]);
  });

  it("create_folder, rename_folder and delete_folder return the server's names as untrusted", async () => {
    expect(await m.tools.ok("create_folder", { account: "work", name: "Projects/2024" })).toEqual({
      account: "work",
      name: u("Projects/2024"),
    });
    expect(
      await m.tools.ok("rename_folder", { account: "work", from: "Projects/2024", to: "Projects/Old" }),
    ).toEqual({ account: "work", name: u("Projects/Old") });
    expect(await m.tools.ok("delete_folder", { account: "work", name: "Projects/Old" })).toEqual({
      account: "work",
      name: u("Projects/Old"),
      deleted: true,
    });
    const again = await m.tools.ok("delete_folder", { account: "work", name: "Projects/Old" });
    expect(again).toMatchObject({ deleted: false });
  });

  it("delete_folder is refused by the policy of another account, with a hint", async () => {
    await m.tools.ok("create_folder", { account: "home", name: "Keep" });
    const e = await m.tools.fails("delete_folder", { account: "home", name: "Keep" });
    expect(e.reason).toBe("POLICY_DENIED");
    expect(e.hint).toContain("allow_delete_folder");
  });

  it("delete_folder refuses INBOX", async () => {
    const e = await m.tools.fails("delete_folder", { account: "work", name: "INBOX" });
    expect(["INVALID_ARGUMENT", "CONFLICT"]).toContain(e.reason);
  });
});

describe("reading", () => {
  it("search wraps subjects, names, snippets, folders and message ids, and leaves refs plain", async () => {
    const r = await m.tools.ok<Json>("search", {
      query: "from:mallory",
      accounts: ["work"],
      snippets: true,
    });
    expect(r["count"]).toBe(1);
    expect(r["source"]).toBe("server");
    expect(r["account_counts"]).toEqual([{ account: "work", count: 1, source: "server" }]);
    expect(r["partial"]).toEqual([]);
    expect(r["next_cursor"]).toBeNull();
    const row = (r["rows"] as Json[])[0]!;
    expect(typeof row["ref"]).toBe("string");
    expect(row["ref"]).toMatch(/^m1\./);
    expect(row["account"]).toBe("work");
    expect(row["folder"]).toEqual(u("INBOX"));
    expect(row["subject"]).toEqual(u(`Urgent: ${INJECTION_TEXT.slice(0, 60)}`));
    expect(row["from"]).toEqual({ name: u("Mallory"), address: u("mallory@evil.example") });
    expect(row["message_id"]).toEqual(u("<inject1@example.com>"));
    expect(isUntrusted(row["thread_id"])).toBe(true);
    expect(isUntrusted(row["snippet"])).toBe(true);
    expect((row["snippet"] as { untrusted: string }).untrusted.length).toBeLessThanOrEqual(200);
    expect(row["has_attachment"]).toBe(true);
    expect(Array.isArray(row["flags"])).toBe(true);
  });

  it("search pages with cursor, counts with count_only, and decodes non-ASCII subjects", async () => {
    const first = await m.tools.ok<Json>("search", { accounts: ["work"], limit: 4 });
    expect((first["rows"] as unknown[]).length).toBe(4);
    expect(first["count"]).toBe(corpus.length);
    expect(typeof first["next_cursor"]).toBe("string");
    const second = await m.tools.ok<Json>("search", {
      accounts: ["work"],
      limit: 4,
      cursor: first["next_cursor"],
    });
    const refs1 = (first["rows"] as Row[]).map((x) => x.ref);
    const refs2 = (second["rows"] as Row[]).map((x) => x.ref);
    expect(refs2.some((x) => refs1.includes(x))).toBe(false);
    const counted = await m.tools.ok<Json>("search", { query: "subject:project", count_only: true });
    expect(counted["rows"]).toEqual([]);
    expect(counted["count"]).toBe(9 + 3); // three threads of three at work, three messages at home
    const unicode = await find("subject:Köln");
    expect(unicode[0]!.subject).toEqual(u("Grüße aus Köln — 日本語のテスト ✓"));
  });

  it("search refuses a cursor from another query and bad arguments", async () => {
    const first = await m.tools.ok<Json>("search", { accounts: ["work"], limit: 2 });
    const e = await m.tools.fails("search", { query: "from:carol", cursor: first["next_cursor"] });
    expect(e.reason).toBe("INVALID_ARGUMENT");
    for (const args of [{ limit: 0 }, { limit: 201 }, { limit: 2.5 }, { source: "disk" }, { bogus: 1 }]) {
      expect((await m.tools.fails("search", args)).reason).toBe("INVALID_ARGUMENT");
    }
    expect((await m.tools.fails("search", { query: "(unclosed" })).reason).toBe("INVALID_ARGUMENT");
  });

  it("get_message wraps the body, addresses and attachment names, and keeps parts and refs plain", async () => {
    const ref = await refOf("Invoice with attachments");
    const r = await m.tools.ok<{ messages: Json[]; errors: unknown[]; source: string }>("get_message", {
      refs: [ref],
    });
    expect(r.errors).toEqual([]);
    expect(r.source).toBe("server");
    const msg = r.messages[0]!;
    expect(msg["ref"]).toBe(ref);
    expect(msg["account"]).toBe("work");
    expect(msg["subject"]).toEqual(u("Invoice with attachments"));
    expect(msg["from"]).toEqual([{ name: u("Carol"), address: u("carol@example.com") }]);
    expect(msg["body"]).toEqual(u("Two files attached: an invoice and a picture."));
    expect(msg["message_id"]).toEqual(u("<attach1@example.com>"));
    expect(msg["source"]).toBe("server");
    const atts = msg["attachments"] as Json[];
    expect(atts.map((a) => a["filename"])).toEqual([u("invoice.pdf"), u("pixel.png")]);
    expect(atts.map((a) => a["content_type"])).toEqual([u("application/pdf"), u("image/png")]);
    expect(atts.every((a) => typeof a["part"] === "string")).toBe(true);
    // Reading never marks mail read.
    expect(msg["flags"]).not.toContain("seen");
    const again = await m.tools.ok<{ messages: Json[] }>("get_message", { refs: [ref] });
    expect(again.messages[0]!["flags"]).not.toContain("seen");
  });

  it("get_message cuts quotes and signatures unless full, and reports a failed ref in errors", async () => {
    const ref = await refOf("Re: Project thread 2");
    const bad = "m1.not-a-ref";
    const r = await m.tools.ok<{ messages: Json[]; errors: Json[] }>("get_message", { refs: [ref, bad] });
    expect(r.messages).toHaveLength(1);
    const body = (r.messages[0]!["body"] as { untrusted: string }).untrusted;
    expect(body).not.toContain("> Opening message");
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ ref: bad, error: { reason: "INVALID_ARGUMENT" } });
    expect(isUntrusted((r.errors[0]!["error"] as Json)["message"])).toBe(true);
    const full = await m.tools.ok<{ messages: Json[] }>("get_message", { refs: [ref], full: true });
    expect((full.messages[0]!["body"] as { untrusted: string }).untrusted).toContain("> Opening message");
  });

  it("get_message fails when every ref fails, and checks the 1 to 50 bound", async () => {
    expect((await m.tools.fails("get_message", { refs: ["m1.bad"] })).reason).toBe("INVALID_ARGUMENT");
    expect((await m.tools.fails("get_message", { refs: [] })).reason).toBe("INVALID_ARGUMENT");
    const many = Array.from({ length: 51 }, () => "m1.x");
    const e = await m.tools.fails("get_message", { refs: many });
    expect(e.reason).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain("refs");
  });

  it("get_thread returns the thread oldest first with a wrapped thread_id", async () => {
    const ref = await refOf("Re: Project thread 1");
    const r = await m.tools.ok<Json>("get_thread", { ref });
    const msgs = r["messages"] as Json[];
    expect(msgs.map((x) => x["subject"])).toEqual([
      u("Project thread 1"),
      u("Re: Project thread 1"),
      u("Re: Project thread 1"),
    ]);
    expect(r["thread_id"]).toEqual(u("<thread1.msg0@example.com>"));
    expect(r["truncated"]).toBe(false);
    expect(r["omitted_refs"]).toEqual([]);
    expect(r["errors"]).toEqual([]);
    expect(r["source"]).toBe("server");
    expect(msgs.every((x) => typeof x["ref"] === "string")).toBe(true);
  });
});

describe("files", () => {
  it("download_attachment writes a new 0600 file and wraps path, content_type and filename", async () => {
    const ref = await refOf("Invoice with attachments");
    const msg = (await m.tools.ok<{ messages: Json[] }>("get_message", { refs: [ref] })).messages[0]!;
    const part = ((msg["attachments"] as Json[])[0]!["part"] as string) ?? "";
    const r = await m.tools.ok<Json>("download_attachment", { ref, part, dir: saveDir });
    expect(r["filename"]).toEqual(u("invoice.pdf"));
    expect(r["content_type"]).toEqual(u("application/pdf"));
    const p = (r["path"] as { untrusted: string }).untrusted;
    expect(p).toBe(path.join(saveDir, "invoice.pdf"));
    expect(fs.readFileSync(p, "utf8")).toBe("%PDF-1.4 fake invoice\n");
    expect(fs.statSync(p).mode & 0o777).toBe(0o600);
    expect(r["size"]).toBe(fs.statSync(p).size);
    const second = await m.tools.ok<Json>("download_attachment", { ref, part, dir: saveDir });
    expect(second["path"]).toEqual(u(path.join(saveDir, "invoice (2).pdf")));
  });

  it("download_attachment sanitizes a hostile file name and refuses a relative dir", async () => {
    const ref = await refOf("Urgent");
    const msg = (await m.tools.ok<{ messages: Json[] }>("get_message", { refs: [ref] })).messages[0]!;
    const part = (msg["attachments"] as Json[])[0]!["part"] as string;
    const r = await m.tools.ok<Json>("download_attachment", { ref, part, dir: saveDir });
    const p = (r["path"] as { untrusted: string }).untrusted;
    expect(path.dirname(p)).toBe(saveDir);
    expect(path.basename(p).startsWith(".")).toBe(false);
    const e = await m.tools.fails("download_attachment", { ref, part, dir: "relative/dir" });
    expect(e.reason).toBe("INVALID_ARGUMENT");
    expect((await m.tools.fails("download_attachment", { ref, part: "99", dir: saveDir })).reason).toBe(
      "NOT_FOUND",
    );
  });

  it("save_raw_message saves message.eml with content_type message/rfc822", async () => {
    const ref = await refOf("Filler message 1");
    const r = await m.tools.ok<Json>("save_raw_message", { ref, dir: saveDir });
    expect(r["path"]).toBe(path.join(saveDir, "message.eml"));
    expect(r["content_type"]).toBe("message/rfc822");
    const raw = fs.readFileSync(r["path"] as string, "utf8");
    expect(raw).toContain("Subject: Filler message 1");
    expect(r["size"]).toBe(Buffer.byteLength(raw));
    expect(fs.statSync(r["path"] as string).mode & 0o777).toBe(0o600);
  });
});

type Batch = {
  outcomes: Array<{ ref: string; new_ref?: string; error?: Json }>;
  succeeded: number;
  failed: number;
};

describe("organizing", () => {
  it("copy returns one outcome per ref in order, with new_ref, and a wrapped error for the bad one", async () => {
    await m.tools.ok("create_folder", { account: "work", name: "Copies" });
    const a = await refOf("Filler message 2");
    const b = await refOf("Filler message 3");
    const r = await m.tools.ok<Batch>("copy", { refs: [a, "m1.bogus", b], folder: "Copies" });
    expect(r.succeeded).toBe(2);
    expect(r.failed).toBe(1);
    expect(r.outcomes.map((o) => o.ref)).toEqual([a, "m1.bogus", b]);
    expect(typeof r.outcomes[0]!.new_ref).toBe("string");
    expect(r.outcomes[0]!.new_ref).not.toBe(a);
    expect(r.outcomes[1]!.error).toMatchObject({ reason: "INVALID_ARGUMENT" });
    expect(isUntrusted(r.outcomes[1]!.error!["message"])).toBe(true);
    expect(r.outcomes[1]!.new_ref).toBeUndefined();
    expect((await find("in:Copies")).length).toBe(2);
  });

  it("move gives a new ref that reads the message in its new folder", async () => {
    await m.tools.ok("create_folder", { account: "work", name: "Moved" });
    const a = await refOf("Filler message 4");
    const r = await m.tools.ok<Batch>("move", { refs: [a], folder: "Moved" });
    expect(r).toMatchObject({ succeeded: 1, failed: 0 });
    const newRef = r.outcomes[0]!.new_ref!;
    const got = await m.tools.ok<{ messages: Json[] }>("get_message", { refs: [newRef] });
    expect(got.messages[0]!["folder"]).toEqual(u("Moved"));
    // The old ref names nothing any more; when every ref fails the call is an error.
    expect((await m.tools.fails("move", { refs: [a], folder: "Moved" })).reason).toBe("NOT_FOUND");
  });

  it("archive and trash move messages to the archive folder and Trash", async () => {
    const a = await refOf("Filler message 5");
    const archived = await m.tools.ok<Batch>("archive", { refs: [a] });
    expect(archived.succeeded).toBe(1);
    expect((await find("in:Archive")).map((x) => x.subject)).toContainEqual(u("Filler message 5"));
    const t = await m.tools.ok<Batch>("trash", { refs: [archived.outcomes[0]!.new_ref!] });
    expect(t.succeeded).toBe(1);
    expect((await find("in:Trash")).map((x) => x.subject)).toContainEqual(u("Filler message 5"));
  });

  it("set_flags adds and removes system flags and keywords; keywords come back untrusted", async () => {
    const a = await refOf("HTML only newsletter");
    const r = await m.tools.ok<Batch>("set_flags", { refs: [a], add: ["flagged", "$Todo"] });
    expect(r.succeeded).toBe(1);
    let msg = (await m.tools.ok<{ messages: Json[] }>("get_message", { refs: [a] })).messages[0]!;
    expect(msg["flags"]).toContain("flagged");
    expect(msg["keywords"]).toContainEqual(u("$Todo"));
    await m.tools.ok("set_flags", { refs: [a], remove: ["flagged", "$Todo"] });
    msg = (await m.tools.ok<{ messages: Json[] }>("get_message", { refs: [a] })).messages[0]!;
    expect(msg["flags"]).not.toContain("flagged");
    expect(msg["keywords"]).not.toContainEqual(u("$Todo"));
    for (const add of [["\\Deleted"], ["bad keyword"], ["x".repeat(101)]]) {
      expect((await m.tools.fails("set_flags", { refs: [a], add })).reason).toBe("INVALID_ARGUMENT");
    }
  });

  it("set_labels is refused on an IMAP account", async () => {
    const a = await refOf("HTML only newsletter");
    const e = await m.tools.fails("set_labels", { refs: [a], add: ["Work"] });
    expect(e.reason).toBe("UNSUPPORTED");
  });

  it("set_labels advertises the label bound the daemon applies (Gmail's 225 characters)", async () => {
    const tool = (await m.client.listTools()).tools.find((t) => t.name === "set_labels")!;
    const props = tool.inputSchema.properties as Record<string, { items: { maxLength: number } }>;
    expect(MAX_LABEL_LENGTH).toBe(225);
    expect(props["add"]!.items.maxLength).toBe(MAX_LABEL_LENGTH);
    expect(props["remove"]!.items.maxLength).toBe(MAX_LABEL_LENGTH);
    const a = await refOf("HTML only newsletter");
    // The longest label the schema admits passes the daemon's checks too: only the provider refuses it.
    for (const key of ["add", "remove"]) {
      const longest = await m.tools.fails("set_labels", {
        refs: [a],
        [key]: ["l".repeat(MAX_LABEL_LENGTH)],
      });
      expect(longest.reason).toBe("UNSUPPORTED");
      const over = await m.tools.fails("set_labels", {
        refs: [a],
        [key]: ["l".repeat(MAX_LABEL_LENGTH + 1)],
      });
      expect(over.reason).toBe("INVALID_ARGUMENT");
      expect(over.message).toContain(String(MAX_LABEL_LENGTH));
    }
    // The daemon refuses the same length for any client, with the same bound.
    await expect(
      m.env.client.setLabels({ refs: [a], add: ["l".repeat(MAX_LABEL_LENGTH + 1)] }),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringMatching(/add\[0\]/) });
    await expect(
      m.env.client.setLabels({ refs: [a], add: ["l".repeat(MAX_LABEL_LENGTH)] }),
    ).rejects.toMatchObject({ reason: "UNSUPPORTED" });
  });

  it("expunge acts where the policy allows it and reports POLICY_DENIED per ref elsewhere", async () => {
    const work = await refOf("Filler message 2");
    const home = await refOf("Project thread 1", "home");
    const r = await m.tools.ok<Batch>("expunge", { refs: [work, home] });
    expect(r).toMatchObject({ succeeded: 1, failed: 1 });
    expect(r.outcomes[0]!.error).toBeUndefined();
    expect(r.outcomes[1]!.error).toMatchObject({ reason: "POLICY_DENIED" });
    expect((await m.tools.fails("expunge", { refs: [home] })).reason).toBe("POLICY_DENIED");
    expect((await find('subject:"Filler message 2"', ["work"])).map((x) => x.subject)).toEqual([
      u("Filler message 2"),
    ]); // the copy in Copies is still there; the INBOX one is gone
  });

  it("batch tools check the 1 to 500 bound", async () => {
    for (const tool of ["move", "copy", "archive", "trash", "expunge", "set_flags", "set_labels"]) {
      const extra = tool === "move" || tool === "copy" ? { folder: "Archive" } : {};
      expect((await m.tools.fails(tool, { refs: [], ...extra })).reason).toBe("INVALID_ARGUMENT");
      const many = Array.from({ length: 501 }, () => "m1.x");
      expect((await m.tools.fails(tool, { refs: many, ...extra })).reason).toBe("INVALID_ARGUMENT");
    }
  });
});

describe("the cache and the audit log", () => {
  it("cache_status reports the daemon's cache after a sync, with folder names untrusted", async () => {
    const before = await m.tools.ok<{ accounts: Array<{ account: string }> }>("cache_status", {
      accounts: ["home"],
    });
    expect(before.accounts.map((a) => a.account)).toEqual(["home"]);
    await m.env.client.cacheSync();
    const r = await m.tools.ok<{
      accounts: Array<{ account: string; state: string; folders: Json[] }>;
      size_bytes: number;
      max_size_bytes: number;
    }>("cache_status", {});
    expect(r.accounts.map((a) => a.account)).toEqual(["work", "home"]);
    expect(r.size_bytes).toBeGreaterThan(0);
    expect(r.size_bytes).toBeLessThanOrEqual(r.max_size_bytes);
    const inbox = r.accounts[0]!.folders.find(
      (f) => (f["name"] as { untrusted: string }).untrusted === "INBOX",
    );
    expect(inbox).toMatchObject({ role: "inbox", complete: true });
    for (const a of r.accounts) for (const f of a.folders) expect(isUntrusted(f["name"])).toBe(true);
    const res = await m.tools.ok<{ source: string; account_counts: Json[] }>("search", { query: "budget" });
    expect(res.source).toBe("cache");
    expect(res.account_counts.every((c) => c["source"] === "cache")).toBe(true);
    expect((await m.tools.fails("cache_status", { accounts: ["nope"] })).reason).toBe("NOT_FOUND");
  });

  it("the daemon audits MCP calls with the client kind mcp", async () => {
    const { rows } = await m.env.client.readAudit({ action: "search" });
    expect(rows.some((r) => r.client === "mcp")).toBe(true);
    const moves = await m.env.client.readAudit({ action: "move" });
    expect(moves.rows.every((r) => r.client === "mcp")).toBe(true);
  });
});
