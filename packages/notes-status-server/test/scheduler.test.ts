import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OutboxPublisher } from "../src/domain/publishers/outbox.js";
import { retryDelayMs } from "../src/domain/scheduler.js";
import { createNotesApp } from "../src/app.js";
import { manualClock } from "@mcpforge/toolkit/testing";
import { freshStore, RecordingPublisher, type TestApp, tempDir, testApp } from "./helpers.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let app: TestApp;
afterEach(async () => {
  await app?.close();
});

describe("publishing", () => {
  it("publishes what is due, in time order, and nothing early", async () => {
    app = await testApp("2026-03-02T08:00:00.000Z");
    const a = (await app.notes.create({ content: "first", status: "ready" })).id;
    const b = (await app.notes.create({ content: "second", status: "ready" })).id;
    await app.notes.schedule([
      { id: b, scheduledAt: "2026-03-02T10:00:00Z" },
      { id: a, scheduledAt: "2026-03-02T09:00:00Z" },
    ]);
    expect((await app.scheduler.publishDue()).published).toEqual([]);
    app.time.set("2026-03-02T10:00:00.000Z");
    const report = await app.scheduler.publishDue();
    expect(report.published).toEqual([a, b]);
    expect(app.publisher.events.map((e) => [e.kind, e.note.id, e.at])).toEqual([
      ["post", a, "2026-03-02T10:00:00.000Z"],
      ["post", b, "2026-03-02T10:00:00.000Z"],
    ]);
    const note = await app.notes.get(a);
    expect(note).toMatchObject({
      status: "published",
      publishedAt: "2026-03-02T10:00:00.000Z",
      attempts: 1,
      lastError: null,
    });
    expect((await app.scheduler.publishDue()).published).toEqual([]);
  });

  it("keeps a failed note scheduled with attempts and lastError, then publishes it once the publisher recovers", async () => {
    app = await testApp();
    const id = (await app.notes.create({ content: "flaky", status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
    app.time.set("2026-03-02T09:00:00Z");
    app.publisher.failing = "platform is down";
    const report = await app.scheduler.publishDue();
    expect(report.failed).toEqual([{ id, kind: "post", error: "platform is down" }]);
    expect(await app.notes.get(id)).toMatchObject({
      status: "scheduled",
      attempts: 1,
      lastError: "platform is down",
      lastAttemptAt: "2026-03-02T09:00:00.000Z",
    });
    app.publisher.failing = undefined;
    app.time.advance(60_000);
    expect((await app.scheduler.publishDue()).published).toEqual([id]);
    expect(await app.notes.get(id)).toMatchObject({ status: "published", attempts: 2, lastError: null });
  });

  it("backs off a failing note: 1, 2, 4 ... minutes after each attempt, never more than an hour", async () => {
    // Past the default limit of 8 failed runs, to see the back-off reach its cap.
    const time = manualClock("2026-03-02T08:00:00.000Z");
    const publisher = new RecordingPublisher();
    const own = { db: await freshStore(), clock: time.date, publisher, scheduler: { giveUpAfter: 20 } };
    app = { ...(await createNotesApp(own)), publisher, time };
    const id = (await app.notes.create({ content: "down", status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
    app.time.set("2026-03-02T09:00:00Z");
    app.publisher.failing = "platform is down";
    const tries = async () => {
      const before = app.publisher.tries;
      await app.scheduler.publishDue();
      return app.publisher.tries - before;
    };
    expect(await tries()).toBe(1);
    // Every run in between skips the note; the first run at its retry time tries it.
    for (const wait of [1, 2, 4, 8, 16, 32, 60, 60]) {
      app.time.advance(wait * 60_000 - 1);
      expect(await tries()).toBe(0);
      app.time.advance(1);
      expect(await tries()).toBe(1);
    }
    expect(retryDelayMs(9)).toBe(HOUR);
    expect(retryDelayMs(1_000_000)).toBe(HOUR);
    expect(await app.notes.get(id)).toMatchObject({
      status: "scheduled",
      attempts: 9,
      lastError: "platform is down",
    });
    // Recovered: published by the first run after the back-off.
    app.publisher.failing = undefined;
    app.time.advance(HOUR);
    expect((await app.scheduler.publishDue()).published).toEqual([id]);
  });

  it("ends a failing note's back-off when the owner reschedules it", async () => {
    app = await testApp("2026-03-02T08:00:00.000Z");
    const id = (await app.notes.create({ content: "down", status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
    app.time.set("2026-03-02T09:00:00.000Z");
    app.publisher.failing = "platform is down";
    // Four failed runs: the next try would wait 8 minutes
    for (const wait of [0, 1, 2, 4]) {
      app.time.advance(wait * 60_000);
      expect((await app.scheduler.publishDue()).failed.map((f) => f.id)).toEqual([id]);
    }
    app.publisher.failing = undefined;
    app.time.advance(60_000);
    expect((await app.scheduler.publishDue()).published).toEqual([]); // still backing off
    // The owner puts it back on the queue for now: it goes out at its new time, not after the back-off
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:10:00Z" }]);
    app.time.set("2026-03-02T09:10:00.000Z");
    expect((await app.scheduler.publishDue()).published).toEqual([id]);
    expect(await app.notes.get(id)).toMatchObject({ status: "published", attempts: 1, lastError: null });
  });

  it("restacks a note N hours after publishing, exactly once", async () => {
    app = await testApp();
    const id = (await app.notes.create({ content: "restack me", status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z", autoRestackAfterHours: 6 }]);
    app.time.set("2026-03-02T09:00:30Z");
    await app.scheduler.publishDue();
    expect((await app.notes.get(id)).restackDueAt).toBe("2026-03-02T15:00:30.000Z");
    app.time.set("2026-03-02T15:00:29Z");
    expect((await app.scheduler.publishDue()).restacked).toEqual([]);
    app.time.set("2026-03-02T15:00:30Z");
    expect((await app.scheduler.publishDue()).restacked).toEqual([id]);
    app.time.advance(DAY);
    expect((await app.scheduler.publishDue()).restacked).toEqual([]);
    expect(app.publisher.events.map((e) => e.kind)).toEqual(["post", "restack"]);
    expect(await app.notes.get(id)).toMatchObject({
      status: "published",
      restackedAt: "2026-03-02T15:00:30.000Z",
    });
  });

  describe("a published note made evergreen keeps its pending restack", () => {
    async function publishedWithRestack() {
      app = await testApp();
      const id = (await app.notes.create({ content: "went well", status: "ready" })).id;
      await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z", autoRestackAfterHours: 6 }]);
      app.time.set("2026-03-02T09:00:00Z");
      expect((await app.scheduler.publishDue()).published).toEqual([id]);
      return id;
    }

    it("the restack goes out once, at its time, with what was published", async () => {
      const id = await publishedWithRestack();
      app.time.set("2026-03-02T10:00:00Z");
      const evergreen = await app.notes.update(id, { status: "evergreen" });
      expect(evergreen).toMatchObject({ status: "evergreen", restackDueAt: "2026-03-02T15:00:00.000Z" });
      app.time.set("2026-03-02T15:00:00Z");
      expect((await app.scheduler.publishDue()).restacked).toEqual([id]);
      app.time.advance(DAY);
      await app.scheduler.publishDue();
      expect(app.publisher.events.map((e) => [e.kind, e.note.id, e.note.content])).toEqual([
        ["post", id, "went well"],
        ["restack", id, "went well"],
      ]);
      expect(await app.notes.get(id)).toMatchObject({
        status: "evergreen",
        restackedAt: "2026-03-02T15:00:00.000Z",
      });
    });

    it("cannot go back to draft or ready (to be posted a second time), and its restack still goes out once", async () => {
      const id = await publishedWithRestack();
      await app.notes.update(id, { status: "evergreen" });
      for (const status of ["ready", "draft"] as const)
        await expect(app.notes.update(id, { status })).rejects.toThrow(
          expect.objectContaining({
            reason: "INVALID_TRANSITION",
            message: expect.stringContaining(`cannot go from evergreen to ${status}: it was published`),
          }),
        );
      await expect(app.notes.schedule([{ id, scheduledAt: "2026-03-03T09:00:00Z" }])).rejects.toThrow(
        expect.objectContaining({ reason: "INVALID_TRANSITION" }),
      );
      expect(await app.notes.get(id)).toMatchObject({ status: "evergreen", scheduledAt: null });
      app.time.set("2026-03-02T15:00:00Z");
      expect((await app.scheduler.publishDue()).restacked).toEqual([id]);
      app.time.set("2026-03-05T09:00:00Z");
      await app.scheduler.publishDue();
      expect(app.publisher.events.map((e) => [e.kind, e.note.id])).toEqual([
        ["post", id],
        ["restack", id],
      ]);
    });

    it("an evergreen note never published still goes back to ready and is posted once", async () => {
      app = await testApp();
      const id = (await app.notes.create({ content: "source", status: "evergreen" })).id;
      expect(await app.notes.update(id, { status: "ready" })).toMatchObject({ status: "ready" });
      await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
      app.time.set("2026-03-02T09:00:00Z");
      expect((await app.scheduler.publishDue()).published).toEqual([id]);
    });

    it("its content stays as published until the restack is out", async () => {
      const id = await publishedWithRestack();
      await app.notes.update(id, { status: "evergreen" });
      await expect(app.notes.update(id, { content: "rewritten" })).rejects.toThrow(
        expect.objectContaining({ reason: "NOT_EDITABLE", message: expect.stringContaining("restack") }),
      );
      expect((await app.notes.get(id)).content).toBe("went well");
      app.time.set("2026-03-02T15:00:00Z");
      await app.scheduler.publishDue();
      expect((await app.notes.update(id, { content: "rewritten" })).content).toBe("rewritten");
    });
  });

  it("publishes no restack for a note without autoRestackAfterHours", async () => {
    app = await testApp();
    const id = (await app.notes.create({ content: "once", status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
    app.time.set("2026-03-02T09:00:00Z");
    await app.scheduler.publishDue();
    app.time.advance(30 * DAY);
    await app.scheduler.publishDue();
    expect(app.publisher.events.map((e) => e.kind)).toEqual(["post"]);
    expect((await app.notes.get(id)).restackDueAt).toBeNull();
  });

  it("writes the outbox as JSON lines", async () => {
    const dir = tempDir("notes-outbox");
    try {
      const time = manualClock("2026-03-02T08:00:00Z");
      const path = join(dir.path, "sub", "outbox.jsonl");
      const own = await createNotesApp({
        db: await freshStore(),
        clock: time.date,
        publisher: new OutboxPublisher(path),
      });
      const id = (await own.notes.create({ content: "hello 🌍\nline two", tags: ["News"], status: "ready" }))
        .id;
      await own.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z", autoRestackAfterHours: 1 }]);
      time.set("2026-03-02T10:30:00Z");
      await own.scheduler.publishDue();
      time.set("2026-03-02T11:30:00Z");
      await own.scheduler.publishDue();
      const lines = readFileSync(path, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatchObject({
        event: "note.published",
        deliveryId: `${id}:post`,
        note: { id, content: "hello 🌍\nline two", tags: ["news"], publishedAt: "2026-03-02T10:30:00.000Z" },
      });
      expect(lines[1]).toMatchObject({ event: "note.restacked", deliveryId: `${id}:restack` });
      await own.close();
    } finally {
      dir.cleanup();
    }
  });

  it("never publishes one note twice when two processes share the database", async () => {
    const dir = tempDir("notes-claim");
    try {
      const dbPath = await freshStore(dir.path);
      const time = manualClock("2026-03-02T08:00:00Z");
      const slow = new RecordingPublisher();
      const pub = slow.publish.bind(slow);
      slow.publish = async (e) => {
        await new Promise((r) => setTimeout(r, 50));
        await pub(e);
      };
      const one = await createNotesApp({ db: dbPath, clock: time.date, publisher: slow });
      const other = new RecordingPublisher();
      const two = await createNotesApp({ db: dbPath, clock: time.date, publisher: other });
      const ids: string[] = [];
      for (const i of [1, 2, 3]) ids.push((await one.notes.create({ content: `n${i}`, status: "ready" })).id);
      await one.notes.schedule(ids.map((id) => ({ id, scheduledAt: "2026-03-02T09:00:00Z" })));
      time.set("2026-03-02T09:00:00Z");
      const [r1, r2] = await Promise.all([one.scheduler.publishDue(), two.scheduler.publishDue()]);
      expect([...r1.published, ...r2.published].sort()).toEqual([...ids].sort());
      expect(slow.events.length + other.events.length).toBe(3);
      await one.close();
      await two.close();
    } finally {
      dir.cleanup();
    }
  });
});

describe("evergreen recycling", () => {
  async function setup() {
    app = await testApp("2026-03-02T00:00:00.000Z"); // a Monday
    await app.queue.setPlan({
      timeZone: "UTC",
      slots: { monday: ["09:00", "17:00"], tuesday: ["09:00"], wednesday: ["09:00"] },
      evergreenHorizonHours: 48,
      evergreenMinGapDays: 7,
    });
  }

  it("fills free slots within the horizon, least recently used source first, linked to its source", async () => {
    await setup();
    const old = await app.notes.create({
      content: "old favourite",
      tags: ["Classic"],
      status: "evergreen",
      autoRestackAfterHours: 3,
    });
    app.time.advance(1000);
    const newer = await app.notes.create({ content: "newer favourite", status: "evergreen" });
    app.time.advance(1000);
    const manual = (await app.notes.create({ content: "hand-scheduled", status: "ready" })).id;
    await app.notes.schedule([{ id: manual, scheduledAt: "2026-03-02T17:00:00Z" }]);

    const copies = await app.scheduler.recycleEvergreen();
    // Free slots within 48 h: Mon 09:00 and Tue 09:00 (Mon 17:00 is taken, Wed 09:00 is past the horizon).
    expect(copies.map((c) => [c.scheduledAt, c.sourceNoteId])).toEqual([
      ["2026-03-02T09:00:00.000Z", old.id],
      ["2026-03-03T09:00:00.000Z", newer.id],
    ]);
    const copy = await app.notes.get(copies[0]!.id);
    expect(copy).toMatchObject({
      status: "scheduled",
      content: "old favourite",
      tags: ["classic"],
      autoRestackAfterHours: 3,
    });
    expect(await app.notes.get(old.id)).toMatchObject({
      status: "evergreen",
      lastRecycledAt: "2026-03-02T09:00:00.000Z",
    });
    // Running again changes nothing: the slots are taken now.
    expect(await app.scheduler.recycleEvergreen()).toEqual([]);
  });

  it("never uses one source twice within the minimum gap, and reuses it after", async () => {
    await setup();
    const only = await app.notes.create({ content: "the one", status: "evergreen" });
    const first = await app.scheduler.recycleEvergreen();
    expect(first.map((c) => c.scheduledAt)).toEqual(["2026-03-02T09:00:00.000Z"]);
    // A day later Tuesday and Wednesday are in the horizon but within 7 days of Monday's copy.
    app.time.set("2026-03-03T00:00:00Z");
    expect(await app.scheduler.recycleEvergreen()).toEqual([]);
    // The copy goes out; a week on, the source may be used again.
    app.time.set("2026-03-09T00:00:00Z");
    await app.scheduler.publishDue();
    const later = await app.scheduler.recycleEvergreen();
    expect(later.map((c) => [c.scheduledAt, c.sourceNoteId])).toEqual([
      ["2026-03-09T09:00:00.000Z", only.id],
    ]);
    expect((await app.notes.get(first[0]!.id)).status).toBe("published");
  });

  it("rotates sources so each is used before any is used again", async () => {
    await setup();
    await app.queue.setPlan({ evergreenMinGapDays: 0, evergreenHorizonHours: 72 });
    const a = (await app.notes.create({ content: "a", status: "evergreen" })).id;
    app.time.advance(1);
    const b = (await app.notes.create({ content: "b", status: "evergreen" })).id;
    const copies = await app.scheduler.recycleEvergreen();
    expect(copies.map((c) => c.sourceNoteId)).toEqual([a, b, a, b]);
  });

  it("does nothing with the horizon at 0, without evergreen notes or without slots", async () => {
    await setup();
    expect(await app.scheduler.recycleEvergreen()).toEqual([]);
    await app.notes.create({ content: "x", status: "evergreen" });
    await app.queue.setPlan({ evergreenHorizonHours: 0 });
    expect(await app.scheduler.recycleEvergreen()).toEqual([]);
    await app.queue.setPlan({ evergreenHorizonHours: 48, slots: {} });
    expect(await app.scheduler.recycleEvergreen()).toEqual([]);
  });

  it("recycles and publishes in one tick", async () => {
    await setup();
    await app.notes.create({ content: "green", status: "evergreen" });
    app.time.set("2026-03-02T09:00:00Z");
    // The 09:00 slot is not after now, so the copy goes to Monday 17:00 and is published by a later tick.
    const report = await app.scheduler.tick();
    expect(report.recycled).toHaveLength(1);
    expect(report.published).toEqual([]);
    app.time.set("2026-03-02T17:00:00Z");
    const later = await app.scheduler.tick();
    expect(later.published).toEqual(report.recycled);
  });
});
