/**
 * A watch under NOTIFY and a folder outside the personal namespace: NOTIFY's `personal` does not
 * cover a public or shared folder, so another client's change there would reach the cache only at
 * the next pass (and the folder counted fresh by its last sync meanwhile). The watch checks such
 * folders that queries read lately by STATUS, as it checks every read folder without NOTIFY, and
 * never polls the personal folders NOTIFY covers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type SyncResult,
  isWatched,
  noteCacheRead,
  syncAccount,
  watchInbox,
  watchMode,
} from "../src/cache/index.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type CacheEnv, startCacheEnv, until } from "./support/cache-env.js";

// A public namespace in each user's home: Dovecot lists it in NAMESPACE's shared part.
const PUBLIC_NAMESPACE = `
namespace public {
  type = public
  separator = /
  prefix = Public/
  location = maildir:%h/Public:LAYOUT=fs
  subscriptions = no
  list = yes
}
`;

let env: CacheEnv;
const msg = (n: number) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `Shared ${n}`,
    date: new Date(),
    messageId: `<ns${n}@example.com>`,
    text: "hi\n",
  });

beforeAll(async () => {
  env = await startCacheEnv({ extraConfig: PUBLIC_NAMESPACE });
  const c = await env.client();
  await c.mailboxCreate("Public/Team");
  await c.mailboxCreate("Projects");
  await env.append("Public/Team", msg(1));
  await syncAccount(env.db, c, "acct");
});
afterAll(async () => {
  await env?.close();
});

describe("a NOTIFY watch and a folder in a public namespace", () => {
  it("finds another client's change in a public folder a query read, by STATUS within seconds", async () => {
    const c = await env.client();
    const shared = c.namespaces?.shared;
    expect(Array.isArray(shared) ? shared.map((ns) => ns.prefix) : []).toContain("Public/");
    const cached = (folder: string) =>
      (
        env.db
          .prepare(
            "SELECT COUNT(*) AS n FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.account = ? AND f.path = ?",
          )
          .get("acct", folder) as { n: number }
      ).n;
    expect(cached("Public/Team")).toBe(1);
    const synced: SyncResult[] = [];
    const watch = await watchInbox(env.db, c, "acct", {
      allFolders: true,
      checkMs: 200,
      onSync: (r) => synced.push(r),
    });
    try {
      expect(watchMode("acct")).toBe("notify");
      expect(isWatched("acct", "Projects")).toBe(true);
      // NOTIFY does not tell of the public folder: the watch must not claim it
      expect(isWatched("acct", "Public/Team")).toBe(false);

      noteCacheRead("acct", "Public/Team");
      noteCacheRead("acct", "Projects");
      await env.append("Public/Team", msg(2));
      // (the rows are stored before the sync reports: wait for its report, then look at both)
      await until("the public folder's sync", () => synced.some((r) => r.folder === "Public/Team"));
      expect(synced.find((r) => r.folder === "Public/Team")).toMatchObject({ added: 1 });
      expect(cached("Public/Team")).toBe(2);

      // A personal folder's news still comes by NOTIFY (the check skips it: one sync, not two)
      await env.append("Projects", msg(3));
      await until("the personal folder's sync", () =>
        synced.some((r) => r.folder === "Projects" && r.added > 0),
      );
      expect(cached("Projects")).toBe(1);
      await new Promise((r) => setTimeout(r, 600));
      expect(synced.filter((r) => r.folder === "Projects" && r.added > 0)).toHaveLength(1);
    } finally {
      await watch.stop();
    }
  });
});
