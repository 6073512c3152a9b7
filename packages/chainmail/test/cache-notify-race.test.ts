/**
 * The failure that had the first NOTIFY watch reverted: a change to the watched folder (INBOX) made
 * while the watch's connection had another folder selected for a sync was never synced. Dovecot 2.3
 * tells a change of an unselected folder under NOTIFY by a STATUS sent only once the connection is
 * idle again, and the watch selected INBOX again before that, which drops the news (INBOX selected
 * is no longer reported by STATUS, and the SELECT's EXISTS is not a change to imapflow). Here every
 * folder is behind the cache, so NOTIFY's first STATUS queues a sync of each, and another client
 * appends to INBOX while one of them is being synced; without NOTIFY the same holds for a STATUS
 * check's sync of a folder a query read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SyncResult, noteCacheRead, syncAccount, watchInbox } from "../src/cache/index.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type CacheEnv, startCacheEnv, until } from "./support/cache-env.js";

let env: CacheEnv;
let n = 0;
const msg = (subject: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["carla@example.com"],
    subject,
    date: new Date(),
    messageId: `<race${++n}@example.com>`,
    text: "hi\n",
  });
const FOLDERS = Array.from({ length: 8 }, (_, i) => `Race${i}`);

beforeAll(async () => {
  env = await startCacheEnv();
  const c = await env.client();
  for (const f of FOLDERS) {
    await c.mailboxCreate(f);
    await env.append(f, msg(`in ${f}`));
  }
});
afterAll(async () => {
  await env?.close();
});

/** The cache holds a message with this subject in INBOX. */
const inCachedInbox = (subject: string) =>
  env.db
    .prepare(
      "SELECT 1 FROM messages m JOIN message_meta x ON x.id = m.id JOIN folders f ON f.id = m.folder_id WHERE f.path = 'INBOX' AND x.subject = ?",
    )
    .get(subject) !== undefined;

describe("a change to the watched folder while the watch syncs another", () => {
  // Each case appends while a different folder of the queue is being synced: early, middle, last.
  for (const at of ["Race7", "Race3", "Race0"]) {
    it(`is synced (NOTIFY, appended while ${at} syncs)`, async () => {
      // Every folder behind the cache again: its rows dropped
      env.db.exec("DELETE FROM messages; DELETE FROM folders");
      const c = await env.client();
      const synced: SyncResult[] = [];
      let appended: Promise<number> | undefined;
      const watch = await watchInbox(env.db, c, "acct", {
        allFolders: true,
        onSync: (r) => {
          synced.push(r);
          if (r.folder === at && !appended) appended = env.append("INBOX", msg(`while ${at}`));
        },
      });
      try {
        expect(watch.mode).toBe("notify");
        await until(`the sync of ${at}`, () => appended !== undefined, 15_000);
        await appended;
        await until("the appended message in the cache's INBOX", () => inCachedInbox(`while ${at}`), 15_000);
        // The watched folder is selected again, so its next news comes as EXISTS
        await until("INBOX selected", () => c.mailbox !== false && c.mailbox.path === "INBOX", 15_000);
        await env.append("INBOX", msg(`after ${at}`));
        await until("the next message", () => inCachedInbox(`after ${at}`), 15_000);
      } finally {
        await watch.stop();
      }
    }, 60_000);
  }

  it("is synced without NOTIFY, after a check's sync of a folder a query read", async () => {
    env.db.exec("DELETE FROM messages; DELETE FROM folders");
    const setup = await env.client();
    await syncAccount(env.db, setup, "acct");
    await setup.logout();
    const c = await env.client();
    const synced: SyncResult[] = [];
    let appended: Promise<number> | undefined;
    const watch = await watchInbox(env.db, c, "acct", {
      allFolders: true,
      notify: false,
      checkMs: 200,
      onSync: (r) => {
        synced.push(r);
        if (r.folder === "Race5" && !appended) appended = env.append("INBOX", msg("while Race5, no NOTIFY"));
      },
    });
    try {
      expect(watch.mode).toBe("idle");
      noteCacheRead("acct", "Race5");
      await env.append("Race5", msg("new in Race5"));
      await until(
        "the check's sync of Race5",
        () => synced.some((r) => r.folder === "Race5" && r.added === 1),
        15_000,
      );
      await appended;
      await until(
        "the appended message in the cache's INBOX",
        () => inCachedInbox("while Race5, no NOTIFY"),
        15_000,
      );
    } finally {
      await watch.stop();
    }
  }, 60_000);
});
