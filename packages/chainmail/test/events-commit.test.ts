/**
 * A sync's flags and expunged events are in state.db before the cache change that revealed them
 * commits (seen from other connections to both files while the sync is inside its transaction),
 * and a state.db that refuses the insert (a write lock held elsewhere) fails the sync, which leaves
 * the cache as it was, so the next sync finds the change again and records it: nothing is lost.
 */
import path from "node:path";
import Database from "better-sqlite3";
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SyncEvents, syncFolder } from "../src/cache/index.js";
import { EventLog } from "../src/events/log.js";
import { syncSink } from "../src/events/sync-sink.js";
import { StateDb } from "../src/store/state.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type CacheEnv, startCacheEnv } from "./support/cache-env.js";

const A = "personal";
let env: CacheEnv;
let state: StateDb;
let log: EventLog;
let imap: ImapFlow;
let other: ImapFlow;
/** Other connections: what anyone else sees committed in each file. */
let stateView: Database.Database;
let cacheView: Database.Database;
const uids: number[] = [];

const msg = (subject: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["carla@example.com"],
    subject,
    date: new Date("2026-03-01T10:00:00Z"),
    messageId: `<${subject.replace(/\W/g, "")}@example.com>`,
    text: "hello\n",
  });

const eventsOf = (kind: string) =>
  stateView.prepare("SELECT uid FROM events WHERE kind = ? ORDER BY id").pluck().all(kind) as number[];
const cachedFlagged = (uid: number) =>
  cacheView
    .prepare(
      "SELECT m.flagged FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.path = 'INBOX' AND m.uid = ?",
    )
    .pluck()
    .get(uid) as number | undefined;

/** The real sink, plus what the rest of the world sees at the moment each event is recorded. */
function watched(seen: string[]): SyncEvents {
  const sink = syncSink(log);
  return {
    ...sink,
    flags: (f, m, change) => {
      sink.flags(f, m, change);
      seen.push(
        `flags uid ${m.uid}: state.db has ${eventsOf("flags").length}, cache flagged ${cachedFlagged(m.uid)}`,
      );
    },
    expunged: (f, uid) => {
      sink.expunged(f, uid);
      seen.push(
        `expunged uid ${uid}: state.db has ${eventsOf("expunged").length}, cache row ${cachedFlagged(uid) !== undefined}`,
      );
    },
  };
}

const sync = (events: SyncEvents) => syncFolder(env.db, imap, A, "INBOX", { role: "inbox", events });

/** Holds state.db's write lock from another connection, as another process would. */
function lockState(): () => void {
  const locker = new Database(path.join(env.dir, "state.db"));
  locker.prepare("BEGIN IMMEDIATE").run();
  return () => {
    locker.prepare("ROLLBACK").run();
    locker.close();
  };
}

beforeAll(async () => {
  env = await startCacheEnv();
  for (const s of ["One", "Two", "Three", "Four"]) uids.push(await env.append("INBOX", msg(s)));
  state = new StateDb(path.join(env.dir, "state.db"));
  log = new EventLog(state, { retentionSeconds: () => 3600 });
  stateView = new Database(path.join(env.dir, "state.db"), { readonly: true });
  cacheView = new Database(path.join(env.dir, "cache.db"), { readonly: true });
  imap = await env.client();
  other = await env.client();
  await sync(syncSink(log));
  expect(eventsOf("gap")).toHaveLength(1);
});
afterAll(async () => {
  log?.close();
  stateView?.close();
  cacheView?.close();
  state?.close();
  await env?.close();
});

async function onOther(fn: (c: ImapFlow) => Promise<unknown>) {
  const lock = await other.getMailboxLock("INBOX");
  try {
    await fn(other);
  } finally {
    lock.release();
  }
}

describe("events written before the cache change commits", () => {
  it("flags: in state.db while the cache still shows the old flags", async () => {
    await onOther((c) => c.messageFlagsAdd(String(uids[0]), ["\\Flagged"], { uid: true }));
    const seen: string[] = [];
    await sync(watched(seen));
    expect(seen).toEqual([`flags uid ${uids[0]}: state.db has 1, cache flagged 0`]);
    expect(cachedFlagged(uids[0]!)).toBe(1);
  });

  it("expunged: in state.db while the cache still has the message", async () => {
    await onOther((c) => c.messageDelete(String(uids[1]), { uid: true }));
    const seen: string[] = [];
    await sync(watched(seen));
    expect(seen).toEqual([`expunged uid ${uids[1]}: state.db has 1, cache row true`]);
    expect(cachedFlagged(uids[1]!)).toBeUndefined();
  });

  it("a state.db that refuses the insert fails the sync and loses nothing", async () => {
    await onOther(async (c) => {
      await c.messageFlagsAdd(String(uids[2]), ["\\Flagged"], { uid: true });
      await c.messageDelete(String(uids[3]), { uid: true });
    });
    const unlock = lockState();
    try {
      await expect(sync(syncSink(log))).rejects.toThrow(/locked|busy/i);
    } finally {
      unlock();
    }
    // Nothing recorded, and the cache kept its rows as they were.
    expect(eventsOf("flags")).toEqual([uids[0]]);
    expect(eventsOf("expunged")).toEqual([uids[1]]);
    expect(cachedFlagged(uids[2]!)).toBe(0);
    expect(cachedFlagged(uids[3]!)).toBe(0);
    // The next sync finds both changes again and records them.
    await sync(syncSink(log));
    expect(eventsOf("flags")).toEqual([uids[0], uids[2]]);
    expect(eventsOf("expunged")).toEqual([uids[1], uids[3]]);
    expect(cachedFlagged(uids[2]!)).toBe(1);
    expect(cachedFlagged(uids[3]!)).toBeUndefined();
  });
});
