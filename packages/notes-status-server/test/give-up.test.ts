/**
 * A note whose publishing keeps failing is not tried forever: after `giveUpAfter` failed runs in a row
 * a post goes back to draft, off the queue (the specification's five statuses: there is no sixth,
 * failed), and a restack is dropped, both keeping attempts and lastError, which get_note shows.
 * Scheduling it again starts afresh.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { PublishError } from "../src/domain/publishers/types.js";
import { createNotesApp } from "../src/app.js";
import { manualClock } from "@mcpforge/toolkit/testing";
import { freshStore, RecordingPublisher, type TestApp } from "./helpers.js";

const HOUR = 3_600_000;
let app: TestApp;
afterEach(async () => {
  await app?.close();
});

async function appWith(giveUpAfter?: number): Promise<TestApp> {
  const time = manualClock("2026-03-02T08:00:00.000Z");
  const publisher = new RecordingPublisher();
  const scheduler = giveUpAfter === undefined ? {} : { giveUpAfter };
  const own = await createNotesApp({
    db: await freshStore(),
    clock: time.date,
    publisher,
    scheduler,
    log: () => undefined,
  });
  return { ...own, publisher, time };
}

/** One run an hour after the last: past every back-off, so each run tries every failing note. */
async function runLater() {
  app.time.advance(HOUR);
  return await app.scheduler.publishDue();
}

async function call(name: string, args: Record<string, unknown>) {
  const r = (await app.kit.callTool(name, args, { scopes: [] })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent)}`);
  return r.structuredContent as Record<string, unknown>;
}

async function scheduledNote(content = "doomed"): Promise<string> {
  const id = (await app.notes.create({ content, tags: ["news"], status: "ready" })).id;
  await app.notes.schedule([{ id, scheduledAt: new Date(app.time.now() + 30 * 60_000).toISOString() }]);
  return id;
}

describe("giving up on a failing note", () => {
  it("makes a post a draft again after 8 failed runs by default, keeping attempts and lastError", async () => {
    app = await appWith();
    const id = await scheduledNote();
    app.publisher.failing = "platform is down";
    for (let run = 1; run < 8; run++) {
      expect((await runLater()).gaveUp).toEqual([]);
      expect(await app.notes.get(id)).toMatchObject({ status: "scheduled", attempts: run });
    }
    const last = await runLater();
    expect(last.failed).toEqual([{ id, kind: "post", error: "platform is down" }]);
    expect(last.gaveUp).toEqual([id]);
    expect(await app.notes.get(id)).toMatchObject({
      status: "draft",
      scheduledAt: null,
      attempts: 8,
      lastError: "platform is down",
    });
    // No run tries it again, however long it waits.
    const tries = app.publisher.tries;
    for (let i = 0; i < 5; i++) await runLater();
    app.time.advance(30 * 24 * HOUR);
    expect(await app.scheduler.tick()).toMatchObject({ published: [], failed: [], gaveUp: [] });
    expect(app.publisher.tries).toBe(tries);
  });

  it("counts scheduler runs, not the publisher's own retries", async () => {
    app = await appWith(3);
    const id = await scheduledNote();
    app.publisher.publish = async () => {
      app.publisher.tries += 4;
      throw new PublishError("HTTP 503 after 4 attempts", 4);
    };
    expect((await runLater()).gaveUp).toEqual([]);
    expect((await runLater()).gaveUp).toEqual([]);
    expect(await app.notes.get(id)).toMatchObject({ status: "scheduled", attempts: 8 });
    expect((await runLater()).gaveUp).toEqual([id]);
    expect(await app.notes.get(id)).toMatchObject({ status: "draft", attempts: 12 });
  });

  it("lists a given-up note as a draft, keeps it off the queue, and shows its last error in get_note", async () => {
    app = await appWith(2);
    const id = await scheduledNote();
    const fine = await scheduledNote("fine");
    await app.notes.schedule([{ id: fine, scheduledAt: "2026-03-09T09:00:00Z" }]);
    app.publisher.failing = "platform is down";
    await runLater();
    await runLater();
    const drafts = await call("list_notes", { status: "draft" });
    expect(drafts).toMatchObject({ count: 1, total: 1, hasMore: false, notes: [{ id, status: "draft" }] });
    expect(await call("list_notes", { status: "scheduled" })).toMatchObject({
      total: 1,
      notes: [{ id: fine }],
    });
    expect(await call("list_tags", { status: "draft" })).toEqual({
      tags: [{ tag: "news", count: 1 }],
      total: 1,
    });
    const queue = await call("get_queue", { days: 31 });
    expect(JSON.stringify(queue)).not.toContain(id);
    expect(JSON.stringify(queue)).toContain(fine);
    expect(await call("get_note", { id })).toMatchObject({
      note: { status: "draft", attempts: 2, lastError: "platform is down" },
    });
    // The specification's five statuses, and no sixth.
    const r = (await app.kit.callTool("list_notes", { status: "failed" }, { scopes: [] })) as CallToolResult;
    expect(r.isError).toBe(true);
  });

  it("retries a given-up note scheduled again, with attempts and the count of failed runs from 0", async () => {
    app = await appWith(2);
    const id = await scheduledNote();
    app.publisher.failing = "platform is down";
    await runLater();
    await runLater();
    expect((await app.notes.get(id)).status).toBe("draft");
    const at = new Date(app.time.now() + HOUR).toISOString();
    const again = await call("schedule_notes", { notes: [{ id, scheduledAt: at }] });
    expect(again).toMatchObject({ notes: [{ id, status: "scheduled" }] });
    expect(await app.notes.get(id)).toMatchObject({ attempts: 0, lastError: null, lastAttemptAt: null });
    // A fresh allowance: one failure is not the end, since the earlier two no longer count.
    app.time.set(at);
    expect((await app.scheduler.publishDue()).gaveUp).toEqual([]);
    expect(await app.notes.get(id)).toMatchObject({ status: "scheduled", attempts: 1 });
    app.publisher.failing = undefined;
    expect((await runLater()).published).toEqual([id]);
    expect(await app.notes.get(id)).toMatchObject({ status: "published", attempts: 2, lastError: null });
  });

  it("keeps the last error of a given-up draft through edits and status changes, until it is scheduled", async () => {
    app = await appWith(1);
    const a = await scheduledNote("a");
    app.publisher.failing = "platform is down";
    expect((await runLater()).gaveUp).toEqual([a]);
    const failure = { attempts: 1, lastError: "platform is down" };
    expect(await app.notes.update(a, { content: "a, reworded" })).toMatchObject({
      status: "draft",
      ...failure,
    });
    expect(await app.notes.update(a, { status: "ready" })).toMatchObject({ status: "ready", ...failure });
    expect(await call("get_note", { id: a })).toMatchObject({ note: { status: "ready", ...failure } });
  });

  it("drops a restack after the limit, counting only the restack's own failed runs", async () => {
    app = await appWith(3);
    const id = (await app.notes.create({ content: "restack me", status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T08:30:00Z", autoRestackAfterHours: 1 }]);
    app.publisher.failing = "platform is down";
    await runLater();
    await runLater();
    app.publisher.failing = undefined;
    expect((await runLater()).published).toEqual([id]);
    // The post's two failed runs ended with its success: the restack gets three of its own.
    app.publisher.failing = "platform is down";
    expect((await runLater()).gaveUp).toEqual([]);
    expect((await runLater()).gaveUp).toEqual([]);
    expect(await app.notes.get(id)).toMatchObject({ status: "published", restackedAt: null });
    expect((await app.notes.get(id)).restackDueAt).not.toBeNull();
    const last = await runLater();
    expect(last.failed).toEqual([{ id, kind: "restack", error: "platform is down" }]);
    expect(last.gaveUp).toEqual([id]);
    expect(await app.notes.get(id)).toMatchObject({
      status: "published",
      restackDueAt: null,
      restackedAt: null,
      attempts: 6,
      lastError: "platform is down",
    });
    const tries = app.publisher.tries;
    app.publisher.failing = undefined;
    await runLater();
    expect(app.publisher.tries).toBe(tries);
  });

  it("leaves a note the owner unscheduled while it was out as the owner left it", async () => {
    app = await appWith(1);
    const id = await scheduledNote();
    app.publisher.publish = async () => {
      await app.notes.unschedule(id, "draft");
      throw new Error("platform is down");
    };
    const report = await runLater();
    expect(report.failed).toEqual([{ id, kind: "post", error: "platform is down" }]);
    expect(report.gaveUp).toEqual([]);
    expect(await app.notes.get(id)).toMatchObject({ status: "draft", lastError: "platform is down" });
  });

  it("refuses a limit that is not a whole number of runs, 1 or more", async () => {
    for (const bad of [0, -1, 2.5, Number.NaN]) await expect(appWith(bad)).rejects.toThrow(/giveUpAfter/);
  });
});
