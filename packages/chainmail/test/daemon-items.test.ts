/**
 * Work items through the daemon's socket, with a real Dovecot for thread links: every item
 * operation, its audit row (with the decision duplicate on a keyed retry), links keyed by the
 * cache's thread key and the anchor's Message-ID, and the state surviving a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

const mail = (id: string | null, subject: string, extra = "") =>
  `${id ? `Message-ID: ${id}\r\n` : ""}From: Carol <carol@example.com>\r\nTo: alice@example.com\r\nSubject: ${subject}\r\nDate: Mon, 1 Dec 2026 10:00:00 +0000\r\n${extra}Content-Type: text/plain\r\n\r\nbody of ${subject}\r\n`;

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages("alice", "INBOX", [
    { raw: mail("<Root.1@example.com>", "Plan the offsite") },
    {
      raw: mail(
        "<reply.2@example.com>",
        "Re: Plan the offsite",
        "In-Reply-To: <Root.1@example.com>\r\nReferences: <Root.1@example.com>\r\n",
      ),
    },
    { raw: mail(null, "No id here") },
  ]);
});
afterAll(async () => {
  await env?.stop();
});

async function refOf(subject: string): Promise<string> {
  const res = await env.client.search({
    query: `subject:"${subject}"`,
    accounts: ["work"],
    source: "server",
  });
  const row = res.rows.find((r) => r.subject === subject);
  expect(row, subject).toBeDefined();
  return row!.ref;
}

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return err as { reason: string; message: string };
  }
  throw new Error("expected a failure");
};

describe("work items over the socket", () => {
  it("runs every item operation and audits each with its action", async () => {
    const c = env.client;
    const epic = await c.call("item.create", {
      type: "epic",
      title: "Offsite",
      area: "work",
      criteria: ["venue booked"],
    });
    const task = await c.call("item.create", {
      type: "task",
      title: "Book the venue",
      parent_id: epic.item.id,
      idempotency_key: "offsite:venue",
    });
    expect(task.duplicate).toBe(false);
    expect(task.item).toMatchObject({
      area: "work",
      area_inherited: true,
      priority: "p2",
    });
    const again = await c.call("item.create", {
      type: "task",
      title: "Book the venue",
      parent_id: epic.item.id,
      idempotency_key: "offsite:venue",
    });
    expect(again).toMatchObject({ duplicate: true, item: { id: task.item.id } });
    const upd = await c.call("item.update", { id: task.item.id, priority: "p0", due_date: "2026-12-24" });
    expect(upd.item).toMatchObject({ priority: "p0", due_date: "2026-12-24" });
    expect((await failure(c.call("item.update", { id: task.item.id, due_date: "2026-02-30" }))).message).toBe(
      "due_date 2026-02-30 is not a day of the calendar",
    );
    const crit = await c.call("item.criteria", { item_id: epic.item.id, add: ["budget signed"] });
    expect(crit.criteria.map((x) => x.text)).toEqual(["venue booked", "budget signed"]);
    const tick = await c.call("item.tick", {
      item_id: epic.item.id,
      criterion_id: crit.criteria[0]!.id,
      ticked: true,
      evidence: "contract 42",
    });
    expect(tick.criterion).toMatchObject({ ticked: true, evidence: "contract 42" });
    const other = await c.call("item.create", { type: "task", title: "Loose end", area: "personal" });
    expect(
      (await c.call("item.block", { item_id: task.item.id, blocked_by_id: other.item.id, linked: true }))
        .changed,
    ).toBe(true);
    const got = await c.call("item.get", { id: task.item.id });
    expect(got.ancestors.map((a) => a.id)).toEqual([epic.item.id]);
    expect(got.blocked_by.map((a) => a.id)).toEqual([other.item.id]);
    const inbox = await c.call("item.list", { inbox: true });
    expect(inbox.items.map((i) => i.id)).toEqual([other.item.id]);
    const del = await c.call("item.delete", { id: epic.item.id, cascade: true });
    expect(del.ids).toEqual([epic.item.id, task.item.id]);
    const res = await c.call("item.restore", { id: epic.item.id, cascade: true });
    expect(res.ids).toEqual([epic.item.id, task.item.id]);
    expect((await failure(c.call("item.delete", { id: "it_admin_work" }))).reason).toBe("CONFLICT");

    const rows = (await c.call("audit.read", { limit: 100 })).rows.filter((r) =>
      r.action.startsWith("item."),
    );
    const seen = rows.map((r) => `${r.action}:${r.decision}`).reverse();
    expect(seen).toEqual([
      "item.create:allowed",
      "item.create:allowed",
      "item.create:duplicate",
      "item.update:allowed",
      "item.update:error",
      "item.criteria:allowed",
      "item.tick:allowed",
      "item.create:allowed",
      "item.block:allowed",
      "item.get:allowed",
      "item.list:allowed",
      "item.delete:allowed",
      "item.restore:allowed",
      "item.delete:error",
    ]);
    expect(rows.every((r) => r.client === "cli")).toBe(true);
    expect(JSON.stringify(rows)).not.toContain("Book the venue");
  });

  it("links a thread by its key and the anchor's Message-ID, and refuses a message without one", async () => {
    const c = env.client;
    const item = await c.call("item.create", { type: "task", title: "Reply to Carol", area: "work" });
    const root = await refOf("Plan the offsite");
    const reply = await refOf("Re: Plan the offsite");
    const first = await c.call("item.link", { item_id: item.item.id, ref: reply, note: "venue thread" });
    expect(first).toMatchObject({
      created: true,
      link: {
        account: "work",
        thread_key: "<root.1@example.com>",
        anchor_message_id: "<reply.2@example.com>",
      },
    });
    const second = await c.call("item.link", { item_id: item.item.id, ref: root, anchor: true });
    expect(second).toMatchObject({
      created: false,
      link: {
        thread_key: "<root.1@example.com>",
        anchor_message_id: "<Root.1@example.com>",
        note: "venue thread",
      },
    });
    expect(JSON.stringify(second.link)).not.toContain("m1.");
    const none = await failure(
      c.call("item.link", { item_id: item.item.id, ref: await refOf("No id here") }),
    );
    expect(none).toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: "the message has no Message-ID header, so its thread cannot be linked",
    });
    // The cache's key for the thread is the link's key, so get_item finds its newest message there.
    await c.call("cache.sync", { accounts: ["work"] });
    const got = await c.call("item.get", { id: item.item.id });
    expect(got.threads_total).toBe(1);
    expect(got.threads[0]!.latest).toMatchObject({ subject: "Re: Plan the offsite", ref: reply });
    const rows = (await c.call("audit.read", { action: "item.link" })).rows;
    expect(rows.map((r) => [r.account, r.decision])).toEqual([
      ["work", "error"],
      ["work", "allowed"],
      ["work", "allowed"],
    ]);
    await c.call("item.unlink", {
      item_id: item.item.id,
      account: "work",
      thread_key: "<root.1@example.com>",
    });
    expect((await c.call("item.get", { id: item.item.id })).threads_total).toBe(0);
  });

  it("keeps items, the revision and the Admin items across a restart", async () => {
    const before = await env.client.call("item.list", { include_deleted: true });
    await env.restartDaemon();
    const after = await env.client.call("item.list", { include_deleted: true });
    expect(after).toEqual(before);
    expect(after.items.filter((i) => i.ongoing).map((i) => i.id)).toEqual([
      "it_admin_work",
      "it_admin_personal",
    ]);
  });

  it("refuses bad params with the parameter named", async () => {
    const c = env.client;
    expect(
      (await failure(c.call("item.create", { type: "chore" as never, title: "x", area: "work" }))).message,
    ).toMatch(/^type must be "objective", /);
    expect(
      (
        await failure(
          c.call("item.create", { type: "task", title: "x", area: "work", idempotency_key: "a b" }),
        )
      ).message,
    ).toBe("idempotency_key must be 1 to 128 of A-Z a-z 0-9 . _ : -");
    expect((await failure(c.call("item.list", { limit: 501 }))).message).toBe("limit must be from 1 to 500");
  });

  it("answers INVALID_ARGUMENT, never INTERNAL, for a date that is not a day of the calendar", async () => {
    const c = env.client;
    const task = await c.call("item.create", { type: "task", title: "Dates", area: "work" });
    for (const field of ["due_date", "start_date"] as const) {
      for (const value of ["2026-13-01", "2026-02-30", "2026-00-10", "2026-04-31", "2026-1-01"]) {
        const created = await failure(
          c.call("item.create", { type: "task", title: "x", area: "work", [field]: value }),
        );
        expect(created, `${field} ${value} on create`).toMatchObject({ reason: "INVALID_ARGUMENT" });
        expect(created.message).toContain(field);
        const updated = await failure(c.call("item.update", { id: task.item.id, [field]: value }));
        expect(updated, `${field} ${value} on update`).toMatchObject({ reason: "INVALID_ARGUMENT" });
      }
    }
    // a leap day is a day
    expect((await c.call("item.update", { id: task.item.id, due_date: "2028-02-29" })).item.due_date).toBe(
      "2028-02-29",
    );
  });
});
