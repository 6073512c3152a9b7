// The search service reads its rows straight from the cache's columns (src/service/search/cache-row.ts)
// instead of mapping the full CacheRow: every row must come out as the mapping from the CacheRow
// gave it (below, as the service had it), to the byte of its JSON, for pages with and without
// threads and snippets, over generated mail with every flag, keywords, no From and no Date.
import { describe, expect, it } from "vitest";
import { putBody } from "../src/cache/body-store.js";
import { type CacheRow, openCache, searchCache } from "../src/cache/index.js";
import { stmt } from "../src/cache/schema.js";
import { searchCacheShaped } from "../src/cache/search.js";
import {
  ensureFolder,
  type FtsWrite,
  indexMessage,
  runFtsWrites,
  upsertMessage,
} from "../src/cache/store.js";
import { parseQuery } from "../src/query/index.js";
import { encodeRef } from "../src/refs.js";
import { SEARCH_ROW } from "../src/service/search/cache-row.js";
import type { Hit } from "../src/service/search/types.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";
import { MAILBOX_VOCAB, mailboxSender } from "../src/testing/mailbox.js";

/** The service's mapping of a CacheRow before it read its own columns (cache-path.ts, rowFromCache). */
function rowFromCache(r: CacheRow): Hit {
  const ref = encodeRef({
    account: r.account,
    folder: r.folder,
    uidValidity: Number(r.uidvalidity),
    uid: r.uid,
  });
  return {
    ref,
    account: r.account,
    folder: r.folder,
    date: r.date,
    from: r.from ? { name: r.from.name, address: r.from.address } : null,
    subject: r.subject,
    flags: [...r.flags].sort(),
    keywords: [...r.keywords].sort(),
    size: r.size,
    has_attachment: r.has_attachment,
    message_id: r.message_id,
    thread_id: r.thread_key,
    ...(typeof r.snippet === "string" ? { snippet: r.snippet } : {}),
    sortDate: Date.parse(r.received),
    uid: r.uid,
    path: r.folder,
  };
}

const N = 400;
const NOW = new Date("2026-01-01T00:00:00Z");
const FLAGS = ["\\Seen", "\\Flagged", "\\Answered", "\\Draft", "\\Deleted", "Zeta", "$label1", "alpha"];

function cache() {
  const db = openCache(":memory:");
  const inbox = ensureFolder(db, "bench", "INBOX", "inbox");
  stmt(db, "UPDATE folders SET uidvalidity = '4242' WHERE id = ?").run(inbox.id);
  const other = ensureFolder(db, "bench", "Archive/2025 ünïcode", null);
  db.transaction(() => {
    const fts: FtsWrite[] = [];
    for (let i = 0; i < N; i++) {
      const { msg, text } = syncedMailboxMessage(i, N, i + 1, NOW);
      // Flags and keywords in every combination over the messages, out of order
      msg.flags = new Set(FLAGS.filter((_, k) => (i >> k) & 1));
      if (i % 7 === 0) msg.envelope = { ...msg.envelope, from: [] };
      if (i % 11 === 0) msg.envelope = { ...msg.envelope, date: undefined };
      const id = upsertMessage(db, i % 3 === 0 ? other : inbox, msg, null, fts);
      // Every third body not stored: its row has no snippet
      if (i % 3 !== 1) {
        putBody(db, id, text, Date.now());
        fts.push({ id, write: () => indexMessage(db, id, text) });
      }
    }
    runFtsWrites(fts);
  })();
  return db;
}

describe("the search row read from the cache's columns", () => {
  const db = cache();
  const queries = [
    "",
    "is:flagged",
    `from:${mailboxSender(0)}`,
    MAILBOX_VOCAB[200] as string,
    "has:attachment",
  ];

  for (const query of queries)
    for (const threads of [false, true])
      for (const snippets of [false, true])
        it(`is the CacheRow's mapping: "${query}"${threads ? ", threads" : ""}${snippets ? ", snippets" : ""}`, () => {
          const ast = parseQuery(query);
          let cursor: string | null = null;
          let pages = 0;
          do {
            const options = { accounts: ["bench"], limit: 60, cursor, threads, snippets };
            const full = searchCache(db, ast, options);
            const shaped = searchCacheShaped(db, ast, options, SEARCH_ROW);
            const expected = full.rows.map(rowFromCache);
            expect(shaped.rows).toEqual(expected);
            expect(JSON.stringify(shaped.rows)).toBe(JSON.stringify(expected));
            expect({ ...shaped, rows: [] }).toEqual({ ...full, rows: [] });
            cursor = full.next_cursor;
            pages++;
          } while (cursor);
          expect(pages).toBeGreaterThan(0);
        });

  it("covers what it claims: rows without From, with every flag, keywords, snippets and none", () => {
    const rows = searchCacheShaped(db, parseQuery(""), { limit: 200, snippets: true }, SEARCH_ROW).rows;
    expect(rows.some((r) => r.from === null)).toBe(true);
    expect(rows.some((r) => r.flags.length === 5)).toBe(true);
    expect(rows.some((r) => r.keywords.length === 3)).toBe(true);
    expect(rows.some((r) => r.snippet === undefined)).toBe(true);
    expect(rows.some((r) => typeof r.snippet === "string")).toBe(true);
    expect(new Set(rows.map((r) => r.folder)).size).toBe(2);
  });
});
