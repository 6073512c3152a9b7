/**
 * What cache.db keeps on disk (issue 34: at most a fifth of the Maildir): a pass of the daemon
 * leaves no WAL behind (a TRUNCATE checkpoint in the checkpoint worker when the sync settles), a
 * search during that checkpoint answers as before and after it, and a Reply-To that is From is
 * stored as a marker instead of From's JSON again, every message read from the cache as the
 * server reads it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putBody } from "../src/cache/body-store.js";
import { WAL_LIMIT_BYTES, truncateWal } from "../src/cache/checkpoint.js";
import { type CacheDb, openCache } from "../src/cache/index.js";
import { stmt } from "../src/cache/schema.js";
import { searchCache } from "../src/cache/search.js";
import {
  REPLY_TO_IS_FROM,
  addrJson,
  ensureFolder,
  type FtsWrite,
  indexMessage,
  replyToJson,
  runFtsWrites,
  storedReplyTo,
  upsertMessage,
} from "../src/cache/store.js";
import { parseQuery } from "../src/query/index.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const walBytes = (file: string) => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);

/** A deterministic text of about `bytes` bytes, so the cache writes pages enough to grow the WAL. */
function filler(seed: number, bytes: number): string {
  let x = seed * 2654435761 + 1;
  const words: string[] = [];
  for (let n = 0; n < bytes; ) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const w = `w${(x % 40_000).toString(36)}`;
    words.push(w);
    n += w.length + 1;
  }
  return words.join(" ");
}

function message(i: number, extra: string[] = []): string {
  return [
    "From: Carol Ray <carol@example.org>",
    "To: alice@example.com",
    ...extra,
    `Subject: footprint ${i}`,
    `Date: ${new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toUTCString()}`,
    `Message-ID: <footprint-${i}@example.org>`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Number ${i}: tag${i % 7} ${filler(i, 6 * 1024)}`,
    "",
  ].join("\r\n");
}

describe("a pass of the daemon against Dovecot", () => {
  let env: MailEnv;
  const N = 120;
  beforeAll(async () => {
    env = await startMailEnv();
    await env.dv.appendMessages("alice", "INBOX", [
      // No Reply-To: the server's ENVELOPE says From
      { raw: message(0), flags: [] },
      { raw: message(1, ["Reply-To: Help Desk <help@example.org>"]), flags: [] },
      // A Reply-To header that is From
      { raw: message(2, ["Reply-To: Carol Ray <carol@example.org>"]), flags: [] },
      { raw: message(3, ["Reply-To: carol@example.org, help@example.org"]), flags: [] },
      ...Array.from({ length: N - 4 }, (_, i) => ({ raw: message(i + 4), flags: [] })),
    ]);
  }, 120_000);
  afterAll(async () => {
    await env?.stop();
  });

  it("leaves no WAL, and reads every message from the cache as the server does", async () => {
    const refs = (
      await env.client.search({ query: "subject:footprint", limit: 200, accounts: ["work"] })
    ).rows.map((r) => r.ref);
    expect(refs).toHaveLength(N);
    const server = await env.client.getMessages({ refs: refs.slice(-4) });
    expect(server.source).toBe("server");
    // (a Reply-To header that is From reads [] as no header does: IMAP's ENVELOPE, which both paths
    // read, cannot tell them apart)
    expect(server.messages.map((m) => m.reply_to.map((a) => a.address))).toEqual([
      ["carol@example.org", "help@example.org"],
      [],
      ["help@example.org"],
      [],
    ]);

    const { accounts } = await env.client.cacheSync({ accounts: ["work"] });
    expect(accounts[0]).toMatchObject({ ok: true, added: N, bodies: N });
    // The pass wrote about a megabyte of bodies and index through the WAL, and cut it at its end
    expect(walBytes(env.home.cacheFile)).toBe(0);

    const cached = await env.client.getMessages({ refs: refs.slice(-4) });
    expect(cached.messages.map((m) => m.source)).toEqual(["cache", "cache", "cache", "cache"]);
    const same = (ms: typeof server.messages) =>
      [0, 1, 2, 3].map((i) => ({ ...ms[i], source: "x", body: ms[i]?.body.trim() }));
    expect(same(cached.messages)).toEqual(same(server.messages));

    const db = new Database(env.home.cacheFile, { readonly: true });
    try {
      const stored = db
        .prepare(
          "SELECT x.reply_to_json FROM message_meta x JOIN messages m ON m.id = x.id WHERE x.subject IN ('footprint 0', 'footprint 1', 'footprint 2', 'footprint 3') ORDER BY x.subject",
        )
        .pluck()
        .all();
      expect(stored).toEqual([
        REPLY_TO_IS_FROM,
        '[{"name":"Help Desk","address":"help@example.org"}]',
        REPLY_TO_IS_FROM,
        '[{"name":"","address":"carol@example.org"},{"name":"","address":"help@example.org"}]',
      ]);
    } finally {
      db.close();
    }
  });
});

describe("Reply-To stored beside From", () => {
  it("reads back as the list it was, [] when it is From (marker or a copy written before)", () => {
    const address = fc.record({
      name: fc.oneof(fc.constant(""), fc.string()),
      address: fc.oneof(fc.constant(""), fc.emailAddress(), fc.string()),
    });
    const list = fc.array(address, { maxLength: 3 });
    fc.assert(
      fc.property(list, list, fc.boolean(), (from, replyToOrNot, same) => {
        const replyTo = same ? from : replyToOrNot;
        const fromJson = addrJson(from);
        const json = replyToJson(replyTo, fromJson);
        const expected = addrJson(replyTo) === fromJson ? [] : JSON.parse(addrJson(replyTo));
        expect(storedReplyTo(json, fromJson)).toEqual(expected);
        // A row written before the marker holds the JSON itself, and reads the same
        expect(storedReplyTo(addrJson(replyTo), fromJson)).toEqual(expected);
        expect(json === REPLY_TO_IS_FROM).toBe(addrJson(replyTo) === fromJson);
      }),
    );
  });
});

describe("the WAL cut when the cache settles", () => {
  const NOW = new Date("2026-01-01T00:00:00Z");
  let dir: string;
  let file: string;
  let db: CacheDb;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-footprint-"));
    file = path.join(dir, "cache.db");
    db = openCache(file);
  });
  afterAll(() => {
    db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const QUERIES = [
    "",
    "is:unread",
    "from:nonexistent",
    "subject:report",
    "meeting OR invoice",
    "has:attachment",
  ];
  const answer = (d: CacheDb, q: string) => {
    const r = searchCache(d, parseQuery(q), { limit: 50, accounts: ["a"], now: NOW });
    return { count: r.count, uids: r.rows.map((x) => x.uid) };
  };

  it("copies the WAL into cache.db and cuts it while searches answer as before", async () => {
    expect(db.pragma("journal_size_limit", { simple: true })).toBe(WAL_LIMIT_BYTES);
    // Written straight through the connection (no checkpoint asked for): the WAL holds it all
    const n = 800;
    const folder = ensureFolder(db, "a", "INBOX", "inbox");
    for (let from = 0; from < n; from += 200) {
      const bodies: { id: number; text: string }[] = [];
      db.transaction(() => {
        const fts: FtsWrite[] = [];
        for (let i = from; i < from + 200; i++) {
          const { msg, text } = syncedMailboxMessage(i, n, i + 1, NOW);
          bodies.push({ id: upsertMessage(db, folder, msg, null, fts), text });
        }
        runFtsWrites(fts);
      })();
      db.transaction(() => {
        for (const { id, text } of bodies) {
          putBody(db, id, text, 1);
          stmt(db, "UPDATE messages SET body_state = 1 WHERE id = ?").run(id);
        }
        runFtsWrites(bodies.map(({ id, text }) => ({ id, write: () => indexMessage(db, id, text) })));
      })();
    }
    db.prepare("UPDATE folders SET complete = 1, last_sync = ?, server_count = ?").run(NOW.getTime(), n);
    expect(walBytes(file)).toBeGreaterThan(WAL_LIMIT_BYTES);
    const expected = QUERIES.map((q) => answer(db, q));
    expect(expected[0]?.count).toBe(n);
    expect(expected.some((e, i) => i > 0 && e.count > 0 && e.count < n)).toBe(true);

    let done = false;
    const cut = truncateWal(db).then(() => {
      done = true;
    });
    let during = 0;
    while (!done) {
      expect(QUERIES.map((q) => answer(db, q))).toEqual(expected);
      during++;
      await new Promise((r) => setImmediate(r));
    }
    await cut;
    expect(during).toBeGreaterThan(0);
    expect(walBytes(file)).toBe(0);
    expect(QUERIES.map((q) => answer(db, q))).toEqual(expected);
    // What the WAL held is in the database file: another connection reads it all from there
    const other = openCache(file);
    try {
      expect(QUERIES.map((q) => answer(other, q))).toEqual(expected);
    } finally {
      other.close();
    }
    // The cache writes on as before, its WAL growing again from nothing
    expect(db.prepare("UPDATE messages SET flagged = 1 - flagged WHERE uid = 1").run().changes).toBe(1);
    expect(walBytes(file)).toBeGreaterThan(0);
  });
});
