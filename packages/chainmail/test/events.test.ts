/**
 * The event log against a real Dovecot: another IMAP client delivers, flags and expunges; a
 * UIDVALIDITY change; groups across daemon restarts; a reader hanging up mid-wait; a long-poll; a
 * gap after retention; and the shutdown that wakes waiters.
 */
import fs from "node:fs";
import net from "node:net";
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { startDaemon } from "../src/daemon/server.js";
import type { MailEvent } from "../src/events/log.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const msg = (subject: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject,
    date: new Date("2026-03-01T10:00:00Z"),
    messageId: `<${subject.replace(/\W/g, "")}@example.com>`,
    text: "hello\n",
  });

let env: MailEnv;
let other: ImapFlow;
let cursor = 0;

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessage("alice", "INBOX", msg("Before one"));
  await env.dv.appendMessage("alice", "INBOX", msg("Before two"));
  other = await env.dv.connect("alice");
});
afterAll(async () => {
  await other?.logout().catch(() => undefined);
  await env?.stop();
});

const sync = () => env.client.cacheSync({ accounts: ["work"] });
/** Events after the test's cursor, moving it on. */
const next = async (extra: Parameters<DaemonClient["readEvents"]>[0] = {}) => {
  const r = await env.client.readEvents({ cursor, accounts: ["work"], ...extra });
  cursor = r.next_cursor;
  return r.events;
};
const uidOf = async (subject: string) => {
  const lock = await other.getMailboxLock("INBOX");
  try {
    return ((await other.search({ subject }, { uid: true })) || [])[0]!;
  } finally {
    lock.release();
  }
};

describe("events from a real Dovecot", () => {
  it("makes the first sync of each folder a gap, not a new event per message", async () => {
    await sync();
    const events = await next();
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(["gap", "status"]));
    const inbox = events.find((e) => e.kind === "gap" && e.folder === "INBOX");
    expect(inbox).toMatchObject({ account: "work", reason: "first_sync" });
    expect(events.find((e) => e.kind === "status")).toMatchObject({ state: "ok" });
  });

  it("records a message another client delivered once, with its search row", async () => {
    await other.append("INBOX", msg("Delivered later"));
    await sync();
    await sync();
    const events = await next();
    expect(events.map((e) => e.kind)).toEqual(["new"]);
    const e = events[0]!;
    expect(e.row).toMatchObject({
      subject: "Delivered later",
      folder: "INBOX",
      account: "work",
      message_id: "<Deliveredlater@example.com>",
      thread_id: "<deliveredlater@example.com>",
      from: { name: "Eve", address: "eve@example.com" },
    });
    expect(e.ref).toBe(e.row!.ref);
    const got = await env.client.getMessages({ refs: [e.ref!] });
    expect(got.messages[0]!.subject).toBe("Delivered later");
  });

  it("records a flag change only when the flags really changed", async () => {
    const uid = await uidOf("Before one");
    await other.messageFlagsAdd(String(uid), ["\\Flagged", "$Later"], { uid: true });
    await sync();
    const events = await next();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: "flags",
      flags: ["flagged"],
      keywords: ["$Later"],
      folder: "INBOX",
    });
    await sync();
    expect(await next()).toEqual([]);
    await other.messageFlagsRemove(String(uid), ["\\Flagged"], { uid: true });
    await sync();
    expect((await next()).map((e) => [e.kind, e.flags])).toEqual([["flags", []]]);
  });

  it("records an expunge by another client", async () => {
    const uid = await uidOf("Before two");
    const lock = await other.getMailboxLock("INBOX");
    try {
      expect(await other.messageDelete(String(uid), { uid: true })).toBe(true);
    } finally {
      lock.release();
    }
    await sync();
    const events = await next();
    expect(events.map((e) => e.kind)).toEqual(["expunged"]);
    expect(typeof events[0]!.ref).toBe("string");
  });

  it("makes a UIDVALIDITY change a gap", async () => {
    await env.client.createFolder({ account: "work", name: "Projects" });
    await env.dv.appendMessage("alice", "Projects", msg("In projects"));
    await sync();
    expect((await next()).map((e) => [e.kind, e.folder, e.reason])).toEqual([
      ["gap", "Projects", "first_sync"],
    ]);
    env.dv.doveadm(["mailbox", "update", "-u", "alice", "--uid-validity", "4242", "Projects"]);
    await sync();
    expect((await next()).map((e) => [e.kind, e.folder, e.reason])).toEqual([
      ["gap", "Projects", "uidvalidity"],
    ]);
  });

  it("filters by kinds (status and gap pass a list naming neither) and by folder in any case", async () => {
    const all = (await env.client.readEvents({ cursor: 0, limit: 200 })).events;
    const onlyNew = (await env.client.readEvents({ cursor: 0, kinds: ["new"], limit: 200 })).events;
    expect(new Set(onlyNew.map((e) => e.kind))).toEqual(new Set(["new", "gap", "status"]));
    const onlyStatus = (await env.client.readEvents({ cursor: 0, kinds: ["status"], limit: 200 })).events;
    expect(new Set(onlyStatus.map((e) => e.kind))).toEqual(new Set(["status"]));
    const projects = (await env.client.readEvents({ cursor: 0, in: "PROJECTS", kinds: ["gap"] })).events;
    expect(projects.filter((e) => e.folder).every((e) => e.folder === "Projects")).toBe(true);
    expect(projects.filter((e) => e.folder)).toHaveLength(2);
    const ids = all.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await expect(env.client.readEvents({ cursor: 0, group: "g" })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
    await expect(env.client.readEvents({ group: "cache.mine" })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("not starting with cache."),
    });
    await expect(env.client.readEvents({ limit: 201 })).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    await expect(env.client.readEvents({ item: "it_x" })).rejects.toMatchObject({ reason: "NOT_FOUND" });
  });
});

describe("consumer groups", () => {
  it("start at the log's end at a group's first read: new mail, no history; cursor 0 still reads it all", async () => {
    const kept = (await env.client.readEvents({ cursor: 0, limit: 200 })).events;
    expect(kept.map((e) => e.kind)).toEqual(expect.arrayContaining(["gap", "status", "new"]));
    const first = await env.client.readEvents({ group: "newcomer", limit: 200 });
    expect(first.events).toEqual([]);
    expect(first.next_cursor).toBe((await env.client.watchStatus()).last_id);
    // A message that arrives while the group's next read waits is its first event.
    const waiting = env.client.readEvents({ group: "newcomer", wait_seconds: 30 });
    await other.append("INBOX", msg("First for the newcomer"));
    await sync();
    const second = await waiting;
    expect(second.events.map((e) => [e.kind, e.row?.subject])).toEqual([["new", "First for the newcomer"]]);
    // The history is still there for a reader that asks for it.
    expect((await env.client.readEvents({ cursor: 0, limit: 200 })).events.map((e) => e.id)).toEqual([
      ...kept.map((e) => e.id),
      second.events[0]!.id,
    ]);
  });

  it("keep a new group's start even when its first read was cut off before the reply", async () => {
    const start = (await env.client.watchStatus()).last_id;
    const c = new DaemonClient({ socketPath: env.home.socketPath, client: "cli" });
    const waiting = c.readEvents({ group: "cutoff", wait_seconds: 30 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    c.close();
    await waiting;
    await other.append("INBOX", msg("Meanwhile for cutoff"));
    await sync();
    const read = await env.client.readEvents({ group: "cutoff" });
    expect(read.events.map((e) => e.row?.subject)).toEqual(["Meanwhile for cutoff"]);
    expect(read.events[0]!.id).toBeGreaterThan(start);
  });

  it("acknowledge what they return, across a daemon restart", async () => {
    // The group's first read starts it at the log's end; four messages then arrive.
    expect((await env.client.readEvents({ group: "agent" })).events).toEqual([]);
    for (const s of ["Agent one", "Agent two", "Agent three", "Agent four"])
      await other.append("INBOX", msg(s));
    await sync();
    const first = await env.client.readEvents({ group: "agent", limit: 3 });
    expect(first.events).toHaveLength(3);
    // The reply is written before the position moves; a ping on the same connection follows it.
    await env.client.ping();
    await env.restartDaemon();
    const second = await env.client.readEvents({ group: "agent", limit: 200 });
    expect(second.events[0]!.id).toBeGreaterThan(first.events[2]!.id);
    expect(second.events.at(-1)!.id).toBe(second.next_cursor);
    await env.client.ping();
    await env.restartDaemon();
    expect((await env.client.readEvents({ group: "agent" })).events).toEqual([]);
    const groups = (await env.client.watchGroups()).groups;
    expect(groups.find((g) => g.name === "agent")).toMatchObject({ acked: second.next_cursor, pending: 0 });
  });

  it("keep ids that never go back or repeat across restarts", async () => {
    const before = (await env.client.watchStatus()).last_id;
    await other.append("INBOX", msg("After restart"));
    await sync();
    const events = (await env.client.readEvents({ group: "agent" })).events;
    expect(events.map((e) => e.kind)).toEqual(["new"]);
    expect(events[0]!.id).toBeGreaterThan(before);
  });

  it("keep ids rising across a cache rebuild (cache.db deleted while the daemon is stopped)", async () => {
    await other.append("INBOX", msg("Before the rebuild"));
    await sync();
    const before = (await env.client.watchStatus()).last_id;
    const seen = (await env.client.readEvents({ cursor: 0, limit: 200 })).events.map((e) => e.id);
    env.client.close();
    await env.daemon.stop();
    for (const f of [env.home.cacheFile, `${env.home.cacheFile}-wal`, `${env.home.cacheFile}-shm`])
      fs.rmSync(f, { force: true });
    env.daemon = await startDaemon({ home: env.home, log: () => undefined });
    env.client = new DaemonClient({ socketPath: env.home.socketPath, client: "cli" });
    // The rebuilt cache syncs every folder anew (a first_sync gap where the folder has new mail),
    // then new mail is a new event again: every id above any the log handed out before.
    await other.append("INBOX", msg("After the rebuild"));
    await sync();
    await other.append("INBOX", msg("After the rebuild two"));
    await sync();
    const after = (await env.client.readEvents({ cursor: before, limit: 200 })).events;
    expect(after.map((e) => [e.kind, e.reason ?? e.row?.subject])).toContainEqual(["gap", "first_sync"]);
    expect(after.filter((e) => e.kind === "new").map((e) => e.row?.subject)).toEqual([
      "After the rebuild two",
    ]);
    for (const e of after) expect(e.id).toBeGreaterThan(before);
    expect(after.map((e) => e.id)).toEqual([...after.map((e) => e.id)].sort((a, b) => a - b));
    expect(new Set([...seen, ...after.map((e) => e.id)]).size).toBe(seen.length + after.length);
  });

  it("lose nothing when the reader hangs up mid-wait", async () => {
    await env.client.readEvents({ group: "hangup" });
    await env.client.ping();
    const sock = net.connect(env.home.socketPath);
    await new Promise((r) => sock.once("connect", r));
    sock.write(
      `${JSON.stringify({ v: 1, id: 1, method: "watch.read", client: "cli", params: { group: "hangup", wait_seconds: 30 } })}\n`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const acked = (await env.client.watchGroups()).groups.find((g) => g.name === "hangup")!.acked;
    const reads = async () => (await env.client.readAudit({ action: "watch.read" })).rows.length;
    const before = await reads();
    sock.destroy();
    // The hang-up ends the wait at once (its audit row is written when it ends), and the reply
    // that could not be delivered moved nothing.
    await new Promise((r) => setTimeout(r, 300));
    expect(await reads()).toBe(before + 1);
    const row = (await env.client.readAudit({ action: "watch.read", limit: 1 })).rows[0]!;
    expect(row.summary).toContain('0 event(s) for group "hangup"');
    expect((await env.client.watchGroups()).groups.find((g) => g.name === "hangup")!.acked).toBe(acked);
    await other.append("INBOX", msg("While hung up"));
    await sync();
    const got = await env.client.readEvents({ group: "hangup" });
    expect(got.events.map((e) => e.row?.subject)).toEqual(["While hung up"]);
  });

  it("with defer_ack acknowledge nothing until watch.ack names the position", async () => {
    const acked = async () =>
      (await env.client.watchGroups()).groups.find((g) => g.name === "deferred")?.acked;
    await env.client.readEvents({ group: "deferred", limit: 200 });
    await env.client.ping();
    const at = await acked();
    await other.append("INBOX", msg("Deferred one"));
    await sync();
    const page = await env.client.readEvents({ group: "deferred", defer_ack: true });
    expect(page.events.map((e) => e.row?.subject)).toEqual(["Deferred one"]);
    await env.client.ping();
    expect(await acked()).toBe(at);
    const again = await env.client.readEvents({ group: "deferred", defer_ack: true });
    expect(again.events.map((e) => e.id)).toEqual(page.events.map((e) => e.id));
    expect(await env.client.ackEvents({ group: "deferred", cursor: page.next_cursor })).toEqual({
      group: "deferred",
      acked: page.next_cursor,
    });
    expect((await env.client.readEvents({ group: "deferred" })).events).toEqual([]);
    // Never back, never past the log's end.
    expect((await env.client.ackEvents({ group: "deferred", cursor: 0 })).acked).toBe(page.next_cursor);
    const last = (await env.client.watchStatus()).last_id;
    await expect(env.client.ackEvents({ group: "deferred", cursor: last + 5 })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
    const row = (await env.client.readAudit({ action: "watch.ack", limit: 1 })).rows[0]!;
    expect(row).toMatchObject({ client: "cli", decision: "allowed" });
    expect(row.summary).toContain('group "deferred"');
  });

  it("delete a group with watch groups delete", async () => {
    expect(await env.client.deleteWatchGroup({ group: "hangup" })).toEqual({
      group: "hangup",
      deleted: true,
    });
    expect(await env.client.deleteWatchGroup({ group: "hangup" })).toEqual({
      group: "hangup",
      deleted: false,
    });
  });
});

describe("long-polling", () => {
  it("answers a waiting read as soon as an event arrives", async () => {
    const start = (await env.client.readEvents({ group: "poll" })).next_cursor;
    await env.client.ping();
    const t0 = Date.now();
    const waiting = env.client.readEvents({ group: "poll", wait_seconds: 30, kinds: ["new"] });
    await new Promise((r) => setTimeout(r, 300));
    await other.append("INBOX", msg("Polled"));
    await sync();
    const r = await waiting;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.events.map((e: MailEvent) => e.row?.subject)).toEqual(["Polled"]);
    expect(r.next_cursor).toBeGreaterThan(start);
  });

  it("returns an empty page when the wait ends", async () => {
    const t0 = Date.now();
    const r = await env.client.readEvents({
      cursor: (await env.client.watchStatus()).last_id,
      wait_seconds: 1,
    });
    expect(r.events).toEqual([]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
  });

  it("wakes every waiter at shutdown, acknowledging nothing new", async () => {
    const c1 = new DaemonClient({ socketPath: env.home.socketPath, client: "cli" });
    const c2 = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
    const t0 = Date.now();
    const waits = [
      c1.readEvents({ group: "poll", wait_seconds: 60 }),
      c2.readEvents({ cursor: (await env.client.watchStatus()).last_id, wait_seconds: 60 }),
    ];
    await new Promise((r) => setTimeout(r, 300));
    await env.restartDaemon();
    const results = await Promise.all(waits);
    expect(Date.now() - t0).toBeLessThan(10_000);
    for (const r of results) expect(r.events).toEqual([]);
    c1.close();
    c2.close();
  });
});

describe("retention", () => {
  it("turns events lost to retention into a gap for a reader that had not reached them", async () => {
    const oldGroup = (await env.client.watchGroups()).groups.find((g) => g.name === "agent")!;
    env.writeConfig({ cache: "background = false\n[events]\nretention_seconds = 1" });
    await new Promise((r) => setTimeout(r, 1500));
    await other.append("INBOX", msg("After retention"));
    await sync();
    const late = await env.client.readEvents({ cursor: 1 });
    expect(late.events[0]).toMatchObject({ kind: "gap", reason: "retention", account: null });
    expect(late.events.slice(1).map((e) => e.row?.subject)).toEqual(["After retention"]);
    const byGroup = await env.client.readEvents({ group: "agent" });
    expect(byGroup.events[0]).toMatchObject({ kind: "gap", reason: "retention" });
    expect(byGroup.events[0]!.id).toBeGreaterThan(oldGroup.acked);
    // Cursor 0 (a reader that has read nothing yet) is told of the deleted events too, as the group
    // is: the same gap, then the oldest kept event.
    const fromStart = await env.client.readEvents({ cursor: 0 });
    expect(fromStart.events.map((e) => [e.kind, e.reason ?? null, e.account])).toEqual([
      ["gap", "retention", null],
      ["new", null, "work"],
    ]);
    expect(fromStart.events[0]!.id).toBe(byGroup.events[0]!.id);
    expect(fromStart.events[0]!.id).toBe((await env.client.watchStatus()).pruned_through);
    env.writeConfig({ cache: "background = false" });
  });
});
