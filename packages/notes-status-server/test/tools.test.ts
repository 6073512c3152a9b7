import type { Client } from "@modelcontextprotocol/client";
import { type Connected, connectInMemory, type Session, session } from "@mcpforge/toolkit/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "./helpers.js";

let app: TestApp;
let conn: Connected;
let client: Client;
let calls: Session;

beforeEach(async () => {
  app = await testApp("2026-03-02T08:00:00.000Z"); // Monday
  conn = await connectInMemory(app.kit, { scopes: [] });
  client = conn.client;
  calls = session(client);
});
afterEach(async () => {
  await conn.close();
  await app.close();
});

type Obj = Record<string, unknown>;

/**
 * The kit's session.ok (through the real SDK client, which validates structuredContent), plus this
 * server's text mode: the text block is the structured content as JSON.
 */
async function ok<T = Obj>(name: string, args: Obj = {}): Promise<T> {
  const r = await calls.raw(name, args);
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent)}`);
  const text = (r.content[0] as { text: string }).text;
  expect(JSON.parse(text)).toEqual(r.structuredContent);
  return r.structuredContent as T;
}

const fails = (name: string, args: Obj) => calls.fails(name, args);

const NOTE_KEYS = [
  "autoRestackAfterHours",
  "content",
  "createdAt",
  "id",
  "scheduledAt",
  "status",
  "tags",
  "updatedAt",
];

describe("list_notes (a page: notes, count, total, skip, hasMore)", () => {
  it("answers {notes, count, total, skip, hasMore} with exactly a list item's eight note fields", async () => {
    const empty = await ok("list_notes");
    expect(empty).toEqual({ notes: [], count: 0, total: 0, skip: 0, hasMore: false });
    for (let i = 0; i < 25; i++) {
      app.time.advance(1000);
      await app.notes.create({
        content: `note ${i}`,
        tags: i % 2 ? ["odd"] : ["even"],
        status: i < 5 ? "evergreen" : "draft",
      });
    }
    const first = await ok<{ notes: Obj[]; count: number; total: number; hasMore: boolean }>("list_notes");
    expect(first.count).toBe(20);
    expect(first.total).toBe(25);
    expect(first.hasMore).toBe(true);
    expect(Object.keys(first.notes[0]!).sort()).toEqual(NOTE_KEYS);
    expect(first.notes[0]!["content"]).toBe("note 24");
    const second = await ok("list_notes", { skip: 20 });
    expect(second).toMatchObject({ count: 5, total: 25, skip: 20, hasMore: false });
    expect(await ok("list_notes", { limit: 50 })).toMatchObject({ count: 25, hasMore: false });
    expect(await ok("list_notes", { status: "evergreen" })).toMatchObject({ count: 5, total: 5 });
    expect(await ok("list_notes", { tag: "ODD " })).toMatchObject({ total: 12 });
    expect(await ok("list_notes", { tag: "odd", status: "evergreen", limit: 1 })).toMatchObject({
      count: 1,
      total: 2,
      hasMore: true,
    });
    expect(await ok("list_notes", { tag: "evergreen" })).toMatchObject({ total: 0 });
    expect(await ok("list_notes", { skip: 1e12 })).toMatchObject({ count: 0, total: 25, hasMore: false });
  });

  it("refuses out-of-range arguments", async () => {
    expect((await fails("list_notes", { limit: 51 })).reason).toBe("INVALID_ARGUMENT");
    expect((await fails("list_notes", { limit: 0 })).reason).toBe("INVALID_ARGUMENT");
    expect((await fails("list_notes", { limit: 2.5 })).message).toMatch(/limit.*integer/);
    expect((await fails("list_notes", { skip: -1 })).reason).toBe("INVALID_ARGUMENT");
    expect((await fails("list_notes", { status: "archived" })).message).toMatch(/status.*one of/);
    // A blank tag would count every note in total and match none: refused, not paged forever.
    for (const tag of ["", "   "]) {
      const e = await fails("list_notes", { tag });
      expect(e.reason).toBe("INVALID_ARGUMENT");
      expect(e.message).toBe(
        "tag must not be empty or only spaces; leave tag out to list notes with any tag",
      );
    }
  });

  it("is advertised read-only and closed-world in group Notes, limit 1-50 (20), the five statuses", async () => {
    const { tools } = await client.listTools();
    const t = tools.find((x) => x.name === "list_notes")!;
    expect(t.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
      idempotentHint: true,
    });
    expect(t._meta).toMatchObject({ "io.mcpforge/group": "Notes" });
    const props = t.inputSchema.properties as Record<string, Obj>;
    expect(props["limit"]).toMatchObject({ type: "number", default: 20, minimum: 1, maximum: 50 });
    expect(props["skip"]).toMatchObject({ type: "number", default: 0 });
    // The specification's five statuses, and no sixth (a note whose publishing gave up is a draft).
    expect(props["status"]).toEqual(
      expect.objectContaining({ enum: ["draft", "ready", "scheduled", "published", "evergreen"] }),
    );
    expect(t.inputSchema.required ?? []).toEqual([]);
  });
});

describe("note tools", () => {
  it("create, get, update, delete", async () => {
    const { note } = await ok<{ note: Obj }>("create_note", {
      content: "Hello 👋",
      tags: ["Tech", "tech ", "AI"],
    });
    expect(note).toMatchObject({
      content: "Hello 👋",
      tags: ["tech", "ai"],
      status: "draft",
      scheduledAt: null,
      autoRestackAfterHours: null,
    });
    expect(Object.keys(note).sort()).toEqual(NOTE_KEYS);
    const id = note["id"] as string;
    const got = await ok<{ note: Obj }>("get_note", { id });
    expect(got.note).toMatchObject({
      id,
      attempts: 0,
      lastError: null,
      sourceNoteId: null,
      publishedAt: null,
    });
    app.time.advance(5000);
    const updated = await ok<{ note: Obj }>("update_note", {
      id,
      content: "Changed",
      status: "ready",
      autoRestackAfterHours: 12,
    });
    expect(updated.note).toMatchObject({
      content: "Changed",
      status: "ready",
      autoRestackAfterHours: 12,
      tags: ["tech", "ai"],
    });
    expect(updated.note["updatedAt"]).not.toBe(updated.note["createdAt"]);
    const deleted = await ok<{ deleted: boolean; note: Obj }>("delete_note", { id });
    expect(deleted).toMatchObject({ deleted: true, note: { id, content: "Changed" } });
    expect(await fails("get_note", { id })).toMatchObject({
      reason: "NOT_FOUND",
      message: `Note not found: ${id}`,
    });
    expect((await fails("delete_note", { id })).reason).toBe("NOT_FOUND");
  });

  it("gives clear errors for bad notes and transitions", async () => {
    expect((await fails("create_note", { content: "" })).reason).toBe("INVALID_ARGUMENT");
    expect((await fails("create_note", { content: "   " })).message).toMatch(/empty/);
    expect((await fails("create_note", { content: "x".repeat(10_001) })).reason).toBe("INVALID_ARGUMENT");
    expect((await fails("create_note", { content: "x", status: "published" })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    expect((await fails("create_note", { content: "x", tags: [" "] })).message).toMatch(/tag/);
    const { note } = await ok<{ note: { id: string } }>("create_note", { content: "x" });
    expect((await fails("update_note", { id: note.id })).message).toMatch(/at least one/);
    expect((await fails("update_note", { id: "missing", content: "y" })).reason).toBe("NOT_FOUND");
    expect((await fails("unschedule_note", { id: note.id })).reason).toBe("INVALID_TRANSITION");
  });
});

describe("queue tools", () => {
  async function plan() {
    return ok("set_queue_slots", {
      timeZone: "Europe/Berlin",
      slots: { monday: ["09:00", "17:00"], tuesday: ["09:00"] },
    });
  }

  it("sets and reads the weekly plan", async () => {
    const before = await ok<{ timeZone: string; slots: Record<string, string[]> }>("get_queue_slots");
    expect(before.timeZone).toBe("UTC");
    expect(Object.keys(before.slots)).toHaveLength(7);
    const after = await plan();
    expect(after).toMatchObject({
      timeZone: "Europe/Berlin",
      slots: { monday: ["09:00", "17:00"], tuesday: ["09:00"], sunday: [] },
      evergreenHorizonHours: 24,
      evergreenMinGapDays: 30,
    });
    expect(await ok("get_queue_slots")).toEqual(after);
    expect(await fails("set_queue_slots", { timeZone: "Not/AZone" })).toMatchObject({
      reason: "INVALID_TIME_ZONE",
      message: 'Unknown time zone: "Not/AZone"',
    });
    expect((await fails("set_queue_slots", { slots: { monday: ["25:00"] } })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    expect((await fails("set_queue_slots", { slots: { someday: ["09:00"] } })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    expect((await fails("set_queue_slots", {})).message).toMatch(/at least one/);
  });

  it("schedules into the next free slots and at explicit times, shows the queue, unschedules", async () => {
    expect((await fails("schedule_notes", { notes: [{ id: "nope" }] })).reason).toBe("NOT_FOUND");
    const ids: string[] = [];
    for (const c of ["a", "b", "c"])
      ids.push((await ok<{ note: { id: string } }>("create_note", { content: c, status: "ready" })).note.id);
    expect((await fails("schedule_notes", { notes: [{ id: ids[0] }] })).reason).toBe("NO_FREE_SLOT");
    await plan();
    const next = await ok<{ slots: Obj[] }>("get_next_available_slots", { count: 3 });
    // Berlin is UTC+1 in early March: Monday 09:00 local = 08:00Z, which is not after now (08:00Z).
    expect(next.slots.map((s) => s["at"])).toEqual([
      "2026-03-02T16:00:00.000Z",
      "2026-03-03T08:00:00.000Z",
      "2026-03-09T08:00:00.000Z",
    ]);
    const scheduled = await ok<{ notes: Obj[] }>("schedule_notes", {
      notes: [
        { id: ids[0] },
        { id: ids[1], scheduledAt: "2026-03-04T12:00:00+01:00", autoRestackAfterHours: 24 },
        { id: ids[2] },
      ],
    });
    expect(scheduled.notes.map((n) => [n["status"], n["scheduledAt"], n["autoRestackAfterHours"]])).toEqual([
      ["scheduled", "2026-03-02T16:00:00.000Z", null],
      ["scheduled", "2026-03-04T11:00:00.000Z", 24],
      ["scheduled", "2026-03-03T08:00:00.000Z", null],
    ]);
    const queue = await ok<{
      entries: Array<{ slot: string | null; local: string; note: Obj | null }>;
      total: number;
    }>("get_queue", { days: 8 });
    expect(queue.entries.map((e) => [e.local, e.slot, e.note?.["content"] ?? null])).toEqual([
      ["2026-03-02 17:00", "17:00", "a"],
      ["2026-03-03 09:00", "09:00", "c"],
      ["2026-03-04 12:00", null, "b"],
      ["2026-03-09 09:00", "09:00", null],
      ["2026-03-09 17:00", "17:00", null],
      ["2026-03-10 09:00", "09:00", null], // 08:00Z, exactly the end of the 8-day window
    ]);
    expect(
      (await ok<{ entries: unknown[] }>("get_queue", { days: 8, includeFreeSlots: false })).entries,
    ).toHaveLength(3);
    expect(await ok("get_queue", { days: 8, limit: 2 })).toMatchObject({ total: 6, hasMore: true });
    expect(
      await fails("schedule_notes", { notes: [{ id: ids[0], scheduledAt: "2026-03-01T00:00:00Z" }] }),
    ).toMatchObject({
      reason: "PAST_TIME",
    });
    expect((await fails("schedule_notes", { notes: [{ id: ids[0] }, { id: ids[0] }] })).message).toMatch(
      /twice/,
    );
    expect((await fails("schedule_notes", { notes: [{ id: ids[0], scheduledAt: "tomorrow" }] })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    const back = await ok<{ note: Obj }>("unschedule_note", { id: ids[0], status: "draft" });
    expect(back.note).toMatchObject({ status: "draft", scheduledAt: null });
    const evergreen = await ok<{ note: { id: string } }>("create_note", {
      content: "green",
      status: "evergreen",
    });
    expect(await fails("schedule_notes", { notes: [{ id: evergreen.note.id }] })).toMatchObject({
      reason: "INVALID_TRANSITION",
    });
  });

  it("lists tags with counts", async () => {
    await ok("create_note", { content: "1", tags: ["a", "b"] });
    await ok("create_note", { content: "2", tags: ["a"], status: "ready" });
    expect(await ok("list_tags")).toEqual({
      tags: [
        { tag: "a", count: 2 },
        { tag: "b", count: 1 },
      ],
      total: 2,
    });
    expect(await ok("list_tags", { status: "ready" })).toEqual({ tags: [{ tag: "a", count: 1 }], total: 1 });
  });
});
