/**
 * Attacks on the work item rules over a real state.db: the same idempotency key twice at once and
 * with another input, a parent set to the item's own descendant, every refusal leaving the store as
 * it was; and a fast-check property: any sequence of creates, moves, retypes, deletes and restores
 * keeps the tree a tree that obeys the parent rule, and a refused call writes nothing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMailError } from "../src/errors.js";
import { parentRuleProblem, ITEM_TYPES, type ItemType } from "../src/items/model.js";
import { ItemService } from "../src/items/service.js";
import { ItemsStore } from "../src/store/items.js";
import { StateDb } from "../src/store/state.js";

let dir: string;
let state: StateDb;
let s: ItemService;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-items-att-"));
  state = new StateDb(path.join(dir, "state.db"));
  s = new ItemService({ store: new ItemsStore(state.db) });
});
afterEach(() => {
  state.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every row of every item table and the revision, to compare before and after a refused call. */
const snapshot = (db = state.db) =>
  ["item_revision", "items", "item_criteria", "item_blockers", "item_links", "item_keys"].map((t) =>
    db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all(),
  );

/** Runs a call that must be refused: its error in the shape of src/errors.ts, and nothing written. */
const refused = (fn: () => unknown) => {
  const before = snapshot();
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, "the call was refused").toBeDefined();
  expect(isMailError(caught), String(caught)).toBe(true);
  expect(snapshot()).toEqual(before);
  return caught as { reason: string; message: string; hint: string };
};

describe("idempotent creates", () => {
  it("make one item for two calls at once with the same key, both answered with it", async () => {
    const input = { type: "task" as const, title: "once", area: "work" as const, idempotency_key: "k" };
    const [a, b] = await Promise.all([
      Promise.resolve().then(() => s.create(input)),
      Promise.resolve().then(() => s.create(input)),
    ]);
    expect(b.item.id).toBe(a.item.id);
    expect([a.duplicate, b.duplicate].sort()).toEqual([false, true]);
    expect(s.list({ limit: 500, inbox: true }).items.map((i) => i.id)).toEqual([a.item.id]);
  });

  it("refuse the same key with another input as CONFLICT and write nothing, also an input that is invalid", () => {
    s.create({ type: "task", title: "first", area: "work", idempotency_key: "k2" });
    expect(
      refused(() => s.create({ type: "task", title: "second", area: "work", idempotency_key: "k2" })),
    ).toMatchObject({ reason: "CONFLICT" });
    expect(
      refused(() => s.create({ type: "task", title: "", area: "work", idempotency_key: "k3" })),
    ).toMatchObject({ reason: "INVALID_ARGUMENT" });
    // The refused call's key was not kept: the same key with a good input makes the item.
    expect(s.create({ type: "task", title: "third", area: "work", idempotency_key: "k3" }).duplicate).toBe(
      false,
    );
  });
});

describe("the tree", () => {
  it("refuses a parent that is the item itself or its own descendant, and writes nothing", () => {
    const epic = s.create({ type: "epic", title: "e", area: "work" }).item;
    const feature = s.create({ type: "feature", title: "f", parent_id: epic.id }).item;
    const story = s.create({ type: "story", title: "s", parent_id: feature.id }).item;
    expect(refused(() => s.update({ id: epic.id, parent_id: epic.id }))).toMatchObject({
      reason: "CONFLICT",
    });
    const feature2 = s.create({ type: "feature", title: "f2", parent_id: epic.id }).item;
    const story2 = s.create({ type: "story", title: "s2", parent_id: feature2.id }).item;
    expect(refused(() => s.update({ id: feature2.id, parent_id: story2.id }))).toMatchObject({
      reason: "CONFLICT",
    });
    expect(refused(() => s.update({ id: story.id, parent_id: "it_nope" }))).toMatchObject({
      reason: "NOT_FOUND",
    });
  });
});

type Op =
  | { op: "create"; type: ItemType; parent: number | null; key: number | null; title: number }
  | { op: "move"; item: number; parent: number | null }
  | { op: "retype"; item: number; type: ItemType }
  | { op: "delete"; item: number; cascade: boolean }
  | { op: "restore"; item: number; cascade: boolean };

const typeArb = fc.constantFrom(...ITEM_TYPES);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant("create" as const),
    type: typeArb,
    parent: fc.option(fc.nat(30), { nil: null }),
    key: fc.option(fc.nat(3), { nil: null }),
    title: fc.nat(1),
  }),
  fc.record({
    op: fc.constant("move" as const),
    item: fc.nat(30),
    parent: fc.option(fc.nat(30), { nil: null }),
  }),
  fc.record({ op: fc.constant("retype" as const), item: fc.nat(30), type: typeArb }),
  fc.record({ op: fc.constant("delete" as const), item: fc.nat(30), cascade: fc.boolean() }),
  fc.record({ op: fc.constant("restore" as const), item: fc.nat(30), cascade: fc.boolean() }),
);

describe("any sequence of item calls (property)", () => {
  it("keeps a tree that obeys the parent rule, and a refused call writes nothing", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
        const d = fs.mkdtempSync(path.join(os.tmpdir(), "cm-items-p-"));
        const st = new StateDb(path.join(d, "state.db"));
        const svc = new ItemService({ store: new ItemsStore(st.db) });
        try {
          const ids: string[] = svc.list({ limit: 500 }).items.map((i) => i.id);
          const pick = (n: number) => ids[n % ids.length]!;
          /** What each key was first answered with. */
          const keyed = new Map<number, { id: string; input: string }>();
          for (const o of ops) {
            const before = snapshot(st.db);
            try {
              if (o.op === "create") {
                const input = {
                  type: o.type,
                  title: `t${o.title}`,
                  ...(o.parent === null ? { area: "work" as const } : { parent_id: pick(o.parent) }),
                  ...(o.key === null ? {} : { idempotency_key: `k${o.key}` }),
                };
                const r = svc.create(input);
                if (o.key !== null) {
                  const first = keyed.get(o.key);
                  const same = JSON.stringify({ ...input, idempotency_key: undefined });
                  if (first) {
                    expect(first.input).toBe(same);
                    expect(r).toMatchObject({ duplicate: true, item: { id: first.id } });
                  } else keyed.set(o.key, { id: r.item.id, input: same });
                }
                if (!r.duplicate) ids.push(r.item.id);
              } else if (o.op === "move")
                svc.update(
                  o.parent === null
                    ? { id: pick(o.item), clear: ["parent_id"] }
                    : { id: pick(o.item), parent_id: pick(o.parent) },
                );
              else if (o.op === "retype") svc.update({ id: pick(o.item), type: o.type });
              else if (o.op === "delete") svc.delete(pick(o.item), o.cascade);
              else svc.restore(pick(o.item), o.cascade);
            } catch (err) {
              if (!isMailError(err)) throw err;
              expect(["INVALID_ARGUMENT", "NOT_FOUND", "CONFLICT"]).toContain(err.reason);
              expect(err.hint.length).toBeGreaterThan(0);
              expect(snapshot(st.db), `${o.op} refused (${err.message}) but wrote`).toEqual(before);
            }
            // The tree: every item reaches the root without a cycle; a live item's parent is live
            // and allowed by the parent rule; a root item has its own area.
            const rows = st.db.prepare("SELECT id, type, parent_id, area, deleted_at FROM items").all() as {
              id: string;
              type: ItemType;
              parent_id: string | null;
              area: string | null;
              deleted_at: string | null;
            }[];
            const byId = new Map(rows.map((r) => [r.id, r]));
            for (const r of rows) {
              const seen = new Set<string>();
              for (let p: string | null = r.id; p; p = byId.get(p)?.parent_id ?? null) {
                expect(seen.has(p), `a cycle through ${r.id}`).toBe(false);
                seen.add(p);
              }
              if (r.parent_id === null) expect(r.area, `${r.id} at the root has an area`).not.toBeNull();
              if (r.deleted_at !== null) continue;
              const parent = r.parent_id === null ? null : byId.get(r.parent_id)!;
              expect(parent?.deleted_at ?? null, `${r.id}'s parent is live`).toBeNull();
              expect(
                parentRuleProblem(r.type, parent ? parent.type : null),
                `${r.id} obeys the parent rule`,
              ).toBeNull();
            }
          }
        } finally {
          st.close();
          fs.rmSync(d, { recursive: true, force: true });
        }
      }),
      { numRuns: 100 },
    );
  });
});
