import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putBody } from "../src/cache/body-store.js";
import {
  CursorError,
  backfillBodies,
  cacheCanAnswerQuery,
  cacheSizeBytes,
  cacheStatus,
  evictBodies,
  getFolder,
  searchCache,
  syncAccount,
  syncFolder,
} from "../src/cache/index.js";
import { parseQuery } from "../src/query/index.js";
import { type CacheEnv, USER, startCacheEnv } from "./support/cache-env.js";
import { generateCorpus } from "../src/testing/corpus.js";

const A = "personal";
let env: CacheEnv;
const corpus = generateCorpus({ threads: 3, fillers: 6, hugeBytes: 400 * 1024 });
const search = (q: string, o: Parameters<typeof searchCache>[2] = {}) =>
  searchCache(env.db, parseQuery(q), o);
const ids = (q: string, o: Parameters<typeof searchCache>[2] = {}) =>
  search(q, { limit: 200, ...o })
    .rows.map((r) => r.message_id)
    .sort();

/** Checks the invariants a half-done sync must never break. */
function assertConsistent() {
  const db = env.db;
  const msgs = (db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
  // Every message row has exactly one FTS row: a MATCH on its rowid set finds each once
  const fts = (
    db.prepare("SELECT count(*) AS n FROM messages_fts WHERE rowid IN (SELECT id FROM messages)").get() as {
      n: number;
    }
  ).n;
  // After an FTS query: FTS5 checks its per-connection copy of the index's structure against
  // other connections' commits (the header writer's thread, src/cache/writer.ts) when a query or
  // write starts, and its integrity check reads that copy without checking it first
  expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  expect(fts).toBe(msgs);
  const orphans = (
    db
      .prepare("SELECT count(*) AS n FROM bodies WHERE message_rowid NOT IN (SELECT id FROM messages)")
      .get() as { n: number }
  ).n;
  expect(orphans).toBe(0);
  const meta = (db.prepare("SELECT count(*) AS n FROM message_meta").get() as { n: number }).n;
  expect(meta).toBe(msgs);
}

beforeAll(async () => {
  env = await startCacheEnv();
  let t = Date.UTC(2024, 2, 1, 9);
  for (const m of corpus) {
    await env.append("INBOX", m.raw, m.flags ?? [], new Date(t));
    t += 3600_000;
  }
});
afterAll(async () => {
  await env?.close();
});

describe("initial sync", () => {
  it("caches every message's headers, flags and structure and marks the folder complete", async () => {
    const c = await env.client();
    const r = await syncFolder(env.db, c, A, "INBOX", { batchSize: 4 });
    expect(r).toMatchObject({ added: corpus.length, removed: 0, uidvalidityChanged: false, mode: "initial" });
    const f = getFolder(env.db, A, "INBOX");
    expect(f).toMatchObject({
      role: "inbox",
      complete: 1,
      server_count: corpus.length,
      uidnext: corpus.length + 1,
    });
    expect(f?.highestmodseq).toMatch(/^\d+$/);
    assertConsistent();

    const uni = search("subject:Köln").rows;
    expect(uni).toHaveLength(1);
    expect(uni[0]?.subject).toBe("Grüße aus Köln — 日本語のテスト ✓");
    expect(uni[0]?.from).toEqual({ name: "Jürgen Müller", address: "juergen@example.com" });

    const att = search("filename:invoice.pdf").rows;
    expect(att.map((x) => x.message_id)).toEqual(["<attach1@example.com>"]);
    expect(att[0]?.attachments.map((a) => a.filename)).toEqual(["invoice.pdf", "pixel.png"]);
    expect(ids("has:attachment")).toEqual([
      "<attach1@example.com>",
      "<html1@example.com>",
      "<huge1@example.com>",
      "<inject1@example.com>",
    ]);
    expect(ids("is:read")).toEqual([
      "<filler2@example.com>",
      "<filler4@example.com>",
      "<filler6@example.com>",
    ]);

    // Threads share a key and collapse to their newest message
    const t1 = search("subject:thread").rows;
    expect(new Set(t1.map((x) => x.thread_key)).size).toBe(3);
    const collapsed = search("subject:thread", { threads: true });
    expect(collapsed.count).toBe(3);
    expect(collapsed.rows.map((x) => [x.message_id, x.thread_count])).toEqual([
      ["<thread3.msg2@example.com>", 3],
      ["<thread2.msg2@example.com>", 3],
      ["<thread1.msg2@example.com>", 3],
    ]);
  });

  it("syncs every folder of an account with its role", async () => {
    const c = await env.client();
    const results = await syncAccount(env.db, c, A);
    expect(results.map((r) => r.folder).sort()).toEqual([
      "Archive",
      "Drafts",
      "INBOX",
      "Junk",
      "Sent",
      "Trash",
    ]);
    const status = cacheStatus(env.db, { accounts: [A] });
    const trash = status.accounts[0]?.folders.find((f) => f.name === "Trash");
    expect(trash).toMatchObject({ role: "trash", messages: 0, complete: true, backfill: 1 });
  });
});

describe("bodies", () => {
  it("backfills bodies within the daily budget, newest first", async () => {
    const c = await env.client();
    const tight = await backfillBodies(env.db, c, A, "INBOX", { dailyBudgetBytes: 3000 });
    expect(tight.budgetExhausted).toBe(true);
    expect(tight.bytes).toBeLessThanOrEqual(3000);
    expect(tight.remaining).toBeGreaterThan(0);
    // What remains is the folder's messages without a body (read from its counters)
    const pending = () =>
      (
        env.db
          .prepare(
            "SELECT count(*) AS n FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.account = ? AND f.path = 'INBOX' AND m.body_state = 0",
          )
          .get(A) as { n: number }
      ).n;
    expect(tight.remaining).toBe(pending());
    const st = cacheStatus(env.db, { accounts: [A], dailyBudgetBytes: 3000 }).accounts[0];
    expect(st?.download_today.bytes).toBe(tight.bytes);
    const inbox = st?.folders.find((f) => f.name === "INBOX");
    expect(inbox?.body_coverage).toBeGreaterThan(0);
    expect(inbox?.body_coverage).toBeLessThan(1);
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("budget")).complete).toBe(false);
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("from:alice is:unread")).complete).toBe(true);

    const all = await backfillBodies(env.db, c, A, "INBOX", {
      dailyBudgetBytes: 50 * 1024 * 1024,
      wholeMessageMaxBytes: 64 * 1024,
    });
    expect(all.remaining).toBe(0);
    expect(pending()).toBe(0);
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("budget")).complete).toBe(true);
    assertConsistent();
  });

  it("derives text from HTML-only mail with an attachment, and reads huge mail by its text part", () => {
    expect(ids("quarterly")).toEqual(["<html1@example.com>"]);
    expect(ids('"Monthly news"')).toEqual(["<html1@example.com>"]);
    expect(ids('"long line of body text"')).toEqual(["<huge1@example.com>"]);
    expect(ids("budget").length).toBe(9);
  });

  it("makes snippets of at most 200 characters around the match", () => {
    const r = search("repeats", { snippets: true }).rows[0];
    expect(r?.snippet?.length).toBeLessThanOrEqual(200);
    expect(r?.snippet).toMatch(/repeats/);
    expect(search("quarterly", { snippets: true }).rows[0]?.snippet).toMatch(/quarterly report is attached/);
  });
});

describe("search paging", () => {
  it("pages newest first with an opaque cursor bound to its query", () => {
    const first = search("", { limit: 5 });
    expect(first.count).toBe(corpus.length);
    expect(first.rows).toHaveLength(5);
    const seen = new Set(first.rows.map((r) => r.message_id));
    let cursor = first.next_cursor;
    let pages = 1;
    while (cursor) {
      const p = search("", { limit: 5, cursor });
      for (const r of p.rows) seen.add(r.message_id);
      cursor = p.next_cursor;
      pages++;
    }
    expect(seen.size).toBe(corpus.length);
    expect(pages).toBe(Math.ceil(corpus.length / 5));
    const dates = search("", { limit: 200 }).rows.map((r) => r.received);
    expect([...dates].sort().reverse()).toEqual(dates);

    expect(() => search("from:alice", { cursor: first.next_cursor })).toThrow(CursorError);
    expect(() => search("", { cursor: first.next_cursor, threads: true })).toThrow(CursorError);
    expect(() => search("", { cursor: "garbage!" })).toThrow(CursorError);
    // The same query written differently is the same query
    const a = search("is:starred OR from:bob", { limit: 1 });
    if (a.next_cursor)
      expect(search("{is:flagged from:bob}", { limit: 1, cursor: a.next_cursor }).rows.length).toBe(1);
  });

  it("counts without rows, per account", () => {
    const r = search("from:alice", { countOnly: true });
    expect(r.rows).toEqual([]);
    expect(r.count).toBe(6);
    expect(r.account_counts).toEqual({ [A]: 6 });
    expect(search("from:alice", { accounts: ["other"] }).count).toBe(0);
  });
});

describe("incremental sync", () => {
  it("picks up flag changes, expunges and new mail through CONDSTORE", async () => {
    const w = await env.client();
    await w.mailboxOpen("INBOX");
    const uids = (await w.search({ all: true }, { uid: true })) || [];
    await w.messageFlagsAdd(String(uids[0]), ["\\Flagged", "$Work"], { uid: true });
    await w.messageDelete(String(uids[1]), { uid: true });
    await w.mailboxClose();
    const fresh = (await import("../src/testing/corpus.js")).buildMessage({
      from: "Dana <dana@example.com>",
      to: ["alice@example.com"],
      subject: "Brand new arrival",
      date: new Date(),
      messageId: "<new1@example.com>",
      text: "hello\n",
    });
    await env.append("INBOX", fresh, ["\\Seen"], new Date(Date.UTC(2024, 5, 1)));

    const c = await env.client();
    const r = await syncFolder(env.db, c, A, "INBOX");
    expect(r.mode).toBe("condstore");
    expect(r).toMatchObject({ added: 1, removed: 1 });
    expect(r.updated).toBeGreaterThanOrEqual(1);
    expect(ids("is:flagged label:$work")).toEqual(["<thread1.msg0@example.com>"]);
    expect(ids("rfc822msgid")).toEqual([]);
    expect(ids("thread1 subject:project").includes("<thread1.msg1@example.com>")).toBe(false);
    expect(ids("subject:arrival")).toEqual(["<new1@example.com>"]);
    assertConsistent();
  });

  it("uses QRESYNC VANISHED when the client enabled it", async () => {
    const w = await env.client();
    await w.mailboxOpen("INBOX");
    const uids = (await w.search({ all: true }, { uid: true })) || [];
    await w.messageDelete(String(uids[uids.length - 1]), { uid: true });
    await w.messageFlagsAdd(String(uids[2]), ["\\Answered"], { uid: true });
    await w.logout();
    const c = await env.client({ qresync: true });
    const r = await syncFolder(env.db, c, A, "INBOX");
    expect(r.mode).toBe("qresync");
    // VANISHED (EARLIER) may also name UIDs expunged before our HIGHESTMODSEQ (RFC 7162 allows it)
    expect(r.vanished).toBeGreaterThanOrEqual(1);
    expect(r.removed).toBe(1);
    expect(ids("subject:arrival")).toEqual([]);
    expect(ids("is:answered")).toEqual(["<thread2.msg0@example.com>"]);
    const f = getFolder(env.db, A, "INBOX");
    expect(f?.complete).toBe(1);
    expect(f?.server_count).toBe(
      (env.db.prepare("SELECT count(*) AS n FROM messages WHERE folder_id = ?").get(f?.id) as { n: number })
        .n,
    );
  });
});

describe("recovery", () => {
  it("drops and refetches a folder whose UIDVALIDITY changed", async () => {
    const c = await env.client();
    await c.mailboxCreate("Work");
    for (const m of corpus.slice(0, 3)) await env.append("Work", m.raw);
    await syncFolder(env.db, c, A, "Work");
    const before = getFolder(env.db, A, "Work");
    expect(before?.server_count).toBe(3);
    env.dovecot.doveadm(["mailbox", "update", "-u", USER, "--uid-validity", "4242", "Work"]);
    const r = await syncFolder(env.db, c, A, "Work");
    expect(r.uidvalidityChanged).toBe(true);
    expect(r.added).toBe(3);
    const after = getFolder(env.db, A, "Work");
    expect(after?.uidvalidity).toBe("4242");
    expect(search("in:work").count).toBe(3);
    assertConsistent();
  });

  it("survives a connection killed mid-sync, and the next sync completes", async () => {
    await env.dovecot.appendMessages(
      USER,
      "Archive",
      corpus.map((m) => ({ raw: m.raw })),
    );
    const c = await env.client();
    let batches = 0;
    await expect(
      syncFolder(env.db, c, A, "Archive", {
        batchSize: 3,
        onBatch: () => {
          batches++;
          if (batches === 2) c.close();
        },
      }),
    ).rejects.toThrow();
    const cut = getFolder(env.db, A, "Archive");
    expect(cut?.complete).toBe(0);
    expect(cut?.last_error).toMatch(/\S/);
    expect(search("in:archive").count).toBe(6);
    expect(cacheCanAnswerQuery(env.db, A, parseQuery("in:archive")).complete).toBe(false);
    assertConsistent();

    const c2 = await env.client();
    const r = await syncFolder(env.db, c2, A, "Archive");
    expect(r.added).toBe(corpus.length);
    expect(getFolder(env.db, A, "Archive")).toMatchObject({
      complete: 1,
      last_error: null,
      server_count: corpus.length,
    });
    expect(search("in:archive").count).toBe(corpus.length);
    assertConsistent();
  });
});

describe("deleted folders", () => {
  it("drops a folder the server no longer lists on the next account sync", async () => {
    const c = await env.client();
    await c.mailboxCreate("Gone");
    await env.append("Gone", corpus[0]?.raw ?? "");
    await syncAccount(env.db, c, A);
    expect(search("in:gone").count).toBe(1);
    await c.mailboxDelete("Gone");
    await syncAccount(env.db, c, A);
    expect(getFolder(env.db, A, "Gone")).toBeUndefined();
    expect(search("in:gone").count).toBe(0);
    assertConsistent();
  });
});

describe("eviction", () => {
  it("evicts the oldest bodies first to fit the bound, keeping them searchable", async () => {
    // Stored compressed (src/cache/body-store.ts), this corpus' bodies share one page and evicting
    // them all would free none: the oldest gets text that does not compress, as some mail has
    const oldestId = env.db
      .prepare(
        "SELECT b.message_rowid FROM bodies b JOIN messages m ON m.id = b.message_rowid ORDER BY m.internal_date LIMIT 1",
      )
      .pluck()
      .get() as number;
    putBody(env.db, oldestId, randomBytes(12_000).toString("base64"), Date.now());
    const size = cacheSizeBytes(env.db);
    const oldest = env.db
      .prepare(
        "SELECT x.message_id FROM bodies b JOIN messages m ON m.id = b.message_rowid JOIN message_meta x ON x.id = m.id ORDER BY m.internal_date LIMIT 1",
      )
      .get() as { message_id: string };
    const n = await evictBodies(env.db, size - 4096);
    expect(n).toBeGreaterThan(0);
    expect(cacheSizeBytes(env.db)).toBeLessThanOrEqual(size - 4096);
    const state = env.db
      .prepare(
        "SELECT m.body_state FROM messages m JOIN message_meta x ON x.id = m.id WHERE x.message_id = ? ORDER BY m.id LIMIT 1",
      )
      .get(oldest.message_id) as { body_state: number };
    expect(state.body_state).toBe(2);
    expect(ids("budget").length).toBeGreaterThan(0);
    expect(ids('"long line of body text"')).toEqual(["<huge1@example.com>"]);
    assertConsistent();
    const st = cacheStatus(env.db, { maxSizeBytes: size - 4096 });
    expect(st.size_bytes).toBeLessThanOrEqual(st.max_size_bytes);
  });
});
