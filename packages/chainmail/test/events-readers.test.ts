/**
 * A daemon with `[cache] enabled = false`: what its event log records (work item events only: no
 * mail, gap or status events, since only the cache's syncs find them); and, on the same daemon, many
 * waiting readers and groups at once, each on its own connection, woken by one event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import type { MailEvent } from "../src/events/log.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const clients: DaemonClient[] = [];
const connection = () => {
  const c = new DaemonClient({ socketPath: env.home.socketPath, client: "cli" });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  env = await startMailEnv({ cache: "enabled = false" });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await env?.stop();
});

const ALL_KINDS = ["new", "flags", "expunged", "status", "gap", "item", "item_mail"] as const;
const kindsOf = (events: MailEvent[]) => events.map((e) => e.kind);

describe("with the cache turned off", () => {
  it("records work item events and nothing of mail: no new, flags, expunged, gap or status", async () => {
    const c = env.client;
    expect((await c.watchStatus()).cache_enabled).toBe(false);
    // Mail arrives, is read from the server, flagged and moved: none of it is an event.
    await env.dv.appendMessage(
      "alice",
      "INBOX",
      buildMessage({
        from: "Eve <eve@example.com>",
        to: ["alice@example.com"],
        subject: "No cache here",
        date: new Date("2026-03-01T10:00:00Z"),
        messageId: "<nocache@example.com>",
        text: "hello\n",
      }),
    );
    const rows = (await c.search({ query: 'subject:"no cache here"', accounts: ["work"] })).rows;
    expect(rows).toHaveLength(1);
    await c.setFlags({ refs: [rows[0]!.ref], add: ["flagged"] });
    await c.move({ refs: [rows[0]!.ref], folder: "Archive" });
    await expect(c.cacheSync({ accounts: ["work"] })).rejects.toMatchObject({ reason: "UNSUPPORTED" });
    // Connecting is no status event either: status comes from the cache's passes and watches.
    await expect(c.call("account.test", { account: "home" })).resolves.toBeDefined();
    const made = await c.call("item.create", { type: "task", title: "Without a cache", area: "work" });
    await c.call("item.update", { id: made.item.id, priority: "p1" });

    const all = await c.readEvents({ cursor: 0, kinds: [...ALL_KINDS], limit: 200 });
    expect(kindsOf(all.events)).toEqual(["item", "item"]);
    expect(all.events.map((e) => [e.item_id, e.change])).toEqual([
      [made.item.id, "created"],
      [made.item.id, "updated"],
    ]);
    // The default kinds leave item events out, so such a reader sees nothing at all.
    expect((await c.readEvents({ cursor: 0 })).events).toEqual([]);
    expect(await c.watchStatus()).toMatchObject({ count: 2, last_id: all.next_cursor, cache_enabled: false });
  });
});

describe("many readers and groups at once", () => {
  it("one event wakes every matching waiter, on 20 connections over 5 groups and plain cursors", async () => {
    const start = (await env.client.watchStatus()).last_id;
    const groups = ["g0", "g1", "g2", "g3", "g4"];
    for (const g of groups) await env.client.readEvents({ group: g, kinds: ["item"], limit: 200 });
    await env.client.ping();

    const item = { kinds: ["item" as const], wait_seconds: 30 };
    const t0 = Date.now();
    const groupReads = groups.map((group) => connection().readEvents({ group, ...item }));
    const cursorReads = Array.from({ length: 10 }, () => connection().readEvents({ cursor: start, ...item }));
    // Readers this event does not match keep waiting until their own wait ends.
    const others = Array.from({ length: 5 }, () =>
      connection()
        .readEvents({ cursor: start, kinds: ["new"], wait_seconds: 2 })
        .then((r) => ({ ...r, ms: Date.now() - t0 })),
    );
    await new Promise((r) => setTimeout(r, 400));
    const first = await env.client.call("item.create", { type: "task", title: "Wake them", area: "work" });
    const created = Date.now();
    const woken = await Promise.all([...groupReads, ...cursorReads]);
    expect(Date.now() - created).toBeLessThan(3000);
    const firstId = start + 1;
    for (const r of woken) {
      expect(r.events.map((e) => [e.id, e.item_id])).toEqual([[firstId, first.item.id]]);
      expect(r.next_cursor).toBe(firstId);
    }
    for (const r of await Promise.all(others)) {
      expect(r.events).toEqual([]);
      expect(r.ms).toBeGreaterThanOrEqual(1900);
    }

    // Each group acknowledged the first event once: its next wait gets only the second.
    await env.client.ping();
    const again = groups.map((group) => connection().readEvents({ group, ...item }));
    await new Promise((r) => setTimeout(r, 300));
    const second = await env.client.call("item.create", { type: "task", title: "And again", area: "work" });
    for (const r of await Promise.all(again))
      expect(r.events.map((e) => e.item_id)).toEqual([second.item.id]);
    await env.client.ping();
    const acked = (await env.client.watchGroups()).groups.filter((g) => groups.includes(g.name));
    expect(acked.map((g) => [g.name, g.acked])).toEqual(groups.map((g) => [g, firstId + 1]));
  });
});
