import { describe, expect, it } from "vitest";
import { openCache } from "../src/cache/index.js";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  BACKSTOP_PAGES,
  CHECKPOINT_EVERY_MS,
  backgroundCheckpoints,
  checkpointSoon,
} from "../src/cache/checkpoint.js";
import { turnEvery, writeInSlices } from "../src/cache/slices.js";

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("writeInSlices", () => {
  it("commits every few milliseconds and lets the event loop turn between transactions", async () => {
    const db = openCache(":memory:");
    db.exec("CREATE TABLE t (i INTEGER)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    const items = Array.from({ length: 40 }, (_, i) => i);
    const transactions: number[][] = [];
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    let current: number[] = [];
    await writeInSlices(
      db,
      items,
      {
        begin: () => {
          current = [];
        },
        write: (i) => {
          busy(1);
          ins.run(i);
          current.push(i);
        },
        end: () => transactions.push(current),
      },
      5,
    );
    clearInterval(tick);
    // In order, each item once, several transactions of a few items, timers run in between
    expect(transactions.flat()).toEqual(items);
    expect(transactions.length).toBeGreaterThanOrEqual(6);
    // The first guesses 8 items; the next ones size themselves from its time per item
    expect(transactions[0]).toHaveLength(8);
    expect(Math.max(...transactions.slice(1).map((t) => t.length))).toBeLessThanOrEqual(6);
    expect(turns).toBeGreaterThan(0);
    expect((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(40);
  });

  it("sizes transactions by the items' weight when given, so heavy items after light ones stay few per commit", async () => {
    const db = openCache(":memory:");
    // 30 light items (weight 1, at least 0.2 ms each), then 20 heavy ones (weight 10, at least 2 ms)
    const items = Array.from({ length: 50 }, (_, i) => ({ i, heavy: i >= 30 }));
    const transactions: (typeof items)[] = [];
    let current: typeof items = [];
    await writeInSlices(
      db,
      items,
      {
        begin: () => {
          current = [];
        },
        write: (item) => {
          busy(item.heavy ? 2 : 0.2);
          current.push(item);
        },
        end: () => transactions.push(current),
        weight: (item) => (item.heavy ? 10 : 1),
      },
      5,
    );
    expect(transactions.flat()).toEqual(items);
    // A unit costs at least 0.2 ms, so a 5 ms transaction holds at most 25 units: two heavy items
    // (by count, the light items' pace let the first transaction over heavy ones take 20 of them)
    const heavyPer = transactions.map((t) => t.filter((x) => x.heavy).length);
    expect(Math.max(...heavyPer)).toBeLessThanOrEqual(2);
  });

  it("rolls back only the transaction whose write threw, leaving the earlier ones committed", async () => {
    const db = openCache(":memory:");
    db.exec("CREATE TABLE t (i INTEGER)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    let next = 0;
    let sliceStart = 0;
    const write = (i: number) => {
      busy(1);
      next = i + 1;
      if (i === 32) throw new Error("boom");
      ins.run(i);
    };
    const begin = () => {
      sliceStart = next;
    };
    await expect(
      writeInSlices(
        db,
        Array.from({ length: 40 }, (_, i) => i),
        { begin, write },
        5,
      ),
    ).rejects.toThrow("boom");
    const rows = (db.prepare("SELECT i FROM t ORDER BY i").all() as { i: number }[]).map((r) => r.i);
    // Every transaction before the failing one, none of the failing one
    expect(sliceStart).toBeGreaterThan(0);
    expect(rows).toEqual(Array.from({ length: sliceStart }, (_, i) => i));
  });

  it("keeps statement journals in memory inside its transactions only, also when a write throws", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-slices-"));
    const db = openCache(path.join(dir, "cache.db"));
    try {
      const tempStore = () => db.pragma("temp_store", { simple: true });
      // A multi-row INSERT ... SELECT into an indexed table inside a transaction: a statement
      // journal of far more than the 64 KiB SQLite keeps in memory by default
      db.exec("CREATE TABLE t (i INTEGER PRIMARY KEY, s TEXT UNIQUE)");
      const bulk = db.prepare("INSERT INTO t (i, s) SELECT value, printf('%0500d', value) FROM json_each(?)");
      const before = tempStore();
      // The setting in each transaction, and between transactions (from a timer that runs there)
      const during: unknown[] = [];
      const between: unknown[] = [];
      const tick = setInterval(() => between.push(tempStore()), 0);
      const chunk = (k: number) => JSON.stringify(Array.from({ length: 100 }, (_, j) => k * 100 + j));
      let transactions = 0;
      await writeInSlices(
        db,
        Array.from({ length: 30 }, (_, k) => k),
        {
          begin: () => {
            transactions++;
          },
          write: (k) => {
            busy(1);
            during.push(tempStore());
            bulk.run(chunk(k));
          },
        },
        3,
      );
      clearInterval(tick);
      // 2 = MEMORY in every transaction; put back between them and after (0, the default, for a
      // new cache)
      expect(transactions).toBeGreaterThanOrEqual(4);
      expect(during).toEqual(Array.from({ length: 30 }, () => 2));
      expect(between.length).toBeGreaterThan(0);
      expect(between.every((v) => v === before)).toBe(true);
      expect(tempStore()).toBe(before);
      expect(before).not.toBe(2);
      expect((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(3000);
      await expect(
        writeInSlices(db, [3], {
          write: () => {
            throw new Error("boom");
          },
        }),
      ).rejects.toThrow("boom");
      expect(tempStore()).toBe(before);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("FTS merging between the write transactions", () => {
  const segments = (db: ReturnType<typeof openCache>) =>
    (db.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;
  const config = (db: ReturnType<typeof openCache>) =>
    Object.fromEntries(
      (db.prepare("SELECT k, v FROM messages_fts_config").all() as { k: string; v: number }[]).map((r) => [
        r.k,
        r.v,
      ]),
    );

  it("turns FTS5's in-commit merging off and keeps the index in a few segments itself", async () => {
    const db = openCache(":memory:");
    expect(config(db)).toMatchObject({ automerge: 0, crisismerge: 64 });
    const ins = db.prepare("INSERT INTO messages_fts (rowid, subject, body) VALUES (?, ?, ?)");
    const items = Array.from({ length: 300 }, (_, i) => i + 1);
    let commits = 0;
    let most = 0;
    await writeInSlices(
      db,
      items,
      {
        begin: () => {
          // What the previous transactions and the merging between them left
          most = Math.max(most, segments(db));
        },
        write: (i) => {
          busy(0.2);
          ins.run(i, `subject ${i}`, `body word${i % 17} text${i}`);
        },
        end: () => commits++,
      },
      1,
    );
    // One segment per commit without merging; automerge's rule (four on a level) kept instead
    expect(commits).toBeGreaterThan(40);
    expect(most).toBeLessThan(12);
    expect(segments(db)).toBeLessThan(12);
    // The merged index still answers
    expect(
      db.prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'word3'").get(),
    ).toEqual({
      n: 18,
    });
  });
});

describe("turnEvery", () => {
  it("lets the event loop turn once the slice is spent, with the connection's socket paused meanwhile", async () => {
    const server = net.createServer((s) => s.end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const socket = net.connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.on("data", () => undefined);
    const turn = turnEvery({ socket }, 5);
    // Within the slice: no wait
    expect(turn()).toBeUndefined();
    busy(6);
    let otherRan = false;
    setImmediate(() => {
      otherRan = true;
    });
    const waiting = turn();
    expect(waiting).toBeInstanceOf(Promise);
    expect(socket.isPaused()).toBe(true);
    await waiting;
    expect(socket.isPaused()).toBe(false);
    // Work queued before it ran first: the loop turned
    expect(otherRan).toBe(true);
    expect(turn()).toBeUndefined();
    socket.destroy();
    server.close();
  });
});

/**
 * Whether the worker has checkpointed since `since` and then stayed quiet for a checkpoint interval
 * (all that was written is copied) within 5 s, however long a loaded machine takes below that: a
 * fixed sleep let a starved worker fall behind and the WAL bound below fail under load.
 */
async function checkpointsSettled(db: ReturnType<typeof openCache>, since: number): Promise<boolean> {
  const deadline = performance.now() + 5_000;
  let last = backgroundCheckpoints(db);
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_EVERY_MS + 50));
    const now = backgroundCheckpoints(db);
    if (now > since && now === last) return true;
    last = now;
  }
  return false;
}

describe("WAL checkpoints in a worker thread", () => {
  it("checkpoints while writeInSlices writes, keeps the WAL small and ends with close()", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-ckpt-"));
    try {
      const file = path.join(dir, "cache.db");
      const db = openCache(file);
      // The daemon's connection checkpoints only as a backstop
      expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(BACKSTOP_PAGES);
      db.exec("CREATE TABLE t (i INTEGER, s TEXT)");
      const ins = db.prepare("INSERT INTO t VALUES (?, ?)");
      const text = "x".repeat(20_000);
      let walMax = 0;
      for (let round = 0; round < 12; round++) {
        const before = backgroundCheckpoints(db);
        await writeInSlices(
          db,
          Array.from({ length: 100 }, (_, i) => round * 100 + i),
          { write: (i) => ins.run(i, text) },
        );
        walMax = Math.max(walMax, fs.statSync(`${file}-wal`).size);
        expect(await checkpointsSettled(db, before), `round ${round}`).toBe(true);
      }
      // 24 MB written: without checkpoints the WAL would grow to the backstop's 16 MB
      expect(backgroundCheckpoints(db)).toBeGreaterThan(0);
      expect(walMax).toBeLessThan((BACKSTOP_PAGES * 4096 * 3) / 4);
      expect((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(1200);
      db.close();
      const again = openCache(file);
      expect((again.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(1200);
      again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("has the worker's connection closed when close() returns, so close() leaves no -wal or -shm behind", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-ckpt-close-"));
    try {
      const file = path.join(dir, "cache.db");
      for (let round = 0; round < 3; round++) {
        const db = openCache(file);
        db.exec("CREATE TABLE IF NOT EXISTS t (i INTEGER)");
        const before = backgroundCheckpoints(db);
        await writeInSlices(db, [1, 2, 3], { write: (i) => db.prepare("INSERT INTO t VALUES (?)").run(i) });
        expect(await checkpointsSettled(db, before)).toBe(true);
        // The last connection to close removes the WAL and the shared memory: that must be this
        // one, inside close(), not the worker's some time later (a caller removing the directory
        // after close() raced with it: ENOTEMPTY)
        db.close();
        expect(fs.readdirSync(dir).sort(), `round ${round}`).toEqual(["cache.db"]);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("leaves an in-memory cache alone", () => {
    const db = openCache(":memory:");
    checkpointSoon(db);
    expect(backgroundCheckpoints(db)).toBe(0);
  });
});
