/**
 * The work item rules over a real state.db on disk: the parent rule, inheritance, cycles, cascades
 * and exact restores, revisions, idempotent creates, criteria edits and the inbox.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editCriteria, linkThread, setBlocker, tickCriterion, unlinkThread } from "../src/items/relations.js";
import { ItemService } from "../src/items/service.js";
import { ItemsStore } from "../src/store/items.js";
import { StateDb } from "../src/store/state.js";

let dir: string;
let state: StateDb;
let s: ItemService;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-items-"));
  state = new StateDb(path.join(dir, "state.db"));
  s = new ItemService({ store: new ItemsStore(state.db) });
});
afterEach(() => {
  state.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const fails = (fn: () => unknown): { reason: string; message: string } => {
  try {
    fn();
  } catch (err) {
    return err as { reason: string; message: string };
  }
  throw new Error("expected a failure");
};

const make = (type: Parameters<ItemService["create"]>[0]["type"], extra: Record<string, unknown> = {}) =>
  s.create({ type, title: `a ${type}`, area: "work", ...extra }).item;

describe("the tree", () => {
  it("starts with one standing Admin item per area that cannot be deleted", () => {
    const ongoing = s.list({ limit: 100, ongoing: true }).items;
    expect(ongoing.map((i) => [i.id, i.area, i.ongoing])).toEqual([
      ["it_admin_work", "work", true],
      ["it_admin_personal", "personal", true],
    ]);
    expect(fails(() => s.delete("it_admin_work", true))).toMatchObject({ reason: "CONFLICT" });
    expect(fails(() => s.update({ id: "it_admin_work", clear: ["area"] })).reason).toBe("CONFLICT");
    const t = s.create({ type: "task", title: "file taxes", parent_id: "it_admin_personal" }).item;
    expect(t.area).toBe("personal");
  });

  it("checks the parent rule on create, move and type change against the parent and every child", () => {
    expect(fails(() => s.create({ type: "key-result", title: "x", area: "work" })).message).toMatch(
      /a key-result needs a parent \(objective\)/,
    );
    const obj = make("objective");
    expect(fails(() => make("objective", { parent_id: obj.id })).message).toMatch(/only at the root/);
    const kr = make("key-result", { parent_id: obj.id });
    const epic = make("epic", { parent_id: kr.id });
    const story = make("story", { parent_id: epic.id });
    // a move under a type that may not hold it
    expect(fails(() => s.update({ id: story.id, parent_id: obj.id })).message).toMatch(
      /a story cannot sit under an objective/,
    );
    // a type change the child refuses
    expect(fails(() => s.update({ id: epic.id, type: "task" })).message).toMatch(
      new RegExp(`its child ${story.id}: a story cannot sit under a task`),
    );
    // a type change the parent refuses
    expect(fails(() => s.update({ id: epic.id, type: "story" })).message).toMatch(
      /a story cannot sit under a key-result/,
    );
    // under itself
    expect(fails(() => s.update({ id: epic.id, parent_id: story.id })).message).toMatch(/under itself/);
    expect(s.update({ id: story.id, type: "bug" }).item.type).toBe("bug");
  });

  it("inherits area and priority, requires an area at the root and keeps it on a move to the top", () => {
    expect(fails(() => s.create({ type: "epic", title: "x" })).message).toBe(
      "area is required for an item with no parent_id",
    );
    const epic = make("epic", { area: "personal", priority: "p0" });
    const task = s.create({ type: "task", title: "t", parent_id: epic.id }).item;
    expect(task).toMatchObject({
      area: "personal",
      area_inherited: true,
      priority: "p0",
      priority_inherited: true,
    });
    expect(make("epic").priority).toBe("p2");
    s.update({ id: epic.id, priority: "p3" });
    expect(s.get(task.id).item.priority).toBe("p3");
    const moved = s.update({ id: task.id, clear: ["parent_id"] }).item;
    expect(moved).toMatchObject({ parent_id: null, area: "personal", area_inherited: false, priority: "p2" });
    expect(s.list({ limit: 100, inbox: true }).items.map((i) => i.id)).toEqual([task.id]);
    expect(fails(() => s.update({ id: task.id, clear: ["area"] })).message).toMatch(/area is required/);
    expect(fails(() => s.update({ id: task.id, area: "work", clear: ["area"] })).message).toBe(
      "area cannot be both given and cleared",
    );
    expect(s.list({ limit: 100, area: "personal", ongoing: false }).items.map((i) => i.id)).toEqual([
      epic.id,
      task.id,
    ]);
  });

  it("lists in tree order, pages with a token tied to the list, and by changed_since in revision order", () => {
    const a = make("epic");
    const b = make("epic");
    const a1 = make("story", { parent_id: a.id });
    const a1x = make("task", { parent_id: a1.id });
    const b1 = make("story", { parent_id: b.id });
    const tree = s.list({ limit: 100, ongoing: false }).items.map((i) => i.id);
    expect(tree).toEqual([a.id, a1.id, a1x.id, b.id, b1.id]);
    const p1 = s.list({ limit: 2, ongoing: false });
    const p2 = s.list({ limit: 2, ongoing: false, page_token: p1.next_page_token! });
    const p3 = s.list({ limit: 2, ongoing: false, page_token: p2.next_page_token! });
    expect([...p1.items, ...p2.items, ...p3.items].map((i) => i.id)).toEqual(tree);
    expect(p3.next_page_token).toBeNull();
    expect(fails(() => s.list({ limit: 2, page_token: p1.next_page_token! })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    expect(s.list({ limit: 100, under: a.id }).items.map((i) => i.id)).toEqual([a1.id, a1x.id]);

    const since = s.list({ limit: 1 }).revision;
    s.update({ id: b1.id, title: "renamed" });
    s.delete(a.id, true);
    const changed = s.list({ limit: 100, changed_since: since });
    expect(changed.items.map((i) => [i.id, i.deleted])).toEqual([
      [b1.id, false],
      [a.id, true],
      [a1.id, true],
      [a1x.id, true],
    ]);
    expect(changed.revision).toBe(since + 2);
    expect(s.list({ limit: 100, ongoing: false }).items.map((i) => i.id)).toEqual([b.id, b1.id]);
    expect(s.list({ limit: 100, ongoing: false, include_deleted: true }).items).toHaveLength(5);
  });
});

describe("the description", () => {
  // 64 KiB is 65,536 bytes of UTF-8, whatever the characters: 2-byte é, 3-byte €, 4-byte emoji
  // (two UTF-16 code units each, so a string's length is not its size either way).
  const cases: Array<[string, string, number]> = [
    ["é", "é".repeat(32_768), 65_536],
    ["€", `${"€".repeat(21_845)}a`, 65_536],
    ["emoji", "😀".repeat(16_384), 65_536],
    ["mixed", `${"€".repeat(21_844)}éa`, 65_535],
  ];
  for (const [name, text, bytes] of cases) {
    it(`takes ${bytes} bytes of ${name} text and refuses one byte more, on create and update`, () => {
      expect(Buffer.byteLength(text, "utf8")).toBe(bytes);
      const item = make("task", { description: text });
      expect(item.description).toBe(text);
      const over = `${text}${"a".repeat(65_537 - bytes)}`;
      expect(Buffer.byteLength(over, "utf8")).toBe(65_537);
      const refused = fails(() => make("task", { description: over }));
      expect(refused).toMatchObject({ reason: "INVALID_ARGUMENT" });
      expect(refused.message).toBe("description must be at most 65536 bytes (64 KiB) of UTF-8");
      expect(fails(() => s.update({ id: item.id, description: over })).reason).toBe("INVALID_ARGUMENT");
      expect(s.get(item.id).item.description).toBe(text);
    });
  }

  it("counts bytes, not characters: 32,769 two-byte characters are too many", () => {
    const text = "é".repeat(32_769);
    expect(text.length).toBeLessThan(65_536);
    expect(fails(() => make("task", { description: text })).reason).toBe("INVALID_ARGUMENT");
  });
});

describe("revisions and idempotency", () => {
  it("bumps the revision once per change and not for a call that changes nothing", () => {
    const r0 = s.list({ limit: 1 }).revision;
    const e = make("epic");
    expect(e.revision).toBe(r0 + 1);
    const u = s.update({ id: e.id, title: "x" });
    expect(u.revision).toBe(r0 + 2);
    expect(s.update({ id: e.id, title: "x" }).revision).toBe(r0 + 2);
    expect(s.delete(e.id, false).revision).toBe(r0 + 3);
    expect(s.delete(e.id, false)).toEqual({ ids: [], revision: r0 + 3 });
  });

  it("returns the first item for a repeated key and input, and refuses another input", () => {
    const first = s.create({
      type: "task",
      title: "t",
      area: "work",
      criteria: ["a"],
      idempotency_key: "k:1",
    });
    const again = s.create({
      type: "task",
      title: "t",
      area: "work",
      criteria: ["a"],
      idempotency_key: "k:1",
    });
    expect(again.duplicate).toBe(true);
    expect(again.item.id).toBe(first.item.id);
    expect(again.criteria).toEqual(first.criteria);
    expect(
      fails(() => s.create({ type: "task", title: "u", area: "work", idempotency_key: "k:1" })),
    ).toMatchObject({
      reason: "CONFLICT",
      message: 'idempotency_key "k:1" was used for a different input',
    });
    expect(s.list({ limit: 100, inbox: true }).items).toHaveLength(1);
  });
});

describe("deletes and restores", () => {
  it("needs cascade for live children and restores exactly what the same delete removed, parents first", () => {
    const e = make("epic");
    const f = make("feature", { parent_id: e.id });
    const st1 = make("story", { parent_id: f.id });
    const st2 = make("story", { parent_id: f.id });
    expect(fails(() => s.delete(e.id, false)).message).toMatch(/has 3 live item\(s\) below it/);
    const early = s.delete(st2.id, false);
    expect(early.ids).toEqual([st2.id]);
    const del = s.delete(e.id, true);
    expect(del.ids).toEqual([e.id, f.id, st1.id]);
    expect(fails(() => s.restore(f.id, false)).message).toMatch(
      new RegExp(`the parent ${e.id} of ${f.id} is deleted`),
    );
    const res = s.restore(e.id, true);
    expect(res.ids).toEqual([e.id, f.id, st1.id]);
    expect(s.get(st2.id).item.deleted).toBe(true);
    expect(s.restore(e.id, true).ids).toEqual([]);
    expect(s.restore(st2.id, false).ids).toEqual([st2.id]);
  });
});

describe("criteria", () => {
  it("removes, edits, reorders and adds in that order, in one transaction, and gates done", () => {
    const c = s.create({ type: "task", title: "t", area: "work", criteria: ["one", "two", "three"] });
    const [one, two, three] = c.criteria.map((x) => x.id);
    expect(
      fails(() => s.create({ type: "task", title: "t", area: "work", criteria: ["a"], state: "done" }))
        .reason,
    ).toBe("INVALID_ARGUMENT");
    const r = editCriteria(s, c.item.id, {
      remove: [two!],
      edit: [{ id: three!, text: "THREE" }],
      order: [three!, one!],
      add: ["four"],
    });
    expect(r.criteria.map((x) => x.text)).toEqual(["THREE", "one", "four"]);
    // a bad step anywhere leaves everything as it was
    const before = s.get(c.item.id);
    expect(fails(() => editCriteria(s, c.item.id, { remove: [one!], order: [one!, three!] })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    expect(
      fails(() => editCriteria(s, c.item.id, { edit: [{ id: one!, text: "x" }], remove: [one!] })).message,
    ).toMatch(/removed in the same call/);
    expect(s.get(c.item.id)).toEqual(before);

    expect(fails(() => s.update({ id: c.item.id, state: "done" })).message).toMatch(/3 are not/);
    expect(fails(() => tickCriterion(s, c.item.id, one!, true, undefined)).message).toMatch(
      /evidence is required/,
    );
    for (const x of r.criteria) tickCriterion(s, c.item.id, x.id, true, "shipped in v2");
    expect(fails(() => tickCriterion(s, c.item.id, one!, false, "no")).message).toBe(
      "evidence must be empty when unticking",
    );
    const rev = s.list({ limit: 1 }).revision;
    expect(tickCriterion(s, c.item.id, one!, true, "shipped in v2").revision).toBe(rev);
    expect(s.update({ id: c.item.id, state: "done" }).item.state).toBe("done");
    expect(fails(() => tickCriterion(s, c.item.id, one!, false, undefined)).reason).toBe("CONFLICT");
    expect(fails(() => editCriteria(s, c.item.id, { add: ["five"] })).reason).toBe("CONFLICT");
  });
});

describe("blockers and links", () => {
  it("refuses a self-block and a cycle, naming the cycle, and shows both directions", () => {
    const [a, b, c] = [make("task"), make("task"), make("task")];
    expect(fails(() => setBlocker(s, a.id, a.id, true)).message).toBe("an item cannot block itself");
    const since = s.list({ limit: 1 }).revision;
    expect(setBlocker(s, a.id, b.id, true).changed).toBe(true);
    expect(setBlocker(s, a.id, b.id, true).changed).toBe(false);
    expect(s.list({ limit: 10, changed_since: since }).items.map((i) => i.id)).toEqual([a.id, b.id]);
    setBlocker(s, b.id, c.id, true);
    expect(fails(() => setBlocker(s, c.id, a.id, true)).message).toBe(
      `${c.id} blocked by ${a.id} would close the cycle ${c.id} → ${a.id} → ${b.id} → ${c.id} (each is blocked by the next)`,
    );
    const gb = s.get(b.id);
    expect(gb.blocked_by.map((x) => x.id)).toEqual([c.id]);
    expect(gb.blocks.map((x) => x.id)).toEqual([a.id]);
    s.delete(c.id, false);
    expect(s.get(b.id).blocked_by).toEqual([]);
  });

  it("keeps one link per thread, with its anchor and note, and says which live items link a thread", () => {
    const a = make("task");
    const t = { account: "work", threadKey: "<root@x>", messageId: "<root@x>" };
    const l1 = linkThread(s, a.id, t, false, "why");
    expect(l1).toMatchObject({ created: true, link: { anchor_message_id: "<root@x>", note: "why" } });
    const l2 = linkThread(s, a.id, { ...t, messageId: "<reply@x>" }, true, undefined);
    expect(l2).toMatchObject({ created: false, link: { anchor_message_id: "<reply@x>", note: "why" } });
    expect(linkThread(s, a.id, t, false, undefined).revision).toBe(l2.revision);
    expect(s.linkedItems("work", "<root@x>")).toEqual([a.id]);
    expect(s.get(a.id)).toMatchObject({
      threads_total: 1,
      threads: [{ thread_key: "<root@x>", latest: null }],
    });
    unlinkThread(s, a.id, "work", "<root@x>");
    expect(s.linkedItems("work", "<root@x>")).toEqual([]);
  });
});
