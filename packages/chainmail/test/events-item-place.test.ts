/**
 * read_events' `item` filter judged by where each event happened, over the real daemon (its socket,
 * its items store, its state.db): a reader of X gets the events of items that were in X's subtree
 * when the event was recorded, also of a child deleted or moved out of X before the read; a move out
 * of X and a move into X are both X's; and a fast-check property: any sequence of creates, moves,
 * deletes and restores gives each item's reader exactly the events an independent model of the tree
 * places under it.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MailEvent } from "../src/events/log.js";
import { ITEM_TYPES, type ItemType, parentRuleProblem } from "../src/items/model.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

beforeAll(async () => {
  env = await startMailEnv();
});
afterAll(async () => {
  await env?.stop();
});

type Made = { item: { id: string; revision: number } };
type Changed = { ids: string[]; revision: number };
/** A call with params the test builds at run time (the daemon checks them; the test wants its answer). */
const raw = (method: string, params: Record<string, unknown>): Promise<unknown> =>
  (env.client.call as (m: string, p: Record<string, unknown>) => Promise<unknown>).call(
    env.client,
    method,
    params,
  );
const create = async (input: Record<string, unknown>) => ((await raw("item.create", input)) as Made).item;
const lastId = async () => (await env.client.watchStatus()).last_id;
/** Every item event a reader of `item` gets after `cursor`, page by page. */
const readerOf = async (item: string, cursor: number): Promise<MailEvent[]> => {
  const out: MailEvent[] = [];
  for (;;) {
    const r = await env.client.readEvents({ cursor, item, kinds: ["item"], limit: 200 });
    out.push(...r.events.filter((e) => e.kind === "item"));
    if (r.events.length === 0 || r.next_cursor === cursor) return out;
    cursor = r.next_cursor;
  }
};
const changes = (events: MailEvent[]) => events.map((e) => [e.item_id, e.change]);

describe("an item reader gets what happened in the item's subtree at the time", () => {
  it("a child made below X and deleted before the read: created and deleted", async () => {
    const start = await lastId();
    const x = await create({ type: "epic", title: "X", area: "work" });
    const child = await create({ type: "story", title: "gone soon", parent_id: x.id });
    await env.client.call("item.delete", { id: child.id });
    expect(changes(await readerOf(x.id, start))).toEqual([
      [x.id, "created"],
      [child.id, "created"],
      [child.id, "deleted"],
    ]);
  });

  it("a cascade delete of X: every item below it, as each event was recorded", async () => {
    const start = await lastId();
    const x = await create({ type: "epic", title: "X2", area: "work" });
    const story = await create({ type: "story", title: "s", parent_id: x.id });
    const task = await create({ type: "task", title: "t", parent_id: story.id });
    await env.client.call("item.delete", { id: x.id, cascade: true });
    expect(changes(await readerOf(story.id, start))).toEqual([
      [story.id, "created"],
      [task.id, "created"],
      [story.id, "deleted"],
      [task.id, "deleted"],
    ]);
  });

  it("a move out of X is X's and so is what came before it; what the item does after is not", async () => {
    const start = await lastId();
    const x = await create({ type: "epic", title: "X3", area: "work" });
    const y = await create({ type: "epic", title: "Y3", area: "work" });
    const child = await create({ type: "story", title: "wanders", parent_id: x.id });
    await env.client.call("item.update", { id: child.id, title: "wanders off" });
    await env.client.call("item.update", { id: child.id, parent_id: y.id });
    await env.client.call("item.update", { id: child.id, title: "now in Y" });
    expect(changes(await readerOf(x.id, start))).toEqual([
      [x.id, "created"],
      [child.id, "created"],
      [child.id, "updated"],
      [child.id, "moved"],
    ]);
    // Y's reader sees the move in and what follows, not the child's life under X.
    expect(changes(await readerOf(y.id, start))).toEqual([
      [y.id, "created"],
      [child.id, "moved"],
      [child.id, "updated"],
    ]);
  });

  it("a move into X is X's, and so is what the item does after, not its life before", async () => {
    const start = await lastId();
    const x = await create({ type: "epic", title: "X4", area: "work" });
    const stray = await create({ type: "task", title: "stray", area: "work" });
    await env.client.call("item.update", { id: stray.id, title: "still outside" });
    await env.client.call("item.update", { id: stray.id, parent_id: x.id });
    await env.client.call("item.update", { id: stray.id, title: "inside" });
    expect(changes(await readerOf(x.id, start))).toEqual([
      [x.id, "created"],
      [stray.id, "moved"],
      [stray.id, "updated"],
    ]);
  });
});

/** The model's tree: each item's type and parent (kept when it is deleted), and whether it is deleted. */
interface ModelItem {
  type: ItemType;
  parent: string | null;
  deleted: boolean;
}

describe("an item reader's events (property)", () => {
  it("are the events whose item was in the reader's subtree when they happened, for any sequence", async () => {
    // Unbiased: a bias to 0 would make most items objectives at the root, which nothing can move.
    const pick = fc.noBias(fc.nat());
    // Creates and moves weigh most: a tree needs items before moves, deletes and restores mean much.
    const op = fc.oneof(
      { weight: 4, arbitrary: fc.record({ op: fc.constant("create" as const), type: pick, parent: pick }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant("move" as const), item: pick, to: pick }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("update" as const), item: pick }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("delete" as const), item: pick }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant("restore" as const), item: pick }) },
    );
    const nth = <T>(xs: T[], n: number): T | undefined => xs[n % Math.max(xs.length, 1)];
    /** What the sequences did, so the test shows it exercised moves and restores at all. */
    const seen = { created: 0, moved: 0, deleted: 0, restored: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), async (ops) => {
        const start = await lastId();
        const model = new Map<string, ModelItem>();
        const ids: string[] = [];
        /** Each recorded item event's id and the items the model places it under. */
        const placed: Array<[number, Set<string>]> = [];
        const ancestry = (id: string): string[] => {
          const out: string[] = [];
          for (let at: string | null = id; at; at = model.get(at)!.parent) out.push(at);
          return out;
        };
        const live = () => ids.filter((i) => !model.get(i)!.deleted);
        const liveBelow = (id: string): string[] =>
          live()
            .filter((i) => model.get(i)!.parent === id)
            .flatMap((c) => [c, ...liveBelow(c)]);
        /** The places a `type` may go by the parent rule: live items of the test, and the root (null). */
        const homes = (type: ItemType, except: string[] = []): Array<string | null> => [
          ...(parentRuleProblem(type, null) ? [] : [null]),
          ...live().filter((p) => !except.includes(p) && !parentRuleProblem(type, model.get(p)!.type)),
        ];
        /** Runs a call; a refusal must record nothing. */
        const attempt = async (method: string, params: Record<string, unknown>) => {
          const before = await lastId();
          try {
            return { before, r: (await raw(method, params)) as Record<string, unknown> };
          } catch (err) {
            expect((err as { reason?: string }).reason, String(err)).toMatch(/CONFLICT|INVALID_ARGUMENT/);
            expect(await lastId()).toBe(before);
            return null;
          }
        };
        /** The events a call recorded, each placed by the model (a move: where it was, too). */
        const recorded = async (before: number, movedFrom: string[] = []) => {
          const r = await env.client.readEvents({ cursor: before, kinds: ["item"], limit: 200 });
          for (const e of r.events) {
            const under = new Set(ancestry(e.item_id!));
            if (e.change === "moved") for (const a of movedFrom) under.add(a);
            placed.push([e.id, under]);
          }
          return r.events;
        };
        for (const o of ops) {
          if (o.op === "create") {
            // A type that may sit somewhere, then one of its places.
            const type = nth([...ITEM_TYPES], o.type)!;
            const parent = nth(homes(type), o.parent);
            if (parent === undefined) continue;
            const done = await attempt("item.create", {
              type,
              title: "p",
              ...(parent ? { parent_id: parent } : { area: "work" }),
            });
            const id = (done!.r as Made).item.id;
            model.set(id, { type, parent, deleted: false });
            ids.push(id);
            expect(changes(await recorded(done!.before))).toEqual([[id, "created"]]);
            seen.created++;
          } else if (o.op === "update" || o.op === "move") {
            const item = nth(live(), o.item);
            if (!item) continue;
            if (o.op === "update") {
              const done = await attempt("item.update", { id: item, title: `t${await lastId()}` });
              expect(changes(await recorded(done!.before))).toEqual([[item, "updated"]]);
              continue;
            }
            const m = model.get(item)!;
            const to = nth(
              homes(m.type, [item, ...liveBelow(item)]).filter((h) => h !== m.parent),
              o.to,
            );
            if (to === undefined) continue;
            const from = ancestry(item);
            const done = await attempt(
              "item.update",
              to ? { id: item, parent_id: to } : { id: item, clear: ["parent_id"] },
            );
            m.parent = to;
            expect(changes(await recorded(done!.before, from))).toEqual([[item, "moved"]]);
            seen.moved++;
          } else if (o.op === "delete") {
            const item = nth(live(), o.item);
            if (!item) continue;
            const gone = [item, ...liveBelow(item)];
            const done = await attempt("item.delete", { id: item, cascade: true });
            for (const i of gone) model.get(i)!.deleted = true;
            const events = await recorded(done!.before);
            expect(new Set(events.map((e) => e.item_id))).toEqual(new Set(gone));
            seen.deleted++;
          } else {
            const item = nth(
              ids.filter((i) => model.get(i)!.deleted),
              o.item,
            );
            if (!item) continue;
            // Refused when its parent is deleted (restore that first): nothing recorded, checked.
            const done = await attempt("item.restore", { id: item, cascade: true });
            if (!done) continue;
            for (const i of (done.r as unknown as Changed).ids) model.get(i)!.deleted = false;
            await recorded(done.before);
            seen.restored++;
          }
        }
        for (const x of ids) {
          const expected = placed.filter(([, under]) => under.has(x)).map(([id]) => id);
          expect((await readerOf(x, start)).map((e) => e.id)).toEqual(expected);
        }
      }),
      { numRuns: 100 },
    );
    console.log(seen);
    for (const n of Object.values(seen)) expect(n).toBeGreaterThan(20);
  });
});
