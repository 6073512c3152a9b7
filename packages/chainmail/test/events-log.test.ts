/**
 * The event log's own rules over a real state.db file: natural keys, ids after pruning and reopening,
 * the kinds rule, what a group read acknowledges and when; and the cache reporting only real flag
 * changes.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openCache } from "../src/cache/index.js";
import { ensureFolder, updateFlags } from "../src/cache/store.js";
import { EventLog, type ReadEventsParams } from "../src/events/log.js";
import { ItemService } from "../src/items/service.js";
import { ItemsStore } from "../src/store/items.js";
import { STATE_SCHEMA_VERSION, StateDb } from "../src/store/state.js";
import { newMessageSlot } from "../src/cache/arrival-id.js";

let dir: string;
let state: StateDb;
let now = Date.parse("2026-03-01T10:00:00Z");
let retention = 3600;
const open = () =>
  new EventLog(state, {
    retentionSeconds: () => retention,
    now: () => now,
    itemPath: (id) => (id === "it_a" ? ["it_a"] : id === "it_b" ? ["it_b", "it_a"] : null),
  });
const read = (log: EventLog, p: Partial<ReadEventsParams>) =>
  log.read({ accounts: [], kinds: [], limit: 50, wait_seconds: 0, ...p });
const newAt = (log: EventLog, uid: number, folder = "INBOX") =>
  log.record({ kind: "new", account: "work", folder, uidValidity: "7", uid, data: { ref: `r${uid}` } });

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-ev-"));
  state = new StateDb(path.join(dir, "state.db"));
  now = Date.parse("2026-03-01T10:00:00Z");
  retention = 3600;
});
afterEach(() => {
  state.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("the event log", () => {
  it("records each event once by its natural key", () => {
    const log = open();
    const first = newAt(log, 5)!;
    expect(newAt(log, 5)).toBeNull();
    expect(newAt(log, 5, "Archive")).toBeGreaterThan(first);
    expect(log.store.stats().count).toBe(2);
    log.close();
  });

  it("never hands an id out again, after pruning and reopening", async () => {
    let log = open();
    newAt(log, 1);
    newAt(log, 2);
    now += 7200 * 1000;
    expect(log.prune()).toBe(2);
    log.close();
    state.close();
    state = new StateDb(path.join(dir, "state.db"));
    log = open();
    expect(newAt(log, 3)).toBe(3);
    const r = await read(log, { cursor: 1 });
    expect(r.result.events.map((e) => [e.kind, e.id])).toEqual([
      ["gap", 2],
      ["new", 3],
    ]);
    log.close();
  });

  it("keeps running when pruning fails (state.db locked by another process), and prunes once it can", async () => {
    const lines: string[] = [];
    const log = new EventLog(state, {
      retentionSeconds: () => retention,
      now: () => now,
      log: (line) => lines.push(line),
      pruneEveryMs: 20,
    });
    newAt(log, 1);
    now += 7200 * 1000;
    // Another process holds the write lock past the store's busy timeout (250 ms)
    const other = new Database(path.join(dir, "state.db"));
    other.exec("BEGIN IMMEDIATE");
    try {
      await new Promise((r) => setTimeout(r, 400));
      expect(lines.some((l) => l.includes("pruning old events failed") && /locked|busy/i.test(l))).toBe(true);
      // A read is answered meanwhile, old event and all
      const r = await read(log, { cursor: 0 });
      expect(r.result.events.map((e) => e.kind)).toEqual(["new"]);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    for (let i = 0; i < 50 && log.store.stats().count > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(log.store.stats().count).toBe(0);
    log.close();
  });

  it("gives a cursor it never handed out a gap and everything kept", async () => {
    const log = open();
    newAt(log, 1);
    const r = await read(log, { cursor: 99 });
    expect(r.result.events.map((e) => [e.kind, e.reason ?? null])).toEqual([
      ["gap", "cursor"],
      ["new", null],
    ]);
    log.close();
  });

  it("applies the kinds rule", () => {
    expect(EventLog.effectiveKinds([], false).sort()).toEqual(["expunged", "flags", "gap", "new", "status"]);
    expect(EventLog.effectiveKinds([], true).sort()).toEqual(["gap", "item", "item_mail", "status"]);
    expect(EventLog.effectiveKinds(["new"], false).sort()).toEqual(["gap", "new", "status"]);
    expect(EventLog.effectiveKinds(["new", "gap"], false).sort()).toEqual(["gap", "new"]);
    expect(EventLog.effectiveKinds(["new", "item"], true).sort()).toEqual(["gap", "item", "status"]);
  });

  it("reads item events of an item and of the items below it when they happened", async () => {
    const log = open();
    log.item("it_a", 1, "created");
    log.item("it_b", 2, "created", ["it_b", "it_a"]);
    log.item("it_c", 3, "created");
    newAt(log, 1);
    const r = await read(log, { item: "it_a" });
    expect(r.result.events.map((e) => e.item_id)).toEqual(["it_a", "it_b"]);
    expect((await read(log, {})).result.events.map((e) => e.kind)).toEqual(["new"]);
    await expect(read(log, { item: "it_zz" })).rejects.toMatchObject({ reason: "NOT_FOUND" });
    log.close();
  });

  it("moves a group only on commit, and past the events its filters left out", async () => {
    const log = open();
    // A group's first read starts it at the log's end (here, before any event).
    expect((await read(log, { group: "g" })).result.events).toEqual([]);
    newAt(log, 1);
    log.status("work", false, "SERVER_UNAVAILABLE");
    newAt(log, 2);
    const first = await read(log, { group: "g", limit: 1 });
    expect(first.result.events.map((e) => e.id)).toEqual([1]);
    // Not committed (the reply never reached the reader): the same events come again.
    first.release();
    const again = await read(log, { group: "g", limit: 1 });
    expect(again.result.events.map((e) => e.id)).toEqual([1]);
    again.commit();
    const filtered = await read(log, { group: "g", kinds: ["status"] });
    expect(filtered.result.events.map((e) => e.kind)).toEqual(["status"]);
    expect(filtered.result.next_cursor).toBe(3);
    filtered.commit();
    expect(log.store.group("g")!.acked).toBe(3);
    expect((await read(log, { group: "g" })).result.events).toEqual([]);
    log.close();
  });

  it("records a status only when it changes", () => {
    const log = open();
    log.status("work", true);
    log.status("work", true);
    log.status("work", false, "AUTH_REJECTED");
    log.status("work", false, "AUTH_REJECTED");
    log.status("work", true);
    expect(log.store.stats().count).toBe(3);
    log.close();
  });

  it("answers a waiter as soon as an event is recorded, and wakes it on close", async () => {
    const log = open();
    const waiting = read(log, { wait_seconds: 30 });
    setTimeout(() => newAt(log, 9), 50);
    const t0 = Date.now();
    expect((await waiting).result.events.map((e) => e.kind)).toEqual(["new"]);
    expect(Date.now() - t0).toBeLessThan(2000);
    const closing = read(log, { cursor: 1, wait_seconds: 30 });
    setTimeout(() => log.close(), 50);
    expect((await closing).result.events).toEqual([]);
  });
});

describe("a page that starts with a gap", () => {
  const seen = (r: { result: { events: { kind: string; id: number; reason?: string }[] } }) =>
    r.result.events.map((e) => `${e.kind === "gap" ? `gap:${e.reason}` : e.kind}@${e.id}`);

  /** Reads page after page (at most 20) until one comes back empty; what a reader sees in order. */
  async function drain(log: EventLog, p: Partial<ReadEventsParams>): Promise<string[]> {
    const out: string[] = [];
    let cursor = p.cursor;
    for (let i = 0; i < 20; i++) {
      const r = await read(log, { ...p, ...(cursor !== undefined ? { cursor } : {}) });
      if (r.result.events.length === 0) return out;
      out.push(...seen(r));
      r.commit();
      if (cursor !== undefined) cursor = r.result.next_cursor;
    }
    return [...out, "…still reading after 20 pages"];
  }

  /** Events 1 and 2 pass retention; 3, 4 and 5 are kept. */
  const retained = () => {
    const log = open();
    newAt(log, 1);
    newAt(log, 2);
    now += 7200 * 1000;
    for (const uid of [3, 4, 5]) newAt(log, uid);
    return log;
  };

  for (const limit of [1, 2, 3]) {
    // From 1: a reader that had read event 1 before retention passed over event 2; from 0: one
    // that had read nothing (cursor 0, a group started on an empty log) and lost both.
    for (const from of [0, 1])
      it(`skips nothing after a retention gap, limit ${limit}, from ${from}, by cursor and by group`, async () => {
        const log = retained();
        const told = ["gap:retention@2", "new@3", "new@4", "new@5"];
        expect(await drain(log, { cursor: from, limit })).toEqual(told);
        log.store.ack("g", from);
        expect(await drain(log, { group: "g", limit })).toEqual(told);
        expect(log.store.group("g")!.acked).toBe(5);
        log.close();
      });

    it(`skips nothing after a position past the log's end, limit ${limit}, by cursor and by group`, async () => {
      const log = retained();
      expect(await drain(log, { cursor: 999, limit })).toEqual(["gap:cursor@0", "new@3", "new@4", "new@5"]);
      // A group's position past the end (state.db's events replaced under it) starts over.
      log.store.ack("h", 999);
      expect(await drain(log, { group: "h", limit })).toEqual(["gap:cursor@0", "new@3", "new@4", "new@5"]);
      expect(log.store.group("h")!.acked).toBe(5);
      log.close();
    });
  }

  it("tells a cursor and a group at any position the same: a retention gap when it lost events, then what is kept (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        fc.nat(),
        fc.integer({ min: 1, max: 4 }),
        async (total, old, position, limit) => {
          // `old` of `total` events pass retention (at most all); the reader stood at `position`.
          const aged = Math.min(old, total);
          const at = position % (total + 1);
          const log = open();
          try {
            for (let uid = 1; uid <= total; uid++) {
              if (uid === aged + 1) now += 7200 * 1000;
              newAt(log, uid);
            }
            if (aged === total) now += 7200 * 1000;
            log.prune();
            const kept = Array.from(
              { length: total - Math.max(at, aged) },
              (_, i) => `new@${Math.max(at, aged) + i + 1}`,
            );
            const told = at < aged ? [`gap:retention@${aged}`, ...kept] : kept;
            expect(await drain(log, { cursor: at, limit })).toEqual(told);
            log.store.ack("p", at);
            expect(await drain(log, { group: "p", limit })).toEqual(told);
          } finally {
            log.close();
            state.db.exec(
              "DELETE FROM events; DELETE FROM event_groups; DELETE FROM event_meta; DELETE FROM sqlite_sequence",
            );
            now = Date.parse("2026-03-01T10:00:00Z");
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("points next_cursor just before the first kept event when the gap fills the page", async () => {
    const log = retained();
    for (const cursor of [0, 1]) {
      const r = await read(log, { cursor, limit: 1 });
      expect(seen(r)).toEqual(["gap:retention@2"]);
      expect(r.result.next_cursor).toBe(2);
    }
    const past = await read(log, { cursor: 999, limit: 1 });
    expect(seen(past)).toEqual(["gap:cursor@0"]);
    expect(past.result.next_cursor).toBe(2);
    // A group's acknowledgement follows: the gap only, not the events after it.
    log.store.ack("g", 1);
    (await read(log, { group: "g", limit: 1 })).commit();
    expect(log.store.group("g")!.acked).toBe(2);
    log.close();
  });
});

describe("the cache's flag updates", () => {
  it("report a change only when flags, keywords or labels differ", () => {
    const db = openCache(":memory:");
    const folder = ensureFolder(db, "work", "INBOX", "inbox");
    const id = newMessageSlot(db, 0).id;
    db.prepare(
      "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date) VALUES (?, ?, 'work', 1, 'k', 0)",
    ).run(id, folder.id);
    db.prepare("INSERT INTO message_meta (id) VALUES (?)").run(id);
    expect(updateFlags(db, folder.id, 1, new Set(), undefined, undefined)).toBe(false);
    expect(updateFlags(db, folder.id, 1, new Set(["\\Seen"]), undefined, undefined)).toMatchObject({
      before: expect.any(String),
      after: expect.any(String),
    });
    expect(updateFlags(db, folder.id, 1, new Set(["\\SEEN"]), undefined, 5n)).toBe(false);
    expect(updateFlags(db, folder.id, 1, new Set(["\\Seen", "$x"]), undefined, undefined)).not.toBe(false);
    expect(updateFlags(db, folder.id, 2, new Set(["\\Seen"]), undefined, undefined)).toBe(false);
    db.close();
  });
});

describe("a connection state reported while the daemon stops", () => {
  it("is dropped once the log is closed, even after state.db closed (a watch failing at shutdown)", async () => {
    const log = open();
    log.status("work", true);
    log.close();
    state.close();
    // The daemon closes the log first, then stops the watches and closes state.db; a watch's sync
    // that fails as its connection is logged out reports the failure after that
    expect(() => log.status("work", false, "SERVER_UNAVAILABLE")).not.toThrow();
    state = new StateDb(path.join(dir, "state.db"));
    const again = open();
    const r = await read(again, { cursor: 0, kinds: ["status"] });
    expect(r.result.events.map((e) => [e.kind, e.state])).toEqual([["status", "ok"]]);
    again.close();
  });
});

describe("item events recorded before events had a place (state.db migration)", () => {
  it("get their item's place in the tree at migration time, deleted items included", async () => {
    const file = path.join(dir, "old.db");
    const items = new ItemService({ store: new ItemsStore(new StateDb(file).db) });
    const epic = items.create({ type: "epic", title: "E", area: "work" }).item.id;
    const story = items.create({ type: "story", title: "S", parent_id: epic }).item.id;
    const task = items.create({ type: "task", title: "T", parent_id: story }).item.id;
    items.delete(task, false);
    items.store.db.close();
    // The schema one step back, as a daemon of the previous version left it, with its events.
    const old = new Database(file);
    old.exec("ALTER TABLE events DROP COLUMN item_path");
    old.pragma(`user_version = ${STATE_SCHEMA_VERSION - 1}`);
    const put = old.prepare(
      "INSERT INTO events (time, kind, account, change, item_id, data) VALUES ('2026-03-01T10:00:00.000Z', ?, ?, ?, ?, '{}')",
    );
    put.run("item", "", `${task}:3`, task);
    put.run("item", "", `${task}:4`, task);
    put.run("item_mail", "work", story, story);
    put.run("item", "", "it_gone:5", "it_gone");
    put.run("status", "work", "ok", null);
    old.close();

    state.close();
    state = new StateDb(file);
    expect(state.schemaVersion()).toBe(STATE_SCHEMA_VERSION);
    const log = new EventLog(state, {
      retentionSeconds: () => 3600,
      now: () => now,
      itemPath: (id) => new ItemService({ store: new ItemsStore(state.db) }).pathOf(id),
    });
    const under = async (item: string) =>
      (await read(log, { item, kinds: ["item", "item_mail"] })).result.events
        // status and gap pass every kinds list
        .filter((e) => e.kind !== "status")
        .map((e) => [e.kind, e.item_id]);
    // The deleted task's events are the epic's and the story's, as its parent chain says.
    expect(await under(epic)).toEqual([
      ["item", task],
      ["item", task],
      ["item_mail", story],
    ]);
    expect(await under(task)).toEqual([
      ["item", task],
      ["item", task],
    ]);
    // An item the store no longer has: its events are its own only (here nobody can ask for them).
    expect(state.db.prepare("SELECT item_path FROM events WHERE item_id = 'it_gone'").pluck().get()).toBe(
      "\nit_gone\n",
    );
    expect(state.db.prepare("SELECT item_path FROM events WHERE kind = 'status'").pluck().get()).toBe("");
    log.close();
  });
});
