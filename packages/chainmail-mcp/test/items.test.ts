/**
 * The work item tools through a real SDK client, with the daemon (and a real Dovecot for links)
 * behind them: item text comes back untrusted whoever wrote it, keyed retries, the tree rules'
 * errors, thread links and the audit rows of kind mcp.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INJECTION_TEXT, isUntrusted, type Json, type McpEnv, startMcpEnv, u } from "./helpers.js";

let m: McpEnv;

beforeAll(async () => {
  m = await startMcpEnv();
  await m.env.dv.appendMessages("alice", "INBOX", [
    {
      raw: "Message-ID: <Quote.7@example.com>\r\nFrom: Dana <dana@example.com>\r\nTo: alice@example.com\r\nSubject: Quote for the roof\r\nDate: Tue, 2 Dec 2026 09:00:00 +0000\r\n\r\nsee attached\r\n",
    },
  ]);
});
afterAll(async () => {
  await m?.close();
});

type Item = Json & { id: string; title: unknown; revision: number };

describe("work item tools", () => {
  it("create_item returns the item and criteria with their text untrusted, and a keyed retry as duplicate", async () => {
    const args = {
      type: "task",
      title: INJECTION_TEXT,
      area: "personal",
      description: "**fix** the roof",
      criteria: ["quote accepted"],
      idempotency_key: "roof-1",
    };
    const r = await m.tools.ok<{ item: Item; criteria: Array<Json>; duplicate: boolean }>(
      "create_item",
      args,
    );
    expect(r.item.title).toEqual(u(INJECTION_TEXT));
    expect(r.item.description).toEqual(u("**fix** the roof"));
    expect(r.item).toMatchObject({
      type: "task",
      area: "personal",
      priority: "p2",
      state: "backlog",
      parent_id: null,
    });
    expect(r.criteria[0]).toMatchObject({ text: u("quote accepted"), ticked: false, evidence: null });
    expect(r.duplicate).toBe(false);
    const again = await m.tools.ok<{ item: Item; duplicate: boolean }>("create_item", args);
    expect(again).toMatchObject({ duplicate: true, item: { id: r.item.id } });
    const other = await m.tools.fails("create_item", { ...args, title: "another" });
    expect(other).toMatchObject({
      reason: "CONFLICT",
      message: 'idempotency_key "roof-1" was used for a different input',
    });

    const crit = r.criteria[0]!["id"] as string;
    const tick = await m.tools.ok<{ criterion: Json; revision: number }>("tick_criterion", {
      item_id: r.item.id,
      criterion_id: crit,
      ticked: true,
      evidence: "signed 2026-12-02",
    });
    expect(tick.criterion["evidence"]).toEqual(u("signed 2026-12-02"));
    const done = await m.tools.ok<{ item: Item }>("update_item", { id: r.item.id, state: "done" });
    expect(done.item.revision).toBe(tick.revision + 1);
  });

  it("refuses what the tree rules refuse, with the daemon's message", async () => {
    expect(
      await m.tools.fails("create_item", { type: "key-result", title: "x", area: "work" }),
    ).toMatchObject({
      reason: "CONFLICT",
      message: "a key-result needs a parent (objective)",
    });
    expect(await m.tools.fails("create_item", { type: "epic", title: "x" })).toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: "area is required for an item with no parent_id",
    });
    expect((await m.tools.fails("delete_item", { id: "it_admin_work" })).reason).toBe("CONFLICT");
    expect((await m.tools.fails("get_item", { id: "it_nope" })).reason).toBe("NOT_FOUND");
    expect(
      (await m.tools.fails("create_item", { type: "task", title: "x", area: "work", due_date: "24.12." }))
        .reason,
    ).toBe("INVALID_ARGUMENT");
    const a = await m.tools.ok<{ item: Item }>("create_item", { type: "task", title: "a", area: "work" });
    const b = await m.tools.ok<{ item: Item }>("create_item", { type: "task", title: "b", area: "work" });
    await m.tools.ok("set_blocker", { item_id: a.item.id, blocked_by_id: b.item.id, linked: true });
    const cycle = await m.tools.fails("set_blocker", {
      item_id: b.item.id,
      blocked_by_id: a.item.id,
      linked: true,
    });
    expect(cycle.message).toContain(`${b.item.id} → ${a.item.id} → ${b.item.id}`);
  });

  it("links a thread, shows it in get_item with untrusted keys, and unlinks it by account and thread_key", async () => {
    const epic = await m.tools.ok<{ item: Item }>("create_item", {
      type: "epic",
      title: "House",
      area: "personal",
    });
    const task = await m.tools.ok<{ item: Item }>("create_item", {
      type: "task",
      title: "Roof",
      parent_id: epic.item.id,
    });
    const rows = (
      await m.tools.ok<{ rows: Array<{ ref: string }> }>("search", {
        query: "subject:roof",
        accounts: ["work"],
      })
    ).rows;
    const link = await m.tools.ok<{ link: Json; created: boolean }>("link_thread", {
      item_id: task.item.id,
      ref: rows[0]!.ref,
      note: "the quote",
    });
    expect(link).toMatchObject({
      created: true,
      link: { account: "work", thread_key: u("<quote.7@example.com>"), note: u("the quote") },
    });
    const got = await m.tools.ok<Json & { threads: Array<Json>; ancestors: Array<Json> }>("get_item", {
      id: task.item.id,
    });
    expect(got.ancestors).toEqual([
      { id: epic.item.id, type: "epic", title: u("House"), state: "backlog", deleted: false },
    ]);
    expect(isUntrusted(got.threads[0]!["anchor_message_id"])).toBe(true);
    const list = await m.tools.ok<{ items: Item[] }>("list_items", { under: epic.item.id });
    expect(list.items.map((i) => i.id)).toEqual([task.item.id]);
    await m.tools.ok("unlink_thread", {
      item_id: task.item.id,
      account: "work",
      thread_key: "<quote.7@example.com>",
    });
    expect(
      (await m.tools.ok<{ threads_total: number }>("get_item", { id: task.item.id })).threads_total,
    ).toBe(0);
    const del = await m.tools.ok<{ ids: string[] }>("delete_item", { id: epic.item.id, cascade: true });
    expect(del.ids).toEqual([epic.item.id, task.item.id]);
    const res = await m.tools.ok<{ ids: string[] }>("restore_item", { id: epic.item.id, cascade: true });
    expect(res.ids).toEqual([epic.item.id, task.item.id]);
    const crit = await m.tools.ok<{ criteria: Json[] }>("edit_criteria", {
      item_id: task.item.id,
      add: ["one", "two"],
    });
    expect(crit.criteria.map((c) => c["text"])).toEqual([u("one"), u("two")]);
  });

  it('takes "" where the seed gives empty a meaning: area, parent_id, priority, evidence, note', async () => {
    const epic = await m.tools.ok<{ item: Item }>("create_item", {
      type: "epic",
      title: "Garden",
      area: "personal",
      priority: "p1",
    });
    // Empty area and priority: inherited from the parent.
    const under = await m.tools.ok<{ item: Item }>("create_item", {
      type: "task",
      title: "Mow",
      parent_id: epic.item.id,
      area: "",
      priority: "",
    });
    expect(under.item).toMatchObject({
      parent_id: epic.item.id,
      area: "personal",
      area_inherited: true,
      priority: "p1",
      priority_inherited: true,
    });
    // Empty parent_id: a root item, or for a task the inbox.
    const root = await m.tools.ok<{ item: Item }>("create_item", {
      type: "task",
      title: "Inbox task",
      parent_id: "",
      area: "work",
      priority: "",
      criteria: ["done it"],
    });
    expect(root.item).toMatchObject({ parent_id: null, area: "work", priority: "p2" });
    const inbox = await m.tools.ok<{ items: Item[] }>("list_items", { inbox: true });
    expect(inbox.items.map((i) => i.id)).toContain(root.item.id);
    // Empty evidence: an untick; a tick still needs evidence.
    const crit = (await m.tools.ok<{ criteria: Json[] }>("get_item", { id: root.item.id })).criteria[0]!;
    const ids = { item_id: root.item.id, criterion_id: crit["id"] as string };
    const noEvidence = await m.tools.fails("tick_criterion", { ...ids, ticked: true, evidence: "" });
    expect(noEvidence.reason).toBe("INVALID_ARGUMENT");
    expect(noEvidence.message).toContain("evidence");
    await m.tools.ok("tick_criterion", { ...ids, ticked: true, evidence: "mowed" });
    const untick = await m.tools.ok<{ criterion: Json }>("tick_criterion", {
      ...ids,
      ticked: false,
      evidence: "",
    });
    expect(untick.criterion).toMatchObject({ ticked: false, evidence: null });
    // Empty note: keeps the note the link has.
    const ref = (
      await m.tools.ok<{ rows: Array<{ ref: string }> }>("search", {
        query: "subject:roof",
        accounts: ["work"],
      })
    ).rows[0]!.ref;
    await m.tools.ok("link_thread", { item_id: root.item.id, ref, note: "the roof quote" });
    const again = await m.tools.ok<{ link: Json }>("link_thread", { item_id: root.item.id, ref, note: "" });
    expect(again.link["note"]).toEqual(u("the roof quote"));
    // Elsewhere "" is still no value: update_item's area is an enum without it.
    expect((await m.tools.fails("update_item", { id: root.item.id, area: "" })).reason).toBe(
      "INVALID_ARGUMENT",
    );
  });

  it("takes a description of 64 KiB of UTF-8 and refuses one byte more, whatever its length in characters", async () => {
    const full = "é".repeat(32_768); // 65,536 bytes, 32,768 characters
    const ok = await m.tools.ok<{ item: Item }>("create_item", {
      type: "task",
      title: "Long notes",
      area: "work",
      description: full,
    });
    expect(ok.item["description"]).toEqual(u(full));
    const over = await m.tools.fails("create_item", {
      type: "task",
      title: "Too long",
      area: "work",
      description: `${full}a`,
    });
    expect(over).toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: "description must be at most 65536 bytes (64 KiB) of UTF-8",
    });
  });

  it("audits every item tool with its action, as an mcp call", async () => {
    const rows = (await m.daemonClient.call("audit.read", { limit: 1000 })).rows.filter((r) =>
      r.action.startsWith("item."),
    );
    const actions = new Set(rows.map((r) => r.action));
    for (const a of [
      "create",
      "update",
      "get",
      "list",
      "delete",
      "restore",
      "criteria",
      "tick",
      "block",
      "link",
      "unlink",
    ])
      expect(actions.has(`item.${a}`), a).toBe(true);
    expect(rows.every((r) => r.client === "mcp")).toBe(true);
    expect(rows.some((r) => r.action === "item.create" && r.decision === "duplicate")).toBe(true);
  });
});
