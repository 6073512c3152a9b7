/**
 * The daemon's cache against Dovecot: `source` auto picks the server before a sync and the cache
 * after it, the three sources agree, get_message/get_thread read from the cache when it suffices,
 * cache.status, a restart keeps the cache, changes through the daemon make the cache step aside until
 * the next sync, and a UIDVALIDITY change recovers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchResult } from "../src/service/search/index.js";
import { generateCorpus } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const corpus = generateCorpus({ hugeBytes: 300_000 });

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    corpus.map((m) => ({ raw: m.raw, flags: m.flags ?? [] })),
  );
  await env.dv.appendMessages(
    "bob",
    "INBOX",
    corpus.slice(0, 5).map((m) => ({ raw: m.raw, flags: m.flags ?? [] })),
  );
});
afterAll(async () => {
  await env?.stop();
});

const refsOf = (r: SearchResult) => r.rows.map((x) => x.ref).sort();
const QUERIES = [
  "",
  "budget",
  "from:carol",
  "is:unread",
  "has:attachment",
  'subject:"project thread"',
  "quarterly OR invoice",
  "-is:read filler",
  "account:home budget",
  "{account:work account:home} from:carol",
  // Terms with no letter or digit are left out by both (Dovecot's substring search matched "..."
  // in a few messages, the cache every message)
  "...",
  "budget OR ...",
  "-!! budget",
  "from:@ subject:?",
];

let serverRead: Awaited<ReturnType<MailEnv["client"]["getMessages"]>>;

describe("before the first sync", () => {
  it("auto answers from the server and the cache is empty", async () => {
    const res = await env.client.search({ query: "budget", limit: 200 });
    expect(res.source).toBe("server");
    expect(res.account_counts.every((c) => c.source === "server")).toBe(true);
    const status = await env.client.cacheStatus();
    expect(status.accounts.map((a) => a.state)).toEqual(["empty", "empty"]);
    const forced = await env.client.search({ query: "budget", source: "cache" });
    expect(forced.source).toBe("cache");
    expect(forced.count).toBe(0);
    expect(forced.partial.map((p) => p.account).sort()).toEqual(["home", "work"]);
    expect(forced.partial[0]!.error.reason).toBe("UNSUPPORTED");
    const ref = res.rows.find((r) => r.account === "work")!.ref;
    serverRead = await env.client.getMessages({ refs: [ref] });
    expect(serverRead.source).toBe("server");
  });
});

describe("after a sync", () => {
  beforeAll(async () => {
    const { accounts } = await env.client.cacheSync();
    expect(accounts.map((a) => [a.account, a.ok])).toEqual([
      ["work", true],
      ["home", true],
    ]);
    expect(accounts[0]!.added).toBe(corpus.length);
  });

  it("cache status reports every folder complete with its bodies", async () => {
    const status = await env.client.cacheStatus({ accounts: ["work"] });
    const work = status.accounts[0]!;
    expect(work.account).toBe("work");
    expect(work.state).toBe("ready");
    const inbox = work.folders.find((f) => f.name === "INBOX")!;
    expect(inbox).toMatchObject({
      role: "inbox",
      messages: corpus.length,
      headers_cached: corpus.length,
      backfill: 1,
      complete: true,
      fresh: true,
      watching: false,
    });
    expect(inbox.body_coverage).toBe(1);
    expect(work.download_today.bytes).toBeGreaterThan(0);
    expect(status.size_bytes).toBeGreaterThan(0);
    expect(status.max_size_bytes).toBe(2 * 1024 ** 3);
    await expect(env.client.cacheStatus({ accounts: ["nope"] })).rejects.toMatchObject({
      reason: "NOT_FOUND",
    });
  });

  it("auto answers from the cache, and the three sources return the same rows", async () => {
    for (const query of QUERIES) {
      const auto = await env.client.search({ query, limit: 200 });
      const cache = await env.client.search({ query, limit: 200, source: "cache" });
      const server = await env.client.search({ query, limit: 200, source: "server" });
      expect(auto.source, query).toBe("cache");
      expect(auto.account_counts.length, query).toBeGreaterThan(0);
      expect(auto.account_counts.every((c) => c.source === "cache")).toBe(true);
      expect(server.source).toBe("server");
      expect(cache.partial).toEqual([]);
      expect(refsOf(cache), query).toEqual(refsOf(server));
      expect(refsOf(auto), query).toEqual(refsOf(server));
      expect(cache.count, query).toBe(server.count);
      expect(cache.account_counts.map((c) => c.count)).toEqual(server.account_counts.map((c) => c.count));
      // The shared row fields agree too.
      const byRef = new Map(server.rows.map((r) => [r.ref, r]));
      for (const row of cache.rows) {
        const s = byRef.get(row.ref)!;
        expect({ ...row, date: undefined }, query).toEqual({ ...s, date: undefined });
      }
    }
  });

  it("pages the cache with its cursor and refuses another query's cursor", async () => {
    const first = await env.client.search({ query: "", limit: 4, accounts: ["work"] });
    expect(first.source).toBe("cache");
    expect(first.next_cursor).toMatch(/\S/);
    const seen = [...first.rows.map((r) => r.ref)];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await env.client.search({ query: "", limit: 4, accounts: ["work"], cursor });
      seen.push(...page.rows.map((r) => r.ref));
      cursor = page.next_cursor;
    }
    expect(new Set(seen).size).toBe(first.count);
    await expect(
      env.client.search({ query: "budget", limit: 4, accounts: ["work"], cursor: first.next_cursor! }),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
  });

  it("counts and snippets come from the cache", async () => {
    const counted = await env.client.search({ query: "budget", count_only: true });
    expect(counted.source).toBe("cache");
    expect(counted.rows).toEqual([]);
    const server = await env.client.search({ query: "budget", count_only: true, source: "server" });
    expect(counted.count).toBe(server.count);
    const withSnippets = await env.client.search({ query: "quarterly", snippets: true, accounts: ["work"] });
    expect(withSnippets.rows[0]!.snippet).toContain("quarterly");
  });

  it("get_message reads from the cache what it holds, and the server for the rest", async () => {
    const ref = serverRead.messages[0]!.ref;
    // A message the cache has not seen yet (appended behind the daemon's back) comes from the server.
    await env.dv.appendMessages("alice", "INBOX", [
      {
        raw: corpus[0]!.raw.replace("thread1.msg0", "late1").replace("Project thread 1", "Late arrival"),
        flags: [],
      },
    ]);
    const late = (
      await env.client.search({ query: 'subject:"late arrival"', accounts: ["work"], source: "server" })
    ).rows[0]!;
    expect(late.message_id).toBe("<late1@example.com>");
    const huge = (await env.client.search({ query: 'subject:"huge message"', accounts: ["work"] })).rows[0]!
      .ref;
    const res = await env.client.getMessages({ refs: [ref, late.ref, huge] });
    expect(res.messages.map((m) => m.source)).toEqual(["cache", "server", "cache"]);
    expect(res.messages[2]!.body.length).toBeGreaterThan(1000);
    expect(res.source).toBe("mixed");
    const cached = res.messages[0]!;
    const fromServer = serverRead.messages[0]!;
    expect({ ...cached, source: "x", body: "" }).toEqual({ ...fromServer, source: "x", body: "" });
    expect(cached.body.trim()).toBe(fromServer.body.trim());
    await env.client.cacheSync({ accounts: ["work"] });
  });

  it("get_thread reads each message from the cache", async () => {
    const ref = (await env.client.search({ query: 'subject:"project thread 2"', accounts: ["work"] }))
      .rows[0]!.ref;
    const t = await env.client.getThread({ ref });
    expect(t.messages).toHaveLength(3);
    expect(t.messages.every((m) => m.source === "cache")).toBe(true);
    expect(t.source).toBe("cache");
  });

  it("a change through the daemon sends the account to the server until the next sync", async () => {
    const hit = (await env.client.search({ query: "from:carol", accounts: ["work"] })).rows[0]!;
    expect(hit.flags).not.toContain("flagged");
    await env.client.setFlags({ refs: [hit.ref], add: ["flagged"] });
    const after = await env.client.search({ query: "from:carol is:flagged" });
    expect(after.account_counts).toEqual([
      { account: "work", count: 1, source: "server" },
      { account: "home", count: 0, source: "cache" },
    ]);
    expect(after.source).toBe("mixed");
    expect((await env.client.getMessages({ refs: [hit.ref] })).source).toBe("server");
    await env.client.cacheSync({ accounts: ["work"] });
    const synced = await env.client.search({ query: "from:carol is:flagged" });
    expect(synced.source).toBe("cache");
    expect(synced.rows.map((r) => r.ref)).toEqual([hit.ref]);
  });

  it("keeps its cache across a daemon restart", async () => {
    await env.restartDaemon();
    const status = await env.client.cacheStatus({ accounts: ["work"] });
    // The corpus and the late arrival.
    expect(status.accounts[0]!.folders.find((f) => f.name === "INBOX")!.headers_cached).toBe(
      corpus.length + 1,
    );
    const res = await env.client.search({ query: "budget" });
    expect(res.source).toBe("cache");
    expect(res.count).toBe((await env.client.search({ query: "budget", source: "server" })).count);
  });

  it("recovers from a UIDVALIDITY change through the daemon's sync", async () => {
    await env.client.createFolder({ account: "work", name: "Projects" });
    await env.dv.appendMessages(
      "alice",
      "Projects",
      corpus.slice(0, 3).map((m) => ({ raw: m.raw, flags: [] })),
    );
    await env.client.cacheSync({ accounts: ["work"] });
    const old = await env.client.search({ query: "in:projects", accounts: ["work"] });
    expect(old.source).toBe("cache");
    expect(old.count).toBe(3);
    env.dv.doveadm(["mailbox", "update", "-u", "alice", "--uid-validity", "4242", "Projects"]);
    const report = await env.client.cacheSync({ accounts: ["work"] });
    expect(report.accounts[0]!.ok).toBe(true);
    const fresh = await env.client.search({ query: "in:projects", accounts: ["work"] });
    expect(fresh.source).toBe("cache");
    expect(fresh.count).toBe(3);
    expect(refsOf(fresh)).not.toEqual(refsOf(old));
    expect(refsOf(fresh)).toEqual(
      refsOf(await env.client.search({ query: "in:projects", accounts: ["work"], source: "server" })),
    );
    await expect(env.client.getMessages({ refs: [old.rows[0]!.ref] })).rejects.toMatchObject({
      reason: "STALE_REF",
    });
  });
});

describe("the background loop", () => {
  it("syncs at start and keeps an IDLE watch on each INBOX that picks up new mail", async () => {
    env.writeConfig({ cache: "background = true\nsync_interval_seconds = 60" });
    await env.restartDaemon();
    const watching = async () => {
      for (let i = 0; i < 100; i++) {
        const s = await env.client.cacheStatus();
        const all = s.accounts.map((a) => a.folders.find((f) => f.name === "INBOX")?.watching);
        if (all.every(Boolean)) return s;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("no IDLE watch started");
    };
    const s = await watching();
    expect(s.accounts.map((a) => a.state)).toEqual(["ready", "ready"]);
    await env.dv.appendMessages("bob", "INBOX", [
      { raw: corpus[1]!.raw.replace("Project thread 1", "Idle news"), flags: [] },
    ]);
    let found = 0;
    for (let i = 0; i < 100 && found === 0; i++) {
      found = (await env.client.search({ query: 'subject:"idle news"', accounts: ["home"], source: "cache" }))
        .count;
      if (!found) await new Promise((r) => setTimeout(r, 100));
    }
    expect(found).toBe(1);
  });
});
