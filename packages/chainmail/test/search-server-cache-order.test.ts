/**
 * The server path's first search in a folder ordered by the cache's arrival times (cache/arrivals.ts,
 * query/imap-run.ts byKnownArrival) instead of the server's `UID SORT (ARRIVAL)`, on real Dovecot
 * with a cache synced by the real daemon. The membership and count are the server's SEARCH answer;
 * only the order comes from the cache. Every answer is compared with the SORT path's (the same
 * search on a connection given no cache) and with an oracle read on its own connection (every
 * message's INTERNALDATE, flags and UID: newest first by arrival, ties by UID descending). Which
 * path ran is read from the commands the connection sent (a UID SORT or not). A fast-check
 * property covers messages APPENDed with old and equal internal dates (UID order is not arrival
 * order), expunges after the sync, and new mail the cache does not know; a table covers many
 * unknown matches (the server sorts), a UIDVALIDITY change (the cache's rows are not used) and a
 * server refusing the FETCH of unknown arrivals (the server sorts) or the SEARCH (reported as a
 * refusal, never 0 matches); the daemon's pages are compared before and after a sync.
 */
import Database from "better-sqlite3";
import fc from "fast-check";
import { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KnownArrivals, cachedArrivals } from "../src/cache/arrivals.js";
import { parseQuery } from "../src/query/index.js";
import { UidRanges, byKnownArrival, imapFolderMatches } from "../src/query/imap-run.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { startRefusingProxy } from "../src/testing/refusing-proxy.js";

let env: MailEnv;
let db: Database.Database;
let c: ImapFlow;
let made = 0;

const QUERIES = ["", "is:unread", "is:flagged", "is:unread -is:flagged", "subject:even"];

beforeAll(async () => {
  env = await startMailEnv();
  c = await env.dv.connect("alice");
}, 120_000);

afterAll(async () => {
  db?.close();
  await c?.logout();
  await env?.stop();
});

/** The daemon's cache.db, opened read-only after its first sync made it. */
function cacheDb(): Database.Database {
  db ??= new Database(env.home.cacheFile, { readonly: true });
  return db;
}

async function sync(): Promise<void> {
  await env.client.call("cache.sync", { accounts: ["work"] });
}

interface Msg {
  arrival: number;
  seen: boolean;
  flagged: boolean;
}

async function append(folder: string, m: Msg): Promise<void> {
  const n = ++made;
  const raw = buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `Message ${n} ${n % 2 === 0 ? "even" : "odd"}`,
    date: new Date(m.arrival),
    messageId: `<order${n}@example.com>`,
    text: "hello\n",
  });
  const flags = [...(m.seen ? ["\\Seen"] : []), ...(m.flagged ? ["\\Flagged"] : [])];
  await c.append(folder, raw, flags, new Date(m.arrival));
}

/** Every command a search sends on `c`, by name (imapflow sends each through `exec`). */
async function commandsOf<T>(run: () => Promise<T>): Promise<{ value: T; sent: string[] }> {
  const sent: string[] = [];
  type Exec = (command: string, ...rest: unknown[]) => Promise<unknown>;
  const client = c as unknown as { exec: Exec };
  const exec = client.exec;
  client.exec = function (this: unknown, command: string, ...rest: unknown[]) {
    sent.push(command);
    return exec.call(this, command, ...rest);
  };
  try {
    return { value: await run(), sent };
  } finally {
    client.exec = exec;
  }
}

/**
 * The folder's first search on `c` (INBOX selected before it, so nothing of the folder is
 * remembered), with the cache's arrivals or without (the server's SORT).
 */
async function firstSearch(folder: string, query: string, withCache: boolean) {
  await c.mailboxOpen("INBOX", { readOnly: true });
  return commandsOf(() =>
    imapFolderMatches(
      c,
      parseQuery(query),
      { folder: { path: folder }, account: "work", now: new Date() },
      {
        countOnly: false,
        arrivals: withCache
          ? (uidValidity, refresh) => cachedArrivals(cacheDb(), "work", folder, uidValidity, refresh)
          : undefined,
      },
    ),
  );
}

/** The oracle: the folder's matches newest first by INTERNALDATE, ties by UID descending. */
async function oracle(folder: string, query: string): Promise<number[]> {
  const o = await env.dv.connect("alice");
  try {
    await o.mailboxOpen(folder, { readOnly: true });
    const all = await o.fetchAll("1:*", { uid: true, internalDate: true, flags: true, envelope: true });
    const matches = all.filter((m) => {
      const f = m.flags ?? new Set<string>();
      if (query === "is:unread") return !f.has("\\Seen");
      if (query === "is:flagged") return f.has("\\Flagged");
      if (query === "is:unread -is:flagged") return !f.has("\\Seen") && !f.has("\\Flagged");
      if (query === "subject:even") return / even$/.test(m.envelope?.subject ?? "");
      return true;
    });
    const second = (m: (typeof all)[number]) => Math.floor(new Date(m.internalDate ?? 0).getTime() / 1000);
    return matches.sort((a, b) => second(b) - second(a) || b.uid - a.uid).map((m) => m.uid);
  } finally {
    await o.logout();
  }
}

/** Whether the last compareAll's searches by the cache's order fetched INTERNALDATEs of unknown matches. */
let fetched: boolean[] = [];

/** Both paths and the oracle for every query; returns whether the cache's order was used for each. */
async function compareAll(folder: string): Promise<boolean[]> {
  const used: boolean[] = [];
  fetched = [];
  for (const query of QUERIES) {
    const bySort = await firstSearch(folder, query, false);
    const byCache = await firstSearch(folder, query, true);
    const expected = await oracle(folder, query);
    expect(bySort.value.uids, `${folder} ${JSON.stringify(query)} by SORT`).toEqual(expected);
    expect(byCache.value, `${folder} ${JSON.stringify(query)} by the cache's order`).toEqual(bySort.value);
    expect(byCache.value.count).toBe(expected.length);
    if (expected.length > 1) expect(bySort.sent).toContain("UID SORT");
    used.push(!byCache.sent.includes("UID SORT"));
    fetched.push(byCache.sent.some((cmd) => cmd.includes("FETCH")));
  }
  return used;
}

const msg = (dates: number[]) =>
  fc.record({
    arrival: fc.constantFrom(...dates),
    seen: fc.boolean(),
    flagged: fc.boolean(),
  });

describe("the first search in a folder ordered by the cache's arrival times", () => {
  it("answers exactly as the server's SORT: old and equal internal dates, expunges and new mail after the sync", async () => {
    // Few distinct seconds (ties), spread over 25 years and appended in any order (UIDs do not
    // follow arrival).
    const dates = [
      Date.parse("2001-03-04T05:06:07Z"),
      Date.parse("2019-11-30T23:59:59Z"),
      Date.parse("2026-01-01T00:00:00Z"),
      Date.parse("2026-01-01T00:00:01Z"),
      Date.parse("2026-06-15T12:00:00+09:00"),
    ];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(msg(dates), { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(msg(dates), { maxLength: 8 }),
        fc.array(msg(dates), { minLength: 1, maxLength: 5 }),
        async (synced, expunge, later, after) => {
          const folder = `Order${++run}`;
          await c.mailboxCreate(folder);
          for (const m of synced) await append(folder, m);
          await sync();
          // After the sync: messages expunged (the cache still holds them) and new mail it does not.
          await c.mailboxOpen(folder);
          const uids = (await c.search({ all: true }, { uid: true })) || [];
          const gone = [...new Set(expunge.map((i) => uids[i % uids.length] as number))];
          if (gone.length > 0) await c.messageDelete(gone.join(","), { uid: true });
          for (const m of later) await append(folder, m);
          // At most 8 unknown matches: every search took the cache's order (no SORT sent).
          expect((await compareAll(folder)).every(Boolean)).toBe(true);
          // More new mail: the arrivals kept in memory since the last compare lack it too.
          for (const m of after) await append(folder, m);
          expect((await compareAll(folder)).every(Boolean)).toBe(true);
          expect(fetched.some(Boolean)).toBe(true);
          // Synced: the same answers, and read afresh (another handle keeps no copy), the cache
          // knows every match.
          await sync();
          expect((await compareAll(folder)).every(Boolean)).toBe(true);
          db.close();
          db = new Database(env.home.cacheFile, { readonly: true });
          expect((await compareAll(folder)).every(Boolean)).toBe(true);
          expect(fetched.some(Boolean)).toBe(false);
        },
      ),
      { numRuns: 8 },
    );
  }, 600_000);

  it("leaves the order to the server's SORT when more matches than the bound are unknown to the cache", async () => {
    await c.mailboxCreate("ManyNew");
    for (let i = 0; i < 3; i++)
      await append("ManyNew", {
        arrival: Date.parse("2026-02-01T00:00:00Z") + i,
        seen: false,
        flagged: false,
      });
    await sync();
    const old = Date.parse("2020-01-01T00:00:00Z");
    await env.dv.appendMessages(
      "alice",
      "ManyNew",
      Array.from({ length: 230 }, (_, i) => ({
        raw: buildMessage({
          from: "Eve <eve@example.com>",
          to: ["alice@example.com"],
          subject: `Late ${i} ${i % 2 === 0 ? "even" : "odd"}`,
          date: new Date(old),
          messageId: `<late${i}@example.com>`,
          text: "hello\n",
        }),
      })),
    );
    const used = await compareAll("ManyNew");
    // "" and is:unread match 230 unknown messages (sorted by the server); is:flagged matches none.
    expect(used[0]).toBe(false);
    expect(used[1]).toBe(false);
    // After a sync the cache knows them all: its order again, the same answers.
    await sync();
    expect((await compareAll("ManyNew")).every(Boolean)).toBe(true);
  }, 300_000);

  it("does not use the cache's rows of a folder whose UIDVALIDITY changed since the sync", async () => {
    // The same name, recreated: the new folder's UIDs 1.. name other messages, whose arrivals run
    // the other way; the cache still holds the old folder's.
    await c.mailboxCreate("Reborn");
    const day = 86_400_000;
    const base = Date.parse("2025-01-01T00:00:00Z");
    for (let i = 0; i < 6; i++)
      await append("Reborn", { arrival: base + i * day, seen: false, flagged: i % 2 === 0 });
    await sync();
    const before = await c.mailboxOpen("Reborn", { readOnly: true });
    const oldValidity = String(before.uidValidity);
    await c.mailboxClose();
    await c.mailboxDelete("Reborn");
    await c.mailboxCreate("Reborn");
    for (let i = 0; i < 6; i++)
      await append("Reborn", { arrival: base - i * day, seen: false, flagged: i % 2 === 1 });
    const after = await c.mailboxOpen("Reborn", { readOnly: true });
    expect(String(after.uidValidity)).not.toBe(oldValidity);
    // The cache still holds the old rows, which would give another order: the test can fail.
    const stale = (await cachedArrivals(cacheDb(), "work", "Reborn", oldValidity)) as KnownArrivals;
    expect(stale?.uids.length).toBe(6);
    const all = new UidRanges([[1, 6]]);
    expect(await byKnownArrival(c, all, stale)).not.toEqual(await oracle("Reborn", ""));
    expect(await cachedArrivals(cacheDb(), "work", "Reborn", String(after.uidValidity))).toBeNull();
    const used = await compareAll("Reborn");
    expect(used.some(Boolean)).toBe(false);
    // Synced again under the new UIDVALIDITY: the cache's order, the same answers.
    await sync();
    expect((await compareAll("Reborn")).every(Boolean)).toBe(true);
  }, 300_000);
});

describe("a server that refuses a command of the cache-ordered search", () => {
  it("leaves the order to the server's SORT when the FETCH of unknown arrivals is refused, and reports a refused SEARCH", async () => {
    await c.mailboxCreate("Refusing");
    const base = Date.parse("2026-04-01T00:00:00Z");
    for (let i = 0; i < 5; i++)
      await append("Refusing", { arrival: base + i * 1000, seen: false, flagged: false });
    await sync();
    // Two messages the cache does not know, one arrived before the others.
    await append("Refusing", { arrival: base - 5000, seen: false, flagged: false });
    await append("Refusing", { arrival: base + 9000, seen: false, flagged: false });
    const proxy = await startRefusingProxy(() => ({ host: env.dv.host, port: env.dv.port }));
    const p = new ImapFlow({
      host: "127.0.0.1",
      port: proxy.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: "alice", pass: "alice-secret-pw" },
      logger: false,
    });
    await p.connect();
    try {
      const search = async () => {
        await p.mailboxOpen("INBOX", { readOnly: true });
        return imapFolderMatches(
          p,
          parseQuery("is:unread"),
          { folder: { path: "Refusing" }, account: "work", now: new Date() },
          {
            countOnly: false,
            arrivals: (uidValidity, refresh) =>
              cachedArrivals(cacheDb(), "work", "Refusing", uidValidity, refresh),
          },
        );
      };
      const expected = await oracle("Refusing", "is:unread");
      expect(expected).toHaveLength(7);
      const sorts = () => proxy.commands().filter((cmd) => /^UID SORT/i.test(cmd)).length;
      expect((await search()).uids).toEqual(expected);
      expect(sorts()).toBe(0);
      expect(proxy.commands().some((cmd) => /^UID FETCH .*INTERNALDATE/i.test(cmd))).toBe(true);
      proxy.refuse([{ command: /^UID FETCH/i, status: "NO", text: "fetch refused for the test" }]);
      const refused = proxy.refused();
      expect((await search()).uids).toEqual(expected);
      expect(proxy.refused()).toBeGreaterThan(refused);
      expect(sorts()).toBe(1);
      proxy.refuse([{ command: /^UID SEARCH/i, status: "NO", text: "search refused for the test" }]);
      await expect(search()).rejects.toMatchObject({ reason: "UNSUPPORTED" });
    } finally {
      proxy.refuse([]);
      await p.logout();
      await proxy.stop();
    }
  }, 120_000);
});

describe("the daemon's server path with and without the folder's headers cached", () => {
  it("gives the same rows, count and pages before and after the cache holds the folder", async () => {
    await c.mailboxCreate("Shared");
    for (let i = 0; i < 40; i++)
      await append("Shared", {
        arrival: Date.parse("2026-03-01T00:00:00Z") + ((i * 7) % 13) * 1000,
        seen: i % 3 === 0,
        flagged: false,
      });
    const pages = async () => {
      const out: unknown[] = [];
      let cursor: string | null | undefined;
      do {
        // Another folder searched first: the folder is selected anew for each page's search.
        await env.client.search({ query: "in:INBOX", accounts: ["work"], source: "server", limit: 5 });
        const r = await env.client.search({
          query: "in:Shared is:unread",
          accounts: ["work"],
          source: "server",
          limit: 10,
          ...(cursor ? { cursor } : {}),
        });
        expect(r.source).toBe("server");
        expect(r.partial).toEqual([]);
        out.push({ count: r.count, refs: r.rows.map((row) => [row.ref, row.subject, row.date]) });
        cursor = r.next_cursor;
      } while (cursor);
      return out;
    };
    const withoutCache = await pages();
    await sync();
    const folder = cacheDb()
      .prepare("SELECT cached_count FROM folders WHERE account = 'work' AND path = 'Shared'")
      .get() as { cached_count: number } | undefined;
    expect(folder?.cached_count).toBe(40);
    expect(await pages()).toEqual(withoutCache);
    expect(withoutCache.length).toBe(3);
  }, 120_000);
});
