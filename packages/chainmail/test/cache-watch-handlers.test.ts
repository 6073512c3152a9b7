import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheStatus, searchCache, waitOnTimers, watchInbox } from "../src/cache/index.js";
import { parseQuery } from "../src/query/index.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type CacheEnv, startCacheEnv } from "./support/cache-env.js";

// A caller's handler is the caller's code: one that throws must neither end the watch, nor count as
// the folder's sync failure in cache_status, nor become an unhandled rejection (fatal in a daemon).
let env: CacheEnv;
const msg = (n: number) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `Handled ${n}`,
    date: new Date(),
    messageId: `<h${n}@example.com>`,
    text: "hi\n",
  });

const rejections: unknown[] = [];
const onRejection = (e: unknown) => rejections.push(e);

beforeAll(async () => {
  process.on("unhandledRejection", onRejection);
  env = await startCacheEnv();
  // A write lock held past this fails a sync (the daemon's writes wait 30 s)
  waitOnTimers(env.db, 300);
  await env.append("INBOX", msg(1));
});
afterAll(async () => {
  process.off("unhandledRejection", onRejection);
  await env?.close();
});

const cached = () => searchCache(env.db, parseQuery("subject:handled")).count;
async function until(what: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("watchInbox with handlers that throw", () => {
  it("keeps watching, records no sync failure and leaves no unhandled rejection", async () => {
    let syncs = 0;
    let errors = 0;
    const c = await env.client();
    const watch = await watchInbox(env.db, c, "acct", {
      onSync: () => {
        syncs++;
        throw new Error("the caller's onSync failed");
      },
      onError: () => {
        errors++;
        throw new Error("the caller's onError failed");
      },
    });
    try {
      expect(cached()).toBe(1);
      for (const n of [2, 3]) {
        await env.append("INBOX", msg(n));
        await until(() => cached() === n);
      }
      // Every sync reached its handler, and none of them counted as a failed sync
      await until(() => syncs >= 3);
      expect(errors).toBe(0);
      const folder = cacheStatus(env.db, { now: Date.now() }).accounts[0]?.folders[0];
      expect(folder).toMatchObject({ name: "INBOX", watching: true, watch_error: null });
      await new Promise((r) => setTimeout(r, 50));
      expect(rejections).toEqual([]);
    } finally {
      await watch.stop();
    }
  });

  it("records a failed sync as the folder's error even when onError throws, and goes on after it", async () => {
    const failures: unknown[] = [];
    const c = await env.client();
    const watch = await watchInbox(env.db, c, "acct", {
      onError: (e) => {
        failures.push(e);
        throw new Error("the caller's onError failed");
      },
    });
    const before = cached();
    // A real failure: another process holds cache.db's write lock when new mail arrives
    const other = new Database(path.join(env.dir, "cache.db"));
    other.exec("BEGIN IMMEDIATE");
    try {
      await env.append("INBOX", msg(before + 1));
      await until(() => failures.length > 0);
      const folder = cacheStatus(env.db, { now: Date.now() }).accounts[0]?.folders[0];
      expect(folder?.watch_error).toMatch(/locked|busy/i);
    } finally {
      other.exec("COMMIT");
      other.close();
    }
    try {
      await env.append("INBOX", msg(before + 2));
      await until(() => cached() === before + 2);
      await until(
        () => cacheStatus(env.db, { now: Date.now() }).accounts[0]?.folders[0]?.watch_error === null,
      );
      await new Promise((r) => setTimeout(r, 50));
      expect(rejections).toEqual([]);
    } finally {
      await watch.stop();
    }
  });
});
