// The differential test: the same queries answered by compileToSql over the synced cache and by
// compileToImap through Dovecot's IMAP SEARCH (imapSearchFolder) must name the same messages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backfillBodies, cacheCanAnswerQuery, searchCache, syncAccount } from "../src/cache/index.js";
import { type FolderInfo, imapSearchFolder, parseQuery, roleFromSpecialUse } from "../src/query/index.js";
import { type CacheEnv, messageIds, startCacheEnv } from "./support/cache-env.js";
import { buildMessage, generateCorpus } from "../src/testing/corpus.js";

const A = "work";
let env: CacheEnv;
const folders: FolderInfo[] = [];
const NOW = new Date("2024-06-01T12:00:00Z");

beforeAll(async () => {
  env = await startCacheEnv();
  // Arrival times 90 minutes apart from 09:30 UTC, so no message sits on a day boundary
  let t = Date.UTC(2024, 2, 1, 9, 30);
  const next = () => {
    t += 90 * 60_000;
    return new Date(t);
  };
  const inbox = generateCorpus({ threads: 3, fillers: 6, hugeBytes: 300 * 1024 });
  for (const [i, m] of inbox.entries()) {
    const flags = [...(m.flags ?? [])];
    if (i === 1) flags.push("\\Flagged", "$Work");
    if (i === 4) flags.push("\\Answered", "\\Seen");
    if (i === 7) flags.push("\\Flagged");
    await env.append("INBOX", m.raw, flags, next());
  }
  const other = generateCorpus({ threads: 1, fillers: 3, hugeBytes: 0, domain: "other.org" });
  for (const m of other) await env.append("Archive", m.raw, ["\\Seen"], next());
  await env.append(
    "Trash",
    buildMessage({
      from: "Alice Sender <alice@example.com>",
      to: ["bob@example.com"],
      subject: "Deleted budget talk",
      date: NOW,
      messageId: "<trash1@example.com>",
      text: "Old budget notes.\n",
    }),
    [],
    next(),
  );
  await env.append(
    "Drafts",
    buildMessage({
      from: "alice@example.com",
      to: ["bob@example.com"],
      subject: "Unsent budget draft",
      date: NOW,
      messageId: "<draft1@example.com>",
      text: "Draft about the budget.\n",
    }),
    ["\\Draft", "\\Seen"],
    next(),
  );
  await env.append(
    "Junk",
    buildMessage({
      from: "Spammer <spam@bad.example>",
      to: ["alice@example.com"],
      subject: "Cheap budget pills",
      date: NOW,
      messageId: "<junk1@bad.example>",
      text: "Buy now.\n",
    }),
    [],
    next(),
  );

  const c = await env.client();
  await syncAccount(env.db, c, A);
  for (const f of await c.list()) {
    folders.push({ path: f.path, role: roleFromSpecialUse(f.specialUse, f.path) });
    await backfillBodies(env.db, c, A, f.path);
  }
});
afterAll(async () => {
  await env?.close();
});

// Words are chosen so that IMAP's substring matching and the cache's word matching agree: a
// term such as subject:Re differs by design ("Re" is inside "thread" for IMAP; see README).
const QUERIES = [
  "",
  "budget",
  "Budget review",
  '"Please review the budget"',
  "from:alice",
  "from:bob OR from:carol",
  "-from:alice",
  "{from:alice from:news} -subject:invoice",
  "to:bob",
  "cc:team",
  "subject:thread",
  'subject:"Project thread 2"',
  "thread -(subject:project)",
  "is:unread",
  "is:read",
  "is:starred",
  "is:flagged -is:read",
  "is:answered",
  "is:draft",
  "has:attachment",
  "-has:attachment",
  "filename:pdf",
  "filename:csv OR is:flagged",
  "-filename:png has:attachment",
  // (a whole address with has:attachment: the attachment index tested per address row)
  "has:attachment from:carol@example.com",
  "from:news@example.com has:attachment",
  "has:attachment from:alice@example.com",
  "larger:10K",
  "smaller:2K",
  "larger:1K smaller:3K",
  "after:2024/03/01 before:2024/03/02",
  "after:2024-03-02",
  "before:2024/03/01",
  "newer_than:30d",
  "older_than:1m",
  "newer_than:1y from:filler1",
  "label:$Work",
  "-label:$Work is:flagged",
  "in:inbox -is:read",
  "in:archive",
  "in:trash",
  "in:spam OR in:drafts",
  "in:anywhere budget",
  "budget -in:inbox",
  "Grüße",
  "account:work is:read",
  "account:personal",
  "(quarterly OR invoice) OR subject:urgent",
  "Mallory",
];

describe("differential: cache SQL vs IMAP SEARCH on the same mailbox", () => {
  it("the cache can answer every query completely", () => {
    for (const q of QUERIES) expect(cacheCanAnswerQuery(env.db, A, parseQuery(q)).complete, q).toBe(true);
  });

  it.each(QUERIES)("%s", async (q) => {
    const ast = parseQuery(q);
    const fromCache = searchCache(env.db, ast, { limit: 200, now: NOW })
      .rows.map((r) => r.message_id ?? "")
      .sort();
    const c = await env.client();
    const fromServer: string[] = [];
    for (const folder of folders) {
      const uids = await imapSearchFolder(c, ast, { folder, account: A, now: NOW });
      fromServer.push(...(await messageIds(c, folder.path, uids)));
    }
    fromServer.sort();
    expect(fromCache, q).toEqual(fromServer);
    await c.logout();
  });

  it("the queries are not trivial: most match some but not all messages", () => {
    const total = searchCache(env.db, parseQuery("in:anywhere"), { now: NOW }).count;
    const selective = QUERIES.filter((q) => {
      const n = searchCache(env.db, parseQuery(q), { now: NOW }).count;
      return n > 0 && n < total;
    });
    expect(selective.length).toBeGreaterThan(QUERIES.length * 0.75);
  });
});
