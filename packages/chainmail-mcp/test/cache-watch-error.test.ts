/**
 * cache_status over MCP shows why a watched INBOX is not fresh: its watch's failed sync (another
 * process holds cache.db's write lock when new mail arrives) is the folder's error, as untrusted.
 */
// chainmail's own cache module opens the file (better-sqlite3 is its dependency, not ours).
import { openCache } from "@mcpforge/chainmail/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, type McpEnv, startMcpEnv } from "./helpers.js";

let m: McpEnv;
beforeAll(async () => {
  // (the daemon waits 300 ms, not 30 s, for the lock before the watch's sync fails)
  m = await startMcpEnv({
    cache: "background = true\nsync_interval_seconds = 3600\nfresh_seconds = 1",
    cacheWriteWaitMs: 300,
  });
});
afterAll(async () => {
  await m?.close();
});

type Status = { accounts: Array<{ account: string; state: string; folders: Json[] }> };

async function inbox(): Promise<Json | undefined> {
  const r = await m.tools.ok<Status>("cache_status", { accounts: ["work"] });
  return r.accounts[0]!.folders.find((f) => (f["name"] as { untrusted: string }).untrusted === "INBOX");
}

async function until(what: string, ok: (f: Json | undefined) => boolean): Promise<Json> {
  const end = Date.now() + 30_000;
  for (;;) {
    const f = await inbox();
    if (ok(f)) return f!;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(f)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("cache_status of a watched INBOX whose sync failed", () => {
  it("is not fresh and carries the watch's error", async () => {
    expect(await until("the watch", (f) => f?.["watching"] === true)).toMatchObject({
      fresh: true,
      error: null,
    });
    await new Promise((r) => setTimeout(r, 1200));
    const other = openCache(m.env.home.cacheFile);
    other.exec("BEGIN IMMEDIATE");
    try {
      await m.env.dv.appendMessage("alice", "INBOX", "From: a@example.com\r\nSubject: lock\r\n\r\nhi\r\n");
      const f = await until("the error", (x) => x?.["error"] !== null);
      expect(f).toMatchObject({ watching: true, fresh: false });
      expect((f["error"] as { untrusted: string }).untrusted).toMatch(/locked|busy/i);
    } finally {
      other.exec("COMMIT");
      other.close();
    }
  }, 60_000);
});
