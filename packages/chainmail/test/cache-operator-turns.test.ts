// The operator's `cache evict` while the cache's writer thread holds cache.db's write lock (a first
// sync's batch, a backfill's merging): it waits for its turn with the event loop free, where a
// write straight into SQLite's busy wait would hold every search up until the lock came free.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureFolder, headerRow } from "../src/cache/store.js";
import { headerWriter, holdWriterTransactions } from "../src/cache/writer.js";
import { parseConfig } from "../src/config.js";
import { CacheRunner } from "../src/daemon/cache-runner.js";
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
