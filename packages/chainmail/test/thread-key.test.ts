/**
 * One thread key: the rule itself, the cache migration that rewrites older keys, and a differential
 * run against a real Dovecot where the server path and the cache path must give every message the
 * same thread_id, also after messages moved to another folder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache } from "../src/cache/index.js";
import { SCHEMA_VERSION, THREAD_KEYS_VERSION } from "../src/cache/schema.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { canonicalThreadKey } from "../src/thread-key.js";
import { newMessageSlot } from "../src/cache/arrival-id.js";

describe("canonicalThreadKey", () => {
  it("prefers Gmail's thread id, then the References root, In-Reply-To, the Message-ID", () => {
    expect(canonicalThreadKey({ gmThreadId: 1234n, references: ["<a@x>"] })).toBe("1234");
    expect(canonicalThreadKey({ references: ["<Root@X>", "<b@x>"], inReplyTo: "<b@x>" })).toBe("<root@x>");
    expect(canonicalThreadKey({ inReplyTo: "<B@x> (comment)", messageId: "<c@x>" })).toBe("<b@x>");
    expect(canonicalThreadKey({ messageId: " <C@X> " })).toBe("<c@x>");
  });

  it("takes an id written without its brackets as the id, and other words as they are", () => {
    expect(canonicalThreadKey({ inReplyTo: "Root@Example.com", messageId: "<c@x>" })).toBe(
      "<root@example.com>",
    );
    expect(canonicalThreadKey({ messageId: " bare@x " })).toBe("<bare@x>");
    // Not one word with an @: kept as the sender wrote it (lowercased)
    expect(canonicalThreadKey({ messageId: "Your message" })).toBe("your message");
    expect(canonicalThreadKey({ messageId: "a@b@c" })).toBe("a@b@c");
  });

  it("keys a message without ids on its date, sender and subject, not on where it is", () => {
    const a = canonicalThreadKey({ date: 1000, fromAddress: "Eve@Example.com", subject: "hi" });
    expect(a).toMatch(/^x:[0-9a-f]{24}$/);
    expect(canonicalThreadKey({ date: new Date(1000), fromAddress: "eve@example.com", subject: " hi" })).toBe(
      a,
    );
    expect(canonicalThreadKey({ date: 1001, fromAddress: "eve@example.com", subject: "hi" })).not.toBe(a);
  });
});

/** A cached row as an older version wrote it: its thread key as given, its meta columns from `meta`. */
function putRow(db: CacheDb, uid: number, key: string, meta: Record<string, unknown>): void {
  const id = newMessageSlot(db, 0).id;
  db.prepare(
    "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date) VALUES (?, 1, 'work', ?, ?, 0)",
  ).run(id, uid, key);
  db.prepare(
    "INSERT INTO message_meta (id, message_id, in_reply_to, refs, gm_thread_id, date, from_json, to_json, subject) VALUES (@id, @message_id, @in_reply_to, @refs, @gm, @date, @from_json, @to_json, @subject)",
  ).run({
    id,
    message_id: null,
    in_reply_to: null,
    refs: "[]",
    gm: null,
    date: null,
    from_json: "[]",
    to_json: "[]",
    subject: "",
    ...meta,
  });
}

describe("the cache migration", () => {
  it("rewrites thread keys written by the older rules", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-tk-"));
    const file = path.join(dir, "cache.db");
    let db = openCache(file);
    db.prepare(
      "INSERT INTO folders (id, account, path, path_norm) VALUES (1, 'work', 'INBOX', 'inbox')",
    ).run();
    const put = (uid: number, key: string, meta: Record<string, unknown>) => putRow(db, uid, key, meta);
    put(1, "gm:77", { gm: "77" });
    put(2, "uid:1:2", { date: 5000, from_json: '[{"name":"","address":"eve@example.com"}]', subject: "s" });
    put(3, "<Root@X>", { refs: '["<Root@X>"]', message_id: "<m3@x>" });
    // The state before the migration: it and every later step run again on the next open.
    db.pragma(`user_version = ${THREAD_KEYS_VERSION - 1}`);
    db.close();
    db = openCache(file);
    const keys = db.prepare("SELECT thread_key FROM messages ORDER BY id").pluck().all();
    expect(keys).toEqual([
      "77",
      canonicalThreadKey({ date: 5000, fromAddress: "eve@example.com", subject: "s" }),
      "<root@x>",
    ]);
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("drops Dovecot's address stand-ins and keys bare ids again, on the rows that hold them", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-tk2-"));
    const file = path.join(dir, "cache.db");
    let db = openCache(file);
    db.prepare(
      "INSERT INTO folders (id, account, path, path_norm) VALUES (1, 'work', 'INBOX', 'inbox')",
    ).run();
    const put = (uid: number, key: string, meta: Record<string, unknown>) =>
      putRow(db, uid, key, { message_id: "<m@x>", date: 9000, subject: "s", ...meta });
    put(1, "root@x", { in_reply_to: "root@x" });
    const missing = '[{"name":"Ann","address":"Ann@MISSING_DOMAIN"}]';
    put(2, "stale", {
      message_id: null,
      from_json: missing,
      to_json: `[{"name":"","address":"b@x"},${missing.slice(1)}`,
    });
    put(3, "<kept@x>", { message_id: "<kept@x>" });
    db.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    db.close();
    db = openCache(file);
    expect(db.prepare("SELECT thread_key FROM messages ORDER BY id").pluck().all()).toEqual([
      "<root@x>",
      canonicalThreadKey({ date: 9000, fromAddress: "", subject: "s" }),
      "<kept@x>",
    ]);
    expect(db.prepare("SELECT from_json, to_json FROM message_meta ORDER BY id").all()[1]).toEqual({
      from_json: '[{"name":"Ann","address":""}]',
      to_json: '[{"name":"","address":"b@x"},{"name":"Ann","address":""}]',
    });
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

const at = (n: number) => new Date(Date.UTC(2026, 2, 1, 10, n));
const base = { from: "Eve <eve@example.com>", to: ["alice@example.com"], text: "hello\n" };
const MESSAGES = [
  buildMessage({ ...base, subject: "T root", date: at(0), messageId: "<Root.One@Example.com>" }),
  buildMessage({
    ...base,
    subject: "T irt",
    date: at(1),
    messageId: "<r1@example.com>",
    inReplyTo: "<ROOT.one@example.com>",
  }),
  buildMessage({
    ...base,
    subject: "T refs",
    date: at(2),
    messageId: "<r2@example.com>",
    inReplyTo: "<r1@example.com>",
    references: ["<Root.One@Example.com>", "<r1@example.com>"],
  }),
  buildMessage({ ...base, subject: "T alone", date: at(3), messageId: "<alone@example.com>" }),
  buildMessage({ ...base, subject: "T noid", date: at(4), messageId: "<x@x>" }).replace(
    /^Message-ID: .*\r\n/m,
    "",
  ),
];

let env: MailEnv;
beforeAll(async () => {
  env = await startMailEnv();
  for (const m of MESSAGES) await env.dv.appendMessage("alice", "INBOX", m);
});
afterAll(async () => {
  await env?.stop();
});

type Ids = Record<string, string>;
const idsBy = async (source: "server" | "cache"): Promise<Ids> => {
  const res = await env.client.search({ query: "subject:T", accounts: ["work"], source });
  return Object.fromEntries(res.rows.map((r) => [r.subject, r.thread_id]));
};
const threadCount = async (source: "server" | "cache") =>
  (await env.client.search({ query: "subject:T", accounts: ["work"], source, threads: true })).rows.length;

describe("server path and cache path agree", () => {
  let before: Ids;
  it("on every message's thread_id, on search, get_message and collapsing", async () => {
    await env.client.cacheSync({ accounts: ["work"] });
    before = await idsBy("server");
    expect(Object.keys(before).sort()).toEqual(["T alone", "T irt", "T noid", "T refs", "T root"]);
    expect(await idsBy("cache")).toEqual(before);
    expect(before["T irt"]).toBe("<root.one@example.com>");
    expect(before["T refs"]).toBe("<root.one@example.com>");
    expect(before["T root"]).toBe("<root.one@example.com>");
    expect(before["T noid"]).toMatch(/^x:/);
    expect(await threadCount("server")).toBe(3);
    expect(await threadCount("cache")).toBe(3);
    const rows = (await env.client.search({ query: "subject:T", accounts: ["work"], source: "server" })).rows;
    const got = await env.client.getMessages({ refs: rows.map((r) => r.ref) });
    for (const m of got.messages) expect(m.thread_id).toBe(before[m.subject]);
    const t = await env.client.getThread({ ref: rows.find((r) => r.subject === "T refs")!.ref });
    expect(t.thread_id).toBe(before["T root"]);
    expect(t.messages.map((m) => m.subject).sort()).toEqual(["T irt", "T refs", "T root"]);
  });

  it("after messages moved to another folder", async () => {
    const rows = (await env.client.search({ query: "subject:T", accounts: ["work"], source: "server" })).rows;
    const moving = rows.filter((r) => ["T irt", "T noid"].includes(r.subject)).map((r) => r.ref);
    const moved = await env.client.move({ refs: moving, folder: "Archive" });
    expect(moved.succeeded).toBe(2);
    await env.client.cacheSync({ accounts: ["work"] });
    const after = await idsBy("server");
    expect(after).toEqual(before);
    expect(await idsBy("cache")).toEqual(before);
    const folders = (
      await env.client.search({ query: "subject:T in:archive", accounts: ["work"], source: "cache" })
    ).rows
      .map((r) => r.subject)
      .sort();
    expect(folders).toEqual(["T irt", "T noid"]);
    expect(await threadCount("cache")).toBe(3);
  });
});
