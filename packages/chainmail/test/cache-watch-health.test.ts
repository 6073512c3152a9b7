/**
 * A watched INBOX is fresh only while its watch's syncs succeed, and cache_status shows the watch's
 * last error. The failure is real: another process holds cache.db's write lock (as a sqlite3 shell
 * left in a transaction would) when new mail arrives, past the time the daemon's writes wait for it
 * (300 ms here, 30 s by default), so the watch's sync cannot store it.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

const msg = (n: number) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `Health ${n}`,
    date: new Date(),
    messageId: `<health${n}@example.com>`,
    text: "hi\n",
  });

beforeAll(async () => {
  env = await startMailEnv({
    cache: "background = true\nsync_interval_seconds = 3600\nfresh_seconds = 1",
    cacheWriteWaitMs: 300,
  });
});
afterAll(async () => {
  await env?.stop();
});

async function inbox() {
  const s = await env.client.cacheStatus({ accounts: ["work"] });
  return { account: s.accounts[0]!, folder: s.accounts[0]!.folders.find((f) => f.name === "INBOX")! };
}

async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a watched INBOX whose syncs fail", () => {
  it("is not fresh, shows the watch's last error, and is fresh again after a good sync", async () => {
    const first = await until("the watch", inbox, (v) => v.folder?.watching === true);
    expect(first.folder).toMatchObject({ watching: true, fresh: true, watch_error: null });
    // Past fresh_seconds, only the watch keeps INBOX fresh.
    await new Promise((r) => setTimeout(r, 1200));
    expect((await inbox()).folder.fresh).toBe(true);

    const other = new Database(env.home.cacheFile);
    other.exec("BEGIN IMMEDIATE");
    try {
      await env.dv.appendMessage("alice", "INBOX", msg(1));
      const failed = await until("the watch's error", inbox, (v) => v.folder.watch_error !== null);
      expect(failed.folder).toMatchObject({ watching: true, fresh: false });
      expect(failed.folder.watch_error).toMatch(/locked|busy/i);
      expect(failed.account.state).toBe("error");
      const auto = await env.client.search({ query: "in:inbox", accounts: ["work"] });
      expect(auto.source).toBe("server");
      expect(auto.rows.map((r) => r.subject)).toContain("Health 1");
    } finally {
      other.exec("COMMIT");
      other.close();
    }

    await env.dv.appendMessage("alice", "INBOX", msg(2));
    const healed = await until("a good watch sync", inbox, (v) => v.folder.watch_error === null);
    expect(healed.folder).toMatchObject({ watching: true, fresh: true, messages: 2 });
  }, 60_000);
});
