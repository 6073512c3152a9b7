/**
 * `item` and `item_mail` events with the daemon's own wiring (nothing injected): each item change
 * records one event per item it touched, in the change's transaction and with its revision; a call
 * that changes nothing records none; a waiting read wakes on an item change; and a reply another
 * IMAP client delivers on a thread linked to an item raises item_mail, found through an ancestor.
 */
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MailEvent } from "../src/events/log.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const base = { from: "Eve <eve@example.com>", to: ["alice@example.com"], text: "hello\n" };
let env: MailEnv;
let other: ImapFlow;

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessage(
    "alice",
    "INBOX",
    buildMessage({
      ...base,
      subject: "Venue",
      date: new Date("2026-03-01T10:00:00Z"),
      messageId: "<Venue@example.com>",
    }),
  );
  await env.client.cacheSync({ accounts: ["work"] });
  other = await env.dv.connect("alice");
});
afterAll(async () => {
  await other?.logout().catch(() => undefined);
  await env?.stop();
});

type Created = { item: { id: string; revision: number } };
const itemEvents = async (cursor: number, extra: Record<string, unknown> = {}) =>
  (await env.client.readEvents({ cursor, kinds: ["item"], limit: 200, ...extra })).events;
const summary = (events: MailEvent[]) => events.map((e) => [e.item_id, e.change, e.revision]);

describe("item events", () => {
  it("records one event per touched item, with the change and its revision, and none for a no-op", async () => {
    const c = env.client;
    const start = (await c.watchStatus()).last_id;
    const epic = (await c.call("item.create", { type: "epic", title: "Offsite", area: "work" })) as Created;
    const story = (await c.call("item.create", {
      type: "story",
      title: "Book it",
      parent_id: epic.item.id,
      criteria: ["venue"],
    })) as Created & { criteria: Array<{ id: string }> };
    const task = (await c.call("item.create", { type: "task", title: "Call", area: "work" })) as Created;
    const e = epic.item.id;
    const s = story.item.id;
    const t = task.item.id;
    let events = await itemEvents(start);
    expect(summary(events)).toEqual([
      [e, "created", epic.item.revision],
      [s, "created", story.item.revision],
      [t, "created", task.item.revision],
    ]);
    expect(events.every((ev) => ev.kind === "item" && ev.account === null)).toBe(true);

    let cursor = events.at(-1)!.id;
    const updated = (await c.call("item.update", { id: t, title: "Call the venue" })) as {
      revision: number;
    };
    // The same update again changes nothing: no revision, no event.
    const again = (await c.call("item.update", { id: t, title: "Call the venue" })) as { revision: number };
    expect(again.revision).toBe(updated.revision);
    const moved = (await c.call("item.update", { id: t, parent_id: s })) as { revision: number };
    const ticked = (await c.call("item.tick", {
      item_id: s,
      criterion_id: story.criteria[0]!.id,
      ticked: true,
      evidence: "booked",
    })) as { revision: number };
    const edited = (await c.call("item.criteria", { item_id: s, add: ["catering"] })) as {
      revision: number;
    };
    const other = (await c.call("item.create", { type: "task", title: "Pay", area: "work" })) as Created;
    const blocked = (await c.call("item.block", {
      item_id: t,
      blocked_by_id: other.item.id,
      linked: true,
    })) as { revision: number };
    // Setting a blocker that is already set changes nothing.
    await c.call("item.block", { item_id: t, blocked_by_id: other.item.id, linked: true });
    events = await itemEvents(cursor);
    expect(summary(events)).toEqual([
      [t, "updated", updated.revision],
      [t, "moved", moved.revision],
      [s, "criterion", ticked.revision],
      [s, "criteria", edited.revision],
      [other.item.id, "created", other.item.revision],
      [t, "blocker", blocked.revision],
      [other.item.id, "blocker", blocked.revision],
    ]);

    cursor = events.at(-1)!.id;
    const deleted = (await c.call("item.delete", { id: e, cascade: true })) as {
      ids: string[];
      revision: number;
    };
    await c.call("item.delete", { id: e, cascade: true }); // already deleted: nothing
    const restored = (await c.call("item.restore", { id: e, cascade: true })) as {
      ids: string[];
      revision: number;
    };
    events = await itemEvents(cursor);
    expect(summary(events)).toEqual([
      ...deleted.ids.map((id) => [id, "deleted", deleted.revision]),
      ...restored.ids.map((id) => [id, "restored", restored.revision]),
    ]);
    expect(new Set(deleted.ids)).toEqual(new Set([e, s, t]));

    // The item filter: that item and every item that was below it when its event was recorded.
    const underEpic = await itemEvents(start, { kinds: [], item: e });
    expect(new Set(underEpic.map((ev) => ev.item_id))).toEqual(new Set([e, s, t]));
    const underStory = await itemEvents(start, { kinds: [], item: s });
    expect(new Set(underStory.map((ev) => ev.item_id))).toEqual(new Set([s, t]));
    // The default kinds leave item events out.
    const plain = await env.client.readEvents({ cursor: start, limit: 200 });
    expect(plain.events.filter((ev) => ev.kind === "item")).toEqual([]);
  });

  it("wakes a waiting read when an item changes", async () => {
    const start = (await env.client.watchStatus()).last_id;
    const began = Date.now();
    const waiting = env.client.readEvents({ cursor: start, kinds: ["item"], wait_seconds: 20 });
    await new Promise((r) => setTimeout(r, 200));
    const made = (await env.client.call("item.create", {
      type: "task",
      title: "Wake",
      area: "personal",
    })) as Created;
    const got = await waiting;
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(summary(got.events)).toEqual([[made.item.id, "created", made.item.revision]]);
  });

  it("raises item_mail for a reply on a linked thread, found through the item's ancestor", async () => {
    const c = env.client;
    const epic = (await c.call("item.create", {
      type: "epic",
      title: "Venue hunt",
      area: "work",
    })) as Created;
    const story = (await c.call("item.create", {
      type: "story",
      title: "Shortlist",
      parent_id: epic.item.id,
    })) as Created;
    const ref = (
      await c.search({ query: 'subject:"Venue"', accounts: ["work"], source: "server" })
    ).rows.find((r) => r.subject === "Venue")!.ref;
    await c.call("item.link", { item_id: story.item.id, ref });
    const start = (await c.watchStatus()).last_id;

    await other.append(
      "INBOX",
      buildMessage({
        ...base,
        subject: "Re: Venue",
        date: new Date("2026-03-02T10:00:00Z"),
        messageId: "<venue-reply@example.com>",
        inReplyTo: "<Venue@example.com>",
        references: ["<Venue@example.com>"],
      }),
    );
    await c.cacheSync({ accounts: ["work"] });

    const viaEpic = await c.readEvents({ cursor: start, item: epic.item.id });
    const mail = viaEpic.events.filter((e) => e.kind === "item_mail");
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({
      item_id: story.item.id,
      account: "work",
      thread_key: "<venue@example.com>",
      row: { subject: "Re: Venue" },
    });
    // An unlinked item sees none of it.
    const loner = (await c.call("item.create", { type: "task", title: "Alone", area: "work" })) as Created;
    expect((await c.readEvents({ cursor: start, item: loner.item.id, kinds: ["item_mail"] })).events).toEqual(
      [],
    );
  });
});
