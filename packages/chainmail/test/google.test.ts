/**
 * Provider `google` against the X-GM-EXT-1 test server (src/testing/gmail.ts): search via X-GM-RAW
 * in All Mail, set_labels add/remove with system labels, archive removing \Inbox, and get_thread
 * following X-GM-THRID.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImapFlow } from "imapflow";
import { newMailFolder } from "../src/cache/index.js";
import { DaemonClient } from "../src/client/index.js";
import { type Daemon, startDaemon } from "../src/daemon/server.js";
import { generateCorpus } from "../src/testing/corpus.js";
import { type GmailServer, startGmail } from "../src/testing/gmail.js";
import { gmailHome } from "./support/gmail-home.js";

const corpus = generateCorpus({ threads: 2, fillers: 2, hugeBytes: 0 });
const MIXED_CASE = [
  "From: Mixed <mixed@example.com>",
  "To: gina@example.com",
  "Subject: Mixed case flags",
  "Message-ID: <mixed-case@example.com>",
  "Date: Tue, 2 Dec 2025 09:00:00 +0000",
  "",
  "flags in any case",
  "",
].join("\r\n");
let gm: GmailServer;
let dir: string;
let daemon: Daemon;
let client: DaemonClient;

beforeAll(async () => {
  gm = await startGmail({
    user: "gina",
    password: "gina-pw",
    inbox: [
      ...corpus.map((m) => ({ raw: m.raw, flags: m.flags ?? [] })),
      // A server that keeps flags as they were sent: a system flag in capitals, a keyword in mixed case.
      { raw: MIXED_CASE, flags: ["\\SEEN", "$Label1"] },
    ],
  });
  const made = gmailHome("cm-gmail-", gm.port);
  dir = made.dir;
  const home = made.home;
  daemon = await startDaemon({ home, log: () => undefined });
  client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  // A first start holds the account's server settings and policy until the owner confirms them once.
  await client.call("policy.confirm", {});
});
afterAll(async () => {
  client?.close();
  await daemon?.stop();
  await gm?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const labelsOf = async (ref: string) => (await client.getMessages({ refs: [ref] })).messages[0]!.labels;

describe("Google accounts", () => {
  it("searches All Mail with X-GM-RAW", async () => {
    const res = await client.search({ query: 'subject:"project thread 1"' });
    expect(res.source).toBe("server");
    expect(res.count).toBe(3);
    expect(new Set(res.rows.map((r) => r.folder))).toEqual(new Set(["[Gmail]/All Mail"]));
    const invoice = await client.search({ query: "from:carol has:attachment" });
    expect(invoice.rows.map((r) => r.subject)).toEqual(["Invoice with attachments"]);
    const none = await client.search({ query: "-in:inbox" });
    expect(none.count).toBe(0);
    // Replies share their thread's X-GM-THRID, which is the row's thread id.
    const ids = new Set(res.rows.map((r) => r.thread_id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^[0-9]+$/);
  });

  it("adds and removes labels, system labels included", async () => {
    const ref = (await client.search({ query: "from:carol" })).rows[0]!.ref;
    expect(await labelsOf(ref)).toEqual(["\\Inbox"]);
    const added = await client.setLabels({ refs: [ref], add: ["Receipts", "\\important", "\\Starred"] });
    expect(added).toMatchObject({ succeeded: 1, failed: 0 });
    expect(added.outcomes[0]!.new_ref).toBe(ref);
    expect(await labelsOf(ref)).toEqual(["Receipts", "\\Important", "\\Inbox", "\\Starred"]);
    expect((await client.search({ query: "label:receipts" })).rows.map((r) => r.ref)).toEqual([ref]);
    await client.setLabels({ refs: [ref], remove: ["Receipts", "\\Important"] });
    expect(await labelsOf(ref)).toEqual(["\\Inbox", "\\Starred"]);
    await expect(client.setLabels({ refs: [ref], add: ["\\Trash"] })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
  });

  it("archives by removing the \\Inbox label", async () => {
    const rows = (await client.search({ query: "subject:filler" })).rows;
    expect(rows.length).toBe(2);
    const res = await client.archive({ refs: [rows[0]!.ref] });
    expect(res).toMatchObject({ succeeded: 1, failed: 0 });
    expect(await labelsOf(rows[0]!.ref)).toEqual([]);
    const inInbox = (await client.search({ query: "in:inbox subject:filler" })).rows.map((r) => r.ref);
    expect(inInbox).toEqual([rows[1]!.ref]);
  });

  it("get_thread follows X-GM-THRID", async () => {
    const row = (await client.search({ query: 'subject:"project thread 2"' })).rows[0]!;
    const t = await client.getThread({ ref: row.ref });
    expect(t.thread_id).toBe(row.thread_id);
    expect(t.messages.map((m) => m.subject)).toEqual([
      "Project thread 2",
      "Re: Project thread 2",
      "Re: Project thread 2",
    ]);
    expect(t.messages.every((m) => m.thread_id === row.thread_id && m.source === "server")).toBe(true);
  });

  it("caches All Mail alone, with labels: one row per message, in: and label: read from the labels", async () => {
    const query = 'subject:"project thread 1"';
    const server = await client.search({ query, source: "server" });
    expect(server.count).toBe(3);
    // Label folders are views of All Mail on Gmail: the cache neither syncs them nor counts a
    // labelled message once per label.
    await client.createFolder({ account: "gmail", name: "Projects" });
    await client.setLabels({ refs: server.rows.map((r) => r.ref), add: ["Projects"] });
    const [report] = (await client.cacheSync({ accounts: ["gmail"] })).accounts;
    expect(report).toMatchObject({ ok: true });
    const status = await client.cacheStatus({ accounts: ["gmail"] });
    expect(status.accounts[0]!.folders.map((f) => f.name).sort()).toEqual([
      "[Gmail]/All Mail",
      "[Gmail]/Spam",
      "[Gmail]/Trash",
    ]);
    const cached = await client.search({ query, source: "cache" });
    expect(cached).toMatchObject({ source: "cache", count: 3, partial: [] });
    expect(cached.rows.map((r) => r.ref).sort()).toEqual(server.rows.map((r) => r.ref).sort());
    const inProjects = await client.search({ query: `in:projects ${query}`, source: "cache" });
    expect(inProjects.rows.map((r) => r.ref).sort()).toEqual(server.rows.map((r) => r.ref).sort());
    expect((await client.search({ query: "label:projects", source: "cache" })).count).toBe(3);
    // in:inbox is the \Inbox label: the cache and the server agree on how many messages have it.
    const inboxServer = await client.search({ query: "in:inbox", source: "server", count_only: true });
    const inboxCache = await client.search({ query: "in:inbox", source: "cache", count_only: true });
    expect(inboxCache.count).toBe(inboxServer.count);
    expect(inboxCache.count).toBeGreaterThan(0);
  });

  it("watches All Mail for new mail, where the cache keeps it", async () => {
    const imap = new ImapFlow({
      host: "127.0.0.1",
      port: gm.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: "gina", pass: "gina-pw" },
      logger: false,
    });
    await imap.connect();
    try {
      expect(await newMailFolder(imap)).toBe("[Gmail]/All Mail");
    } finally {
      await imap.logout();
    }
  });
});

describe("flags in any case", () => {
  const query = 'subject:"mixed case flags"';
  const rowOf = async (source: "server" | "cache") => {
    const r = await client.search({ query, source });
    expect(r.source).toBe(source);
    return r.rows[0]!;
  };

  it("read the same on the server path and from the cache", async () => {
    await client.cacheSync({ accounts: ["gmail"] });
    const server = await rowOf("server");
    const cached = await rowOf("cache");
    expect(cached.ref).toBe(server.ref);
    expect({ flags: server.flags, keywords: server.keywords }).toEqual({
      flags: ["seen"],
      keywords: ["$Label1"],
    });
    expect({ flags: cached.flags, keywords: cached.keywords }).toEqual({
      flags: ["seen"],
      keywords: ["$Label1"],
    });
    for (const source of ["server", "cache"] as const) {
      const read = await client.search({ query: `${query} is:read`, source });
      const unread = await client.search({ query: `${query} is:unread`, source });
      expect([source, read.count, unread.count]).toEqual([source, 1, 0]);
    }
  });

  it("set_flags removes and adds a keyword whatever case the server keeps it in", async () => {
    const ref = (await rowOf("server")).ref;
    const message = async () => {
      const m = (await client.getMessages({ refs: [ref] })).messages[0]!;
      expect(m.source).toBe("server");
      return { flags: m.flags, keywords: m.keywords };
    };
    expect(await client.setFlags({ refs: [ref], remove: ["$label1"] })).toMatchObject({ succeeded: 1 });
    expect(await message()).toEqual({ flags: ["seen"], keywords: [] });
    await client.setFlags({ refs: [ref], add: ["$LABEL1"] });
    await client.setFlags({ refs: [ref], add: ["$label1", "SEEN"] });
    expect(await message()).toEqual({ flags: ["seen"], keywords: ["$LABEL1"] });
    await client.cacheSync({ accounts: ["gmail"] });
    const cached = await rowOf("cache");
    expect({ flags: cached.flags, keywords: cached.keywords }).toEqual({
      flags: ["seen"],
      keywords: ["$LABEL1"],
    });
    await client.setFlags({ refs: [ref], remove: ["$Label1"] });
    expect(await message()).toEqual({ flags: ["seen"], keywords: [] });
  });
});
