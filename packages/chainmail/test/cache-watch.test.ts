import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SyncResult, cacheStatus, isWatched, searchCache, watchInbox } from "../src/cache/index.js";
import { parseQuery } from "../src/query/index.js";
import { type CacheEnv, startCacheEnv } from "./support/cache-env.js";
import { buildMessage } from "../src/testing/corpus.js";

let env: CacheEnv;
const msg = (n: number) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `Watched ${n}`,
    date: new Date(),
    messageId: `<w${n}@example.com>`,
    text: "hi\n",
  });

beforeAll(async () => {
  env = await startCacheEnv();
  await env.append("INBOX", msg(1));
});
afterAll(async () => {
  await env?.close();
});

/** Starts a watch and a promise of the first later sync that adds mail (rejecting after 10 s). */
async function startWatch(options: Parameters<typeof watchInbox>[3] = {}) {
  const c = await env.client();
  const syncs: SyncResult[] = [];
  let arrived: () => void = () => undefined;
  const gotNew = new Promise<void>((r) => {
    arrived = r;
  });
  const watch = await watchInbox(env.db, c, "acct", {
    ...options,
    onSync: (r) => {
      syncs.push(r);
      if (r.added > 0 && syncs.length > 1) arrived();
    },
  });
  const nextNewMail = () =>
    Promise.race([
      gotNew,
      new Promise((_, rej) => setTimeout(() => rej(new Error("no sync after new mail")), 10_000)),
    ]);
  return { watch, syncs, nextNewMail };
}

describe("watchInbox", () => {
  it("syncs on start, stays fresh while IDLE runs, and syncs new mail as it arrives", async () => {
    const { watch, syncs, nextNewMail } = await startWatch();
    expect(syncs[0]).toMatchObject({ added: 1 });
    expect(isWatched("acct", "INBOX")).toBe(true);
    // freshSeconds 0 would make any synced folder stale; a watched one stays fresh
    const st = cacheStatus(env.db, { freshSeconds: 0, now: Date.now() + 60_000 });
    expect(st.accounts[0]?.folders[0]).toMatchObject({ name: "INBOX", watching: true, fresh: true });

    await env.append("INBOX", msg(2));
    await nextNewMail();
    expect(searchCache(env.db, parseQuery("subject:watched")).count).toBe(2);

    await watch.stop();
    expect(isWatched("acct", "INBOX")).toBe(false);
    const after = cacheStatus(env.db, { freshSeconds: 0, now: Date.now() + 60_000 });
    expect(after.accounts[0]?.folders[0]).toMatchObject({ watching: false, fresh: false });
  });

  it("fetches new mail's bodies with bodies set, so a word search finds it in the cache", async () => {
    const { watch, nextNewMail } = await startWatch({ bodies: { dailyBudgetBytes: 10 * 1024 * 1024 } });
    const word = "zanzibarquokka";
    await env.append(
      "INBOX",
      buildMessage({
        from: "Eve <eve@example.com>",
        to: ["alice@example.com"],
        subject: "Body words",
        date: new Date(),
        messageId: "<w-body@example.com>",
        text: `The ${word} arrived.\n`,
      }),
    );
    await nextNewMail();
    // onSync runs after the bodies are in: the word is found at once, with no other backfill.
    expect(searchCache(env.db, parseQuery(word)).count).toBe(1);
    const stored = env.db
      .prepare(
        "SELECT m.body_state AS state FROM messages m JOIN message_meta mm ON mm.id = m.id WHERE mm.message_id LIKE '%w-body@example.com%'",
      )
      .all() as { state: number }[];
    expect(stored).toHaveLength(1);
    expect(stored[0]!.state).not.toBe(0); // 0 = body not fetched yet
    await watch.stop();
  });
});
