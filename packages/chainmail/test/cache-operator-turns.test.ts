// The operator's `cache evict` while the cache's writer thread holds cache.db's write lock (a first
// sync's batch, a backfill's merging): it waits for its turn with the event loop free, where a
// write straight into SQLite's busy wait would hold every search up until the lock came free.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { putBody } from "../src/cache/body-store.js";
import { ensureFolder, headerRow, writeHeaderRow } from "../src/cache/store.js";
import { headerWriter, holdWriterTransactions } from "../src/cache/writer.js";
import { parseConfig } from "../src/config.js";
import { CacheRunner } from "../src/daemon/cache-runner.js";
import { MailError } from "../src/errors.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";
import { lockTaken } from "./support/write-lock.js";

const NOW = new Date(Date.UTC(2026, 0, 15));
const dirs: string[] = [];
afterEach(() => {
  holdWriterTransactions(0);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("cache evict", () => {
  it("waits for the writer thread's transaction with the event loop free, then evicts", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-evict-turn-"));
    dirs.push(dir);
    const file = path.join(dir, "cache.db");
    const config = parseConfig("");
    const runner = new CacheRunner(
      file,
      () => config,
      path.join(dir, "secrets"),
      () => {},
    );
    try {
      const folder = ensureFolder(runner.db, "a", "INBOX", "inbox");
      holdWriterTransactions(150);
      const rows = Array.from({ length: 50 }, (_, i) =>
        headerRow(folder, syncedMailboxMessage(i, 50, i + 1, NOW).msg),
      );
      const writer = headerWriter(runner.db);
      expect(writer).not.toBeNull();
      const batch = (await writer?.prepare(folder.id, rows))?.commit();
      await lockTaken(file);
      const order: string[] = [];
      setTimeout(() => order.push("timer"), 5);
      const evicted = runner.evict({ bytes: 1 }).then((r) => {
        order.push("evict");
        return r;
      });
      await Promise.all([batch, evicted]);
      // The timer fired while evict waited: in SQLite's busy wait it would have come after
      expect(order).toEqual(["timer", "evict"]);
      // The batch was written first, and evict answered (no body was cached yet)
      expect((runner.db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n).toBe(50);
      expect(await evicted).toEqual({ bodies: 0, bytes: 0 });
    } finally {
      runner.db.close();
    }
  });
});

describe("an operator's write while another program holds cache.db's write lock past the wait", () => {
  it("is refused as CONFLICT with nothing dropped, and done once the lock is free", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-busy-"));
    dirs.push(dir);
    const file = path.join(dir, "cache.db");
    const config = parseConfig(
      '[[accounts]]\nname = "a"\naddress = "a@example.com"\n[accounts.imap]\nhost = "127.0.0.1"\nport = 1\n',
    );
    const account = config.accounts[0]!;
    const runner = new CacheRunner(
      file,
      () => config,
      path.join(dir, "secrets"),
      () => {},
      { writeWaitMs: 300 },
    );
    const other = new Database(file);
    try {
      const folder = ensureFolder(runner.db, "a", "INBOX", "inbox");
      runner.db.transaction(() => {
        for (let i = 0; i < 3; i++) {
          const { msg, text } = syncedMailboxMessage(i, 3, i + 1, NOW);
          putBody(runner.db, writeHeaderRow(runner.db, headerRow(folder, msg)), text, 1);
        }
      })();
      const count = (table: string) =>
        (runner.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      other.exec("BEGIN IMMEDIATE");
      const { dropped, synced } = runner.rebuild(account);
      const err = await dropped.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MailError);
      expect(err).toMatchObject({ reason: "CONFLICT" });
      expect((err as Error).message).toContain("the cache of account a was not dropped");
      expect(await synced).toMatchObject({ ok: false, error: { reason: "CONFLICT" } });
      // Nothing was dropped, nor evicted
      expect([count("folders"), count("messages"), count("bodies")]).toEqual([1, 3, 3]);
      await expect(runner.evict({ bytes: 1 })).rejects.toMatchObject({
        reason: "CONFLICT",
        message: expect.stringContaining("cache evict stopped after 0 bodies (0 bytes)"),
      });
      expect(count("bodies")).toBe(3);
      other.exec("ROLLBACK");
      const again = runner.rebuild(account);
      expect(await again.dropped).toEqual({ folders: 1, messages: 3, bodies: 3 });
      expect([count("folders"), count("messages"), count("bodies")]).toEqual([0, 0, 0]);
      // (its pass cannot reach port 1: a failed sync, reported, not thrown)
      expect(await again.synced).toMatchObject({ ok: false });
    } finally {
      other.close();
      await runner.stop();
    }
  });
});
