/**
 * The server path's remembered SORT answer (query/imap-run.ts, sortMemos) after another client
 * removed mail, on real Dovecot: the daemon's connection has QRESYNC enabled, so the server names
 * each removed message by UID (VANISHED) and the daemon drops it from the list instead of sorting
 * every match again. Each answer is checked against an oracle read on a separate connection
 * (every message's INTERNALDATE, flags and UID: the matches newest first by arrival, ties by UID
 * descending, the order a fresh `SORT (ARRIVAL)` reversed gives), and the SORTs the daemon sent
 * are read from a proxy in front of Dovecot. Another query in the same folder is answered from
 * the folder's remembered order and one SEARCH; a refused SEARCH there is retried or reported.
 * A fast-check property applies random sequences of another client's appends (new and old
 * dates), flag changes, expunges and moves between searches, asking either query after each.
 */
import fc from "fast-check";
import { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildMessage } from "../src/testing/corpus.js";
import { RawFetch } from "../src/imap/raw-fetch.js";
import { parseQuery } from "../src/query/index.js";
import { UidRanges, imapFolderMatches, uidSet } from "../src/query/imap-run.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { type RefusingProxy, startRefusingProxy } from "../src/testing/refusing-proxy.js";

const BASE = Date.parse("2026-01-01T00:00:00Z");
let env: MailEnv;
let proxy: RefusingProxy;
let other: ImapFlow;
let oracle: ImapFlow;
let made = 0;

beforeAll(async () => {
  let target = { host: "127.0.0.1", port: 1 };
  proxy = await startRefusingProxy(() => target);
  env = await startMailEnv({ work: { port: proxy.port } });
  target = { host: env.dv.host, port: env.dv.port };
  other = await env.dv.connect("alice");
  oracle = await env.dv.connect("alice");
  await other.mailboxCreate("Archive");
}, 120_000);
afterAll(async () => {
  await other?.logout().catch(() => undefined);
  await oracle?.logout().catch(() => undefined);
  await env?.stop();
  await proxy?.stop();
});

/** Appends a message with a unique subject through the other client; `arrival` is its INTERNALDATE. */
async function add(folder: string, arrival: number, seen = false): Promise<string> {
  // Delimited, so no subject is a part of another (IMAP SUBJECT matches substrings).
  const subject = `Msg-${++made}-end`;
  await other.append(
    folder,
    buildMessage({
      from: "Eve <eve@example.com>",
      to: ["alice@example.com"],
      subject,
      date: new Date(arrival),
      messageId: `<msg${made}@example.com>`,
      text: "hello\n",
    }),
    seen ? ["\\Seen"] : [],
    new Date(arrival),
  );
  return subject;
}

/** The two queries the tests ask: unread mail, and mail not flagged (each a SORT of its own). */
const QUERIES = {
  unread: { text: "is:unread", flag: "\\Seen" },
  unflagged: { text: "-is:flagged", flag: "\\Flagged" },
} as const;
type Query = keyof typeof QUERIES;

/** The folder's matches newest first by arrival, ties by UID descending, read afresh. */
async function newestFirst(folder: string, q: Query = "unread"): Promise<string[]> {
  await oracle.mailboxOpen(folder, { readOnly: true });
  if (!oracle.mailbox || oracle.mailbox.exists === 0) return [];
  const all = await oracle.fetchAll("1:*", { uid: true, flags: true, internalDate: true, envelope: true });
  return all
    .filter((m) => !m.flags?.has(QUERIES[q].flag))
    .map((m) => ({
      uid: m.uid,
      at: new Date(m.internalDate ?? 0).getTime(),
      subject: m.envelope?.subject ?? "",
    }))
    .sort((a, b) => b.at - a.at || b.uid - a.uid)
    .map((m) => m.subject);
}
const unreadNewestFirst = (folder: string) => newestFirst(folder, "unread");

const search = (folder: string, q: Query = "unread") =>
  env.client.search({
    query: `in:${folder} ${QUERIES[q].text}`,
    accounts: ["work"],
    source: "server",
    limit: 200,
  });

const sortsOf = (criteria: RegExp) =>
  proxy.commands().filter((c) => {
    const m = /^UID SORT RETURN \(ALL\) \(ARRIVAL\) UTF-8 (.*?)\s*$/i.exec(c);
    return m !== null && criteria.test(m[1]!);
  }).length;
/** How many SORTs of every unread message were sent so far. */
const fullSorts = () => sortsOf(/^UNSEEN$/i);
/** How many SORTs of every match of a query, or of every message of a folder, were sent so far. */
const anyFullSort = () => sortsOf(/^(UNSEEN|NOT FLAGGED|ALL)$/i);

/** The daemon's answer equals the oracle's: every row, in order, and the exact count. */
async function expectFresh(folder: string, q: Query = "unread"): Promise<string[]> {
  const res = await search(folder, q);
  const want = await newestFirst(folder, q);
  expect(res.partial).toEqual([]);
  expect(res.count).toBe(want.length);
  expect(res.rows.map((r) => r.subject)).toEqual(want);
  return want;
}

/** A folder of `n` unread messages a minute apart, oldest first; their subjects newest first. */
async function freshFolder(name: string, n: number): Promise<string[]> {
  await other.mailboxCreate(name);
  const subjects: string[] = [];
  for (let i = 0; i < n; i++) subjects.unshift(await add(name, BASE + i * 60_000));
  await other.mailboxOpen(name);
  return subjects;
}

const removeBySubject = async (subjects: string[]) => {
  const query =
    subjects.length === 1 ? { subject: subjects[0] } : { or: subjects.map((s) => ({ subject: s })) };
  const uids = (await other.search(query, { uid: true })) || [];
  expect(uids).toHaveLength(subjects.length);
  expect(await other.messageDelete(uids.join(","), { uid: true })).toBe(true);
};

describe("UidRanges (an ESEARCH answer's ALL set)", () => {
  const answer = (set: string) => [
    [
      { type: "ATOM", value: "TAG" },
      { type: "STRING", value: "A1" },
    ],
    { type: "ATOM", value: "UID" },
    { type: "ATOM", value: "ALL" },
    { type: "SEQUENCE", value: set },
  ];
  it("counts and finds the UIDs of any set, in any order, ranges either way round and overlapping", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 200 })), {
          minLength: 1,
          maxLength: 12,
        }),
        (parts) => {
          const want = new Set<number>();
          for (const [a, b] of parts) for (let n = Math.min(a, b); n <= Math.max(a, b); n++) want.add(n);
          const set = parts.map(([a, b]) => (a === b ? `${a}` : `${a}:${b}`)).join(",");
          const r = UidRanges.of(answer(set));
          expect(r.size).toBe(want.size);
          for (let n = 0; n <= 201; n++) expect(r.has(n)).toBe(want.has(n));
        },
      ),
    );
  });
  it("is empty for an answer without ALL (nothing matched), and refuses an unreadable set", () => {
    expect(
      UidRanges.of([
        [
          { type: "ATOM", value: "TAG" },
          { type: "STRING", value: "A1" },
        ],
        { type: "ATOM", value: "UID" },
      ]).size,
    ).toBe(0);
    expect(() => UidRanges.of(answer("1:*"))).toThrow(/unreadable set/);
  });
});

describe("removals by another client", () => {
  it("drops one removed message, the newest, one in the middle, the oldest, or several at once, without sorting every match again", async () => {
    const subjects = await freshFolder("Removals", 30);
    expect(await expectFresh("Removals")).toEqual(subjects);
    const sorts = fullSorts();
    expect(sorts).toBeGreaterThan(0);
    for (const gone of [
      [subjects[0]!],
      [subjects[14]!],
      [subjects[29]!],
      [subjects[3]!, subjects[9]!, subjects[20]!],
    ]) {
      await removeBySubject(gone);
      const left = await expectFresh("Removals");
      for (const g of gone) expect(left).not.toContain(g);
    }
    expect(await expectFresh("Removals")).toHaveLength(24);
    // A message that is not a match (read) goes: the count stays.
    const read = await add("Removals", Date.now(), true);
    await expectFresh("Removals");
    await removeBySubject([read]);
    expect(await expectFresh("Removals")).toHaveLength(24);
    expect(fullSorts()).toBe(sorts);
  });

  it("handles a removal and new mail reported by the same NOOP", async () => {
    const subjects = await freshFolder("RemoveAdd", 10);
    await expectFresh("RemoveAdd");
    const sorts = fullSorts();
    const fresh = await add("RemoveAdd", Date.now());
    await removeBySubject([subjects[4]!]);
    const left = await expectFresh("RemoveAdd");
    expect(left[0]).toBe(fresh);
    expect(left).not.toContain(subjects[4]);
    // The new message goes again, with another new one beside it.
    const second = await add("RemoveAdd", Date.now() + 1000);
    await removeBySubject([fresh]);
    expect((await expectFresh("RemoveAdd"))[0]).toBe(second);
    expect(fullSorts()).toBe(sorts);
  });

  it("handles a removal and a flag change reported by the same NOOP", async () => {
    const subjects = await freshFolder("RemoveFlag", 10);
    await expectFresh("RemoveFlag");
    const sorts = fullSorts();
    // One message goes, another is read (leaves the unread matches): both by UID.
    await removeBySubject([subjects[2]!]);
    await other.messageFlagsAdd({ subject: subjects[6]! }, ["\\Seen"]);
    const left = await expectFresh("RemoveFlag");
    expect(left).toHaveLength(8);
    expect(fullSorts()).toBe(sorts);
    // One goes and a read one becomes unread again: its place is unknown, the folder is sorted.
    await removeBySubject([subjects[0]!]);
    await other.messageFlagsRemove({ subject: subjects[6]! }, ["\\Seen"]);
    expect(await expectFresh("RemoveFlag")).toHaveLength(8);
    expect(fullSorts()).toBe(sorts + 1);
  });

  it("answers no match once every match was expunged, and finds new mail after that", async () => {
    const subjects = await freshFolder("RemoveAll", 6);
    await expectFresh("RemoveAll");
    const sorts = fullSorts();
    await removeBySubject(subjects);
    const res = await search("RemoveAll");
    expect(res).toMatchObject({ count: 0, rows: [], partial: [] });
    const fresh = await add("RemoveAll", Date.now());
    expect(await expectFresh("RemoveAll")).toEqual([fresh]);
    expect(fullSorts()).toBe(sorts);
  });
});

describe("another query in the same folder", () => {
  it("answers from the folder's own order and one SEARCH, kept up to date through removals, new mail and flag changes", async () => {
    const subjects = await freshFolder("Orders", 20);
    await other.messageFlagsAdd("3,7,11", ["\\Seen"]);
    await other.messageFlagsAdd("4,7,15", ["\\Flagged"]);
    // Arrived between older messages: the highest UID is not the newest, nor is UID order arrival order.
    await add("Orders", BASE + 5 * 60_000 + 30_000);
    await expectFresh("Orders", "unread");
    const beforeOrder = sortsOf(/^ALL$/i);
    // A second query: the folder's order is sorted once (every message), the matches searched.
    await expectFresh("Orders", "unflagged");
    expect(sortsOf(/^ALL$/i)).toBe(beforeOrder + 1);
    const sorts = anyFullSort();
    // Each query in turn from now on is a first search of that query: no SORT of every match.
    await expectFresh("Orders", "unread");
    await expectFresh("Orders", "unflagged");
    await removeBySubject([subjects[0]!, subjects[10]!]);
    await expectFresh("Orders", "unread");
    await expectFresh("Orders", "unflagged");
    const fresh = await add("Orders", Date.now());
    await other.messageFlagsAdd({ subject: subjects[5]! }, ["\\Seen", "\\Flagged"]);
    await removeBySubject([subjects[19]!]);
    await expectFresh("Orders", "unflagged");
    expect((await expectFresh("Orders", "unread"))[0]).toBe(fresh);
    // The same query twice: its own answer, brought up to date.
    await other.messageFlagsRemove({ subject: subjects[5]! }, ["\\Flagged"]);
    await expectFresh("Orders", "unread");
    await expectFresh("Orders", "unread");
    await expectFresh("Orders", "unflagged");
    expect(anyFullSort()).toBe(sorts);
  });
});

describe("a refused SEARCH of another query", () => {
  const TEXT = "[SERVERBUG] Internal error «evil»";
  it("answers by a SORT of the matches when the retry may, else is a partial entry with the server's text, never 0 matches", async () => {
    await freshFolder("Refused", 5);
    await expectFresh("Refused", "unread");
    await expectFresh("Refused", "unflagged");
    let before = proxy.refused();
    // The SEARCH alone refused: the search lists the folders again and runs once more (the
    // folder list it used was a remembered one, see withFolderList), and that run SORTs.
    proxy.refuse([{ command: /^UID SEARCH RETURN \(ALL\)/i, status: "NO", text: TEXT }]);
    try {
      expect(await expectFresh("Refused", "unread")).toHaveLength(5);
    } finally {
      proxy.refuse([]);
    }
    expect(proxy.refused()).toBeGreaterThan(before);
    await expectFresh("Refused", "unflagged");
    before = proxy.refused();
    // The SORT refused too (BAD: UNSUPPORTED, as search-server-path pins it): a partial entry.
    proxy.refuse([
      { command: /^UID SEARCH RETURN \(ALL\)/i, status: "NO", text: TEXT },
      { command: /^UID SORT RETURN \(ALL\) \(ARRIVAL\) UTF-8 UNSEEN\s*$/i, status: "BAD", text: TEXT },
    ]);
    try {
      const res = await search("Refused", "unread");
      expect(res.rows).toEqual([]);
      expect(res.partial).toMatchObject([
        { account: "work", folder: "Refused", error: { reason: "UNSUPPORTED" } },
      ]);
      expect(res.partial[0]!.error.detail).toContain("Internal error");
      expect(res.partial[0]!.error.message).not.toContain("evil");
    } finally {
      proxy.refuse([]);
    }
    expect(proxy.refused()).toBeGreaterThan(before);
    expect(await expectFresh("Refused", "unread")).toHaveLength(5);
  });
});

describe("a removal reported after new mail", () => {
  it("sorts every match anew when new mail was reported before the removal, and answers as a fresh SORT", async () => {
    const subjects = await freshFolder("Race", 8);
    // A connection of its own through the proxy (its SORTs counted), QRESYNC on as the daemon's.
    const c = new ImapFlow({
      host: "127.0.0.1",
      port: proxy.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: "alice", pass: "alice-secret-pw" },
      logger: false,
      qresync: true,
    });
    await c.connect();
    try {
      expect(c.enabled.has("QRESYNC")).toBe(true);
      const ast = parseQuery("is:unread");
      const matches = async () => {
        const m = await imapFolderMatches(
          c,
          ast,
          { folder: { path: "Race" }, now: new Date() },
          { countOnly: false },
        );
        expect(m.count).toBe(m.uids.length);
        await oracle.mailboxOpen("Race", { readOnly: true });
        const got = await oracle.fetchAll(
          uidSet(m.uids.length ? m.uids : [1]),
          { uid: true, envelope: true },
          { uid: true },
        );
        const byUid = new Map(got.map((g) => [g.uid, g.envelope?.subject ?? ""]));
        return m.uids.map((u) => byUid.get(u));
      };
      expect(await matches()).toEqual(subjects);
      expect(await matches()).toEqual(subjects);
      // New mail, which the server reports at the end of a page's FETCH (the daemon's lean reader,
      // which sends no command imapflow counts), then a removal, reported by the next NOOP: the
      // removed message may be one the remembered answer holds or the new one.
      const fresh = await add("Race", Date.now());
      const lock = await c.getMailboxLock("Race", { readOnly: true });
      try {
        const raw = RawFetch.open(c);
        expect(raw).not.toBeNull();
        try {
          await raw!.fetch("1:2", "(UID FLAGS)");
        } finally {
          raw!.close();
        }
      } finally {
        lock.release();
      }
      // The lean reader hands what was not its own to imapflow's parser as it closes: wait for it.
      const exists = () => (c.mailbox ? c.mailbox.exists : -1);
      for (const until = Date.now() + 10_000; exists() !== 9 && Date.now() < until; )
        await new Promise((r) => setTimeout(r, 10));
      expect(exists()).toBe(9);
      const sorts = fullSorts();
      await removeBySubject([fresh]);
      expect(await matches()).toEqual(await unreadNewestFirst("Race"));
      expect(await unreadNewestFirst("Race")).toEqual(subjects);
      expect(fullSorts()).toBe(sorts + 1);
      // And the answer is remembered again: one removal next, no SORT.
      await removeBySubject([subjects[1]!]);
      expect(await matches()).toEqual(subjects.filter((s) => s !== subjects[1]));
      expect(fullSorts()).toBe(sorts + 1);
    } finally {
      await c.logout();
    }
  });
});

describe("random changes by another client between searches", () => {
  type Op =
    | { kind: "append"; minutes: number; seen: boolean }
    | { kind: "flag"; pick: number; flag: "\\Seen" | "\\Flagged"; add: boolean }
    | { kind: "expunge"; picks: number[] }
    | { kind: "move"; pick: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    // minutes from BASE: negative and small are older than the folder's mail, large are newest
    fc.record({
      kind: fc.constant("append" as const),
      minutes: fc.integer({ min: -30, max: 10_000 }),
      seen: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant("flag" as const),
      pick: fc.nat(),
      flag: fc.constantFrom("\\Seen" as const, "\\Flagged" as const),
      add: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant("expunge" as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant("move" as const), pick: fc.nat() }),
  );

  it("answers every search as a fresh full SORT would: the same rows in the same order, the exact count", async () => {
    let run = 0;
    let incremental = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            ops: fc.array(op, { maxLength: 4 }),
            // The queries asked after the batch, in order: the same one twice reuses its answer,
            // the other one answers from the folder's order.
            asks: fc.array(fc.constantFrom<Query>("unread", "unflagged"), { minLength: 1, maxLength: 2 }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        async (batches) => {
          const folder = `Prop${++run}`;
          await freshFolder(folder, 12);
          // Some read, some arriving in the same second (ties by UID).
          await other.messageFlagsAdd("2,5", ["\\Seen"]);
          await other.messageFlagsAdd("3,5", ["\\Flagged"]);
          await add(folder, BASE + 11 * 60_000);
          await expectFresh(folder);
          for (const batch of batches) {
            for (const o of batch.ops) {
              const uids = (await other.search({ all: true }, { uid: true })) || [];
              const at = (i: number) => uids[i % Math.max(1, uids.length)];
              if (o.kind === "append") await add(folder, BASE + o.minutes * 60_000, o.seen);
              else if (uids.length === 0) continue;
              else if (o.kind === "flag") {
                const uid = String(at(o.pick));
                if (o.add) await other.messageFlagsAdd(uid, [o.flag], { uid: true });
                else await other.messageFlagsRemove(uid, [o.flag], { uid: true });
              } else if (o.kind === "expunge")
                await other.messageDelete([...new Set(o.picks.map(at))].join(","), { uid: true });
              else await other.messageMove(String(at(o.pick)), "Archive", { uid: true });
            }
            for (const q of batch.asks) {
              const before = anyFullSort();
              await expectFresh(folder, q);
              if (anyFullSort() === before) incremental++;
            }
          }
        },
      ),
      { numRuns: 15 },
    );
    // The property exercised the remembered answer, not only fresh SORTs.
    expect(incremental).toBeGreaterThan(0);
  }, 240_000);
});
