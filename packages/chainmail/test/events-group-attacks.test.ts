/**
 * Attacks on read_events' promises at the event log, over a real state.db: two readers of one group
 * at once, a retention that passes a group started on an empty log, an item filter whose subtree
 * grows while a read waits; and a fast-check property: events recorded at random moments while a
 * group reads in a loop reach it each exactly once, in order.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventLog, type ReadEventsParams } from "../src/events/log.js";
import { StateDb } from "../src/store/state.js";

let dir: string;
let state: StateDb;
/** Added to the real clock (waits need it to run), so a test can pass retention. */
let skew = 0;
const now = () => Date.now() + skew;
/** Each item's parent, as the test's tree has them now. */
let tree: Map<string, string | null>;
const itemPath = (id: string): string[] | null => {
  if (!tree.has(id)) return null;
  const out: string[] = [];
  for (let at: string | null | undefined = id; at; at = tree.get(at)) out.push(at);
  return out;
};
const open = () => new EventLog(state, { retentionSeconds: () => 3600, now, itemPath });
const read = (log: EventLog, p: Partial<ReadEventsParams>, signal?: AbortSignal) =>
  log.read({ accounts: [], kinds: [], limit: 50, wait_seconds: 0, ...p }, signal);
const newAt = (log: EventLog, uid: number, folder = "INBOX", account = "work") =>
  log.record({ kind: "new", account, folder, uidValidity: "7", uid, data: { ref: `r${uid}` } });
/** Resolves once `n` reads wait on the log (polled, never a fixed sleep). */
const waiting = async (log: EventLog, n: number) => {
  for (let i = 0; log.waiting < n; i++) {
    if (i > 2000) throw new Error(`only ${log.waiting} read(s) waiting`);
    await new Promise((r) => setImmediate(r));
  }
};

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-evga-"));
  state = new StateDb(path.join(dir, "state.db"));
  skew = 0;
  tree = new Map([["it_x", null]]);
});
afterEach(() => {
  state.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("two readers of one group at once", () => {
  it("the page goes to one; the other waits for it to be settled, then reads on from there", async () => {
    const log = open();
    (await read(log, { group: "g" })).commit();
    const first = read(log, { group: "g", wait_seconds: 30, limit: 1 });
    const second = read(log, { group: "g", wait_seconds: 30 });
    await waiting(log, 2);
    newAt(log, 1);
    newAt(log, 2);
    const a = await first;
    expect(a.result.events.map((e) => e.id)).toEqual([1]);
    // The second is still waiting: page 1 is out to the first, unacknowledged.
    await waiting(log, 1);
    a.commit();
    expect((await second).result.events.map((e) => e.id)).toEqual([2]);
    log.close();
  });

  it("a page whose reply is lost goes to the other reader at once (the reader's retry): at least once", async () => {
    const log = open();
    (await read(log, { group: "g" })).commit();
    const first = read(log, { group: "g", wait_seconds: 30, limit: 1 });
    const retry = read(log, { group: "g", wait_seconds: 30 });
    await waiting(log, 2);
    newAt(log, 1);
    newAt(log, 2);
    const a = await first;
    expect(a.result.events.map((e) => e.id)).toEqual([1]);
    // The first call's reply never arrives (its caller had given up on it).
    a.release();
    const b = await retry;
    expect(b.result.events.map((e) => e.id)).toEqual([1, 2]);
    b.commit();
    expect(log.store.group("g")!.acked).toBe(2);
    // A late commit of the shorter page does not move the group back.
    a.commit();
    expect(log.store.group("g")!.acked).toBe(2);
    log.close();
  });

  it("a page never settled holds the group for the lease only; a read that stops waiting first moves nothing", async () => {
    const log = new EventLog(state, { retentionSeconds: () => 3600, now, itemPath, leaseMs: 300 });
    (await read(log, { group: "g" })).commit();
    newAt(log, 1);
    const held = await read(log, { group: "g" });
    expect(held.result.events.map((e) => e.id)).toEqual([1]);
    // Its holder vanished without a word. A read that will not wait gets nothing, and moves nothing.
    const now0 = await read(log, { group: "g" });
    expect(now0.result).toEqual({ events: [], next_cursor: 0 });
    now0.commit();
    expect(log.store.group("g")!.acked).toBe(0);
    // One that waits gets the page once the lease is over.
    const later = await read(log, { group: "g", wait_seconds: 20 });
    expect(later.result.events.map((e) => e.id)).toEqual([1]);
    log.close();
  });

  it("a read by the page's own reader (its retry after a lost reply) is not kept waiting; another's is", async () => {
    const log = open();
    (await read(log, { group: "g" })).commit();
    newAt(log, 1);
    const a = await read(log, { group: "g", reader: "mcp-1" });
    expect(a.result.events.map((e) => e.id)).toEqual([1]);
    // Another reader: nothing while mcp-1's page is out.
    expect((await read(log, { group: "g", reader: "mcp-2" })).result.events).toEqual([]);
    // mcp-1 again (the result of its first call never reached its client): the page again.
    const retry = await read(log, { group: "g", reader: "mcp-1" });
    expect(retry.result.events.map((e) => e.id)).toEqual([1]);
    // The retry holds the group now; the first call's late release does not free it.
    a.release();
    expect((await read(log, { group: "g", reader: "mcp-2" })).result.events).toEqual([]);
    retry.commit();
    newAt(log, 2);
    expect((await read(log, { group: "g", reader: "mcp-2" })).result.events.map((e) => e.id)).toEqual([2]);
    log.close();
  });

  it("a watch.ack reaching the page's next_cursor settles it, as a deferred reader does", async () => {
    const log = open();
    (await read(log, { group: "g" })).commit();
    newAt(log, 1);
    newAt(log, 2);
    const a = await read(log, { group: "g", limit: 1 });
    const b = read(log, { group: "g", wait_seconds: 30 });
    await waiting(log, 1);
    log.ack("g", a.result.next_cursor);
    expect((await b).result.events.map((e) => e.id)).toEqual([2]);
    log.close();
  });

  it("a read whose reader hangs up mid-wait answers at once and, uncommitted, loses nothing", async () => {
    const log = open();
    (await read(log, { group: "g" })).commit();
    const ac = new AbortController();
    const cut = read(log, { group: "g", wait_seconds: 30 }, ac.signal);
    await waiting(log, 1);
    ac.abort();
    expect((await cut).result.events).toEqual([]);
    newAt(log, 1);
    expect((await read(log, { group: "g" })).result.events.map((e) => e.id)).toEqual([1]);
    log.close();
  });
});

describe("retention and a group's position", () => {
  it("gives a group started on an empty log a retention gap for the events it never read", async () => {
    const log = open();
    // The group's first read, on a log with no event yet: its position is 0.
    (await read(log, { group: "early" })).commit();
    expect(log.store.group("early")!.acked).toBe(0);
    newAt(log, 1);
    newAt(log, 2);
    skew += 7200 * 1000;
    newAt(log, 3);
    const r = await read(log, { group: "early" });
    expect(r.result.events.map((e) => `${e.kind}:${e.reason ?? ""}@${e.id}`)).toEqual([
      "gap:retention@2",
      "new:@3",
    ]);
    // A plain reader at cursor 0 had read nothing either: it is told the same, in the same shape
    // (a gap's time is when it was read).
    const plain = await read(log, { cursor: 0 });
    const timeless = (x: typeof r) => ({
      ...x.result,
      events: x.result.events.map(({ time: _, ...e }) => e),
    });
    expect(timeless(plain)).toEqual(timeless(r));
    log.close();
  });
});

describe("an item filter", () => {
  it("takes an item made below it while a group read waits", async () => {
    const log = open();
    (await read(log, { group: "gi", item: "it_x" })).commit();
    const w = read(log, { group: "gi", item: "it_x", wait_seconds: 2 });
    await waiting(log, 1);
    // A child is made under it_x while the read waits: its creation is an event of it_x's subtree.
    tree.set("it_c", "it_x");
    const id = log.item("it_c", 1, "created", itemPath("it_c")!);
    const r = await w;
    expect(r.result.events.map((e) => [e.item_id, e.change])).toEqual([["it_c", "created"]]);
    r.commit();
    expect(log.store.group("gi")!.acked).toBe(id);
    log.close();
  });
});

describe("a group reading in a loop while events arrive at random moments (property)", () => {
  it("returns every event once, in order, whatever the limits, waits and hang-ups", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            // How many event-loop turns pass before the next event, and where it lands.
            delay: fc.integer({ min: 0, max: 3 }),
            account: fc.constantFrom("work", "home"),
            folder: fc.constantFrom("INBOX", "Archive"),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        fc.array(
          fc.record({
            limit: fc.integer({ min: 1, max: 4 }),
            wait: fc.boolean(),
            // The reply never reaches the reader, nothing is committed, and the page comes again:
            // at once when the daemon knows (its write failed), after the lease when nobody says.
            lost: fc.constantFrom("no", "released", "silent"),
          }),
          { minLength: 1, maxLength: 10 },
        ),
        async (arrivals, reads) => {
          const d = fs.mkdtempSync(path.join(os.tmpdir(), "cm-evp-"));
          const st = new StateDb(path.join(d, "state.db"));
          const log = new EventLog(st, { retentionSeconds: () => 3600, now, leaseMs: 30 });
          try {
            (await log.read({ accounts: [], kinds: [], limit: 1, wait_seconds: 0, group: "p" })).commit();
            const recorded: number[] = [];
            let done = false;
            const producer = (async () => {
              for (const [i, a] of arrivals.entries()) {
                for (let t = 0; t < a.delay; t++) await new Promise((r) => setImmediate(r));
                const id = log.record({
                  kind: "new",
                  account: a.account,
                  folder: a.folder,
                  uidValidity: "1",
                  uid: i + 1,
                  data: {},
                });
                if (id !== null) recorded.push(id);
              }
              done = true;
            })();
            const got: number[] = [];
            let lastCursor = 0;
            for (let i = 0; i < 10_000; i++) {
              const shape = reads[i % reads.length]!;
              // Whether every event was recorded before this read began (then an empty page ends it).
              const allIn = done;
              const { result, commit, release } = await log.read({
                accounts: [],
                kinds: [],
                limit: shape.limit,
                // Once all is in and some is unacknowledged, a read waits out a silent page's lease.
                wait_seconds: (allIn ? log.store.group("p")!.acked < log.store.lastId() : shape.wait) ? 1 : 0,
                group: "p",
              });
              // The reader's turn ends: the producer gets the event loop (a page that returns at once
              // resolves in microtasks only).
              await new Promise((r) => setImmediate(r));
              if (shape.lost !== "no" && !allIn) {
                if (shape.lost === "released") release();
                continue;
              }
              got.push(...result.events.map((e) => e.id));
              commit();
              expect(result.next_cursor).toBeGreaterThanOrEqual(lastCursor);
              lastCursor = result.next_cursor;
              if (allIn && result.events.length === 0 && log.store.group("p")!.acked === log.store.lastId())
                break;
            }
            await producer;
            expect(got).toEqual(recorded);
          } finally {
            log.close();
            st.close();
            fs.rmSync(d, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
