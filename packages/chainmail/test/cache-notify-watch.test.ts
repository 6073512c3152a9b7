/**
 * watchInbox with allFolders on Dovecot (which offers NOTIFY): the STATUS the server sends for every
 * personal folder when NOTIFY starts syncs only the folders the cache is behind on, and a later
 * change in another folder syncs that folder, on the watch's own connection, which then has its
 * watched folder selected again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SyncResult, isWatched, syncAccount, watchInbox } from "../src/cache/index.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type CacheEnv, startCacheEnv, until } from "./support/cache-env.js";

let env: CacheEnv;
const msg = (n: number) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `Notified ${n}`,
    date: new Date(),
    messageId: `<nw${n}@example.com>`,
    text: "hi\n",
  });

beforeAll(async () => {
  env = await startCacheEnv();
  const c = await env.client();
  await c.mailboxCreate("Synced");
  await c.mailboxCreate("Behind");
  await env.append("Synced", msg(1));
  await syncAccount(env.db, c, "acct");
  // Arrives after the cache's pass: only the NOTIFY STATUS at start can tell the watch of it.
  await env.append("Behind", msg(2));
});
afterAll(async () => {
  await env?.close();
});

describe("watchInbox with allFolders", () => {
  it("syncs the folders the cache is behind on at start, and a folder another client changes", async () => {
    const c = await env.client();
    const synced: SyncResult[] = [];
    const watch = await watchInbox(env.db, c, "acct", {
      allFolders: true,
      onSync: (r) => synced.push(r),
    });
    try {
      await until("the sync of Behind", () => synced.some((r) => r.folder === "Behind"));
      expect(synced.find((r) => r.folder === "Behind")).toMatchObject({ added: 1 });
      expect(isWatched("acct", "Behind")).toBe(true);
      expect(isWatched("acct", "Synced")).toBe(true);

      await env.append("Synced", msg(3));
      await until("the sync of Synced", () => synced.some((r) => r.folder === "Synced" && r.added === 1));
      // Synced was up to date when NOTIFY started: its one sync is the one the append caused.
      expect(synced.filter((r) => r.folder === "Synced")).toHaveLength(1);
      await until("INBOX selected again", () => c.mailbox !== false && c.mailbox.path === "INBOX");
    } finally {
      await watch.stop();
    }
    expect(isWatched("acct", "Synced")).toBe(false);
  });
});
