/**
 * Under a small max_size_bytes a mailbox whose bodies do not fit settles: the backfill fetches bodies
 * newest first until the next one would not fit, then stops for good, so fetching and eviction never
 * chase each other. Body fetches are counted where they happen, as FETCH commands on the wire (a
 * proxy between the cache and a real Dovecot), over several passes; new mail still gets its body,
 * which pushes the oldest stored body out without fetching any older one. cache_status says how far
 * back bodies reach, and a word search decides from that: the cache when the query's date bound lies
 * within the reach, the server otherwise.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheCanAnswerQuery } from "../src/cache/index.js";
import { type Config, parseConfig } from "../src/config.js";
import { CacheRunner } from "../src/daemon/cache-runner.js";
import { parseQuery } from "../src/query/parser.js";
import { setSecret } from "../src/secrets.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";
import { type ImapProxy, startImapProxy } from "../src/testing/imap-proxy.js";
import { configToml } from "../src/testing/mailenv.js";

const N = 300;
const MAX = 1024 * 1024;
const DAY = 86_400_000;
const START = Date.UTC(2020, 0, 1);
/** Message i arrived on day i: the higher i, the newer. */
const arrival = (i: number) => new Date(START + i * DAY);

/** A deterministic pseudo-random text of about `bytes` bytes, so the FTS index grows as with real mail. */
function text(seed: number, bytes: number): string {
  let x = seed * 2654435761 + 1;
  const words: string[] = [];
  let n = 0;
  while (n < bytes) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const w = `w${(x % 50_000).toString(36)}`;
    words.push(w);
    n += w.length + 1;
  }
  return words.join(" ");
}

function message(i: number): string {
  return [
    "From: Carol <carol@example.org>",
    "To: alice@example.com",
    `Subject: report ${i}`,
    `Date: ${arrival(i).toUTCString()}`,
    `Message-ID: <settle-${i}@example.org>`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Number ${i}: marker${i} ${text(i, 16 * 1024)}`,
    "",
  ].join("\r\n");
}

let dv: Dovecot;
let proxy: ImapProxy;
let dir: string;
let config: Config;
/** UIDs the cache asked a body of, one entry per message per FETCH. */
const bodyFetches: number[] = [];

/** Expands a UID set ("3,5:7") of a FETCH line. */
function uids(set: string): number[] {
  return set.split(",").flatMap((r) => {
    const [a, b] = r.split(":").map(Number) as [number, number | undefined];
    if (b === undefined) return [a];
    const out: number[] = [];
    for (let u = Math.min(a, b); u <= Math.max(a, b); u++) out.push(u);
    return out;
  });
}

beforeAll(async () => {
  dv = await startDovecot({ users: [{ name: "alice", password: "alice-secret-pw" }] });
  const c = await dv.connect("alice");
  try {
    for (let i = 0; i < N; i++) await c.append("INBOX", message(i), [], arrival(i));
  } finally {
    await c.logout();
  }
  proxy = await startImapProxy({
    upstream: dv.port,
    onCommand: (line) => {
      // A body is asked for as BODY.PEEK[] (whole message) or BODY/BINARY.PEEK[part]; headers as
      // BODY.PEEK[HEADER...] or the ENVELOPE, which are not counted.
      const m = /^\S+ UID FETCH (\S+) (.*)$/i.exec(line);
      if (m && /(BODY|BINARY)\.PEEK\[(\]|\d)/i.test(m[2] as string))
        bodyFetches.push(...uids(m[1] as string));
    },
  });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-settle-"));
  const all = parseConfig(configToml(dv, { cache: `max_size_bytes = ${MAX}`, work: { port: proxy.port } }));
  config = { ...all, accounts: all.accounts.filter((a) => a.name === "work") };
  setSecret(path.join(dir, "secrets"), "work", "alice-secret-pw");
}, 120_000);

afterAll(async () => {
  await proxy?.stop();
  await dv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a mailbox whose bodies do not fit the cache", () => {
  it("settles: bodies newest first up to the bound, then no more fetches, pass after pass", async () => {
    const runner = new CacheRunner(
      path.join(dir, "cache.db"),
      () => config,
      path.join(dir, "secrets"),
      () => {},
    );
    const account = config.accounts[0] as Config["accounts"][number];
    try {
      const first = await runner.sync(account);
      expect(first).toMatchObject({ ok: true, added: N });
      const fetched = bodyFetches.length;
      // Some fit, not all: the bound is what stopped the backfill, not the end of the mail
      expect(fetched).toBeGreaterThan(5);
      expect(fetched).toBeLessThan(N / 2);
      // Each body fetched once, and they are the newest ones, without a gap
      expect(new Set(bodyFetches).size).toBe(fetched);
      const stored = () =>
        (
          runner.db
            .prepare("SELECT uid FROM messages WHERE body_state = 1 ORDER BY internal_date DESC")
            .all() as { uid: number }[]
        ).map((r) => r.uid);
      const newest = (
        runner.db.prepare("SELECT uid FROM messages ORDER BY internal_date DESC").all() as { uid: number }[]
      ).map((r) => r.uid);
      const kept = stored();
      expect(kept).toEqual(newest.slice(0, kept.length));
      expect([...bodyFetches].sort((a, b) => b - a).slice(0, kept.length)).toEqual(
        [...kept].sort((a, b) => b - a),
      );

      const status = runner.status(["work"]);
      expect(status.size_bytes).toBeLessThanOrEqual(MAX);
      const acct = status.accounts[0];
      expect(acct?.body_budget_reached).toBe(true);
      // The cost of a body is estimated before its FETCH, so the pass may overshoot the bound a
      // little; eviction then drops the oldest fetched bodies once (their words stay indexed), and
      // bodies reach back to the oldest fetched one
      expect(first.evicted).toBe(fetched - kept.length);
      expect(acct?.bodies_since).toBe(arrival(N - fetched).toISOString());

      // More passes (the background schedule, `cache sync`): not one more body fetched
      for (let pass = 0; pass < 3; pass++) {
        expect(await runner.sync(account)).toMatchObject({ ok: true, bodies: 0 });
        expect(bodyFetches.length).toBe(fetched);
      }
      expect(stored()).toEqual(kept);

      // A word search of older mail cannot be answered by the cache alone (the server answers it),
      // a header search can
      const bodyWord = cacheCanAnswerQuery(runner.db, "work", parseQuery("marker3"));
      expect(bodyWord.complete).toBe(false);
      expect(bodyWord.lacking).toContainEqual({ folder: "INBOX", reason: "bodies" });
      expect(cacheCanAnswerQuery(runner.db, "work", parseQuery("from:carol")).complete).toBe(true);
      // ...and a word search of the mail bodies reach is the cache's: every message since then has its words
      const day = (i: number) => arrival(i).toISOString().slice(0, 10);
      const recent = cacheCanAnswerQuery(
        runner.db,
        "work",
        parseQuery(`marker${N - 1} after:${day(N - fetched)}`),
      );
      expect(recent).toMatchObject({ complete: true, lacking: [] });
      const older = cacheCanAnswerQuery(
        runner.db,
        "work",
        parseQuery(`marker3 after:${day(N - fetched - 1)}`),
      );
      expect(older.complete).toBe(false);

      // New mail gets its body: one fetch, and only the oldest stored bodies make room
      // (appended now: the newest arrival)
      await dv.appendMessage("alice", "INBOX", message(N));
      const after = await runner.sync(account);
      expect(after).toMatchObject({ ok: true, added: 1, bodies: 1 });
      expect(bodyFetches.length).toBe(fetched + 1);
      for (let pass = 0; pass < 2; pass++) {
        await runner.sync(account);
        expect(bodyFetches.length).toBe(fetched + 1);
      }
      expect(runner.status(["work"]).size_bytes).toBeLessThanOrEqual(MAX);
      const now = stored();
      expect(now).toEqual(
        (runner.db.prepare("SELECT uid FROM messages ORDER BY internal_date DESC").all() as { uid: number }[])
          .map((r) => r.uid)
          .slice(0, now.length),
      );
      expect(runner.status(["work"]).accounts[0]?.body_budget_reached).toBe(true);

      // A raised bound resumes the backfill where it stopped (older bodies), and it settles again
      const settledAt = bodyFetches.length;
      const before = stored();
      config = { ...config, cache: { ...config.cache, max_size_bytes: 3 * MAX } };
      const raised = await runner.sync(account);
      expect(raised.ok).toBe(true);
      expect(raised.bodies).toBeGreaterThan(0);
      const resumed = bodyFetches.slice(settledAt);
      expect(resumed.length).toBe(raised.bodies);
      expect(Math.max(...resumed)).toBeLessThan(Math.min(...before));
      const again = bodyFetches.length;
      for (let pass = 0; pass < 2; pass++) {
        await runner.sync(account);
        expect(bodyFetches.length).toBe(again);
      }
      expect(runner.status(["work"]).size_bytes).toBeLessThanOrEqual(3 * MAX);
    } finally {
      await runner.stop();
    }
  }, 120_000);
});
