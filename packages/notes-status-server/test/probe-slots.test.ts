/**
 * The attacker's tests of the weekly plan: slots on DST days, odd offsets, zones that changed, far-future
 * dates, plans edited under scheduled notes, and "the next free slot" never past, never taken, never
 * given twice (in one batch, across batches, across concurrent calls). The property tests check the
 * slots against an oracle built on Intl.DateTimeFormat alone, not on src/domain/time.ts.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { normaliseSlots, slotsBetween } from "../src/domain/slots.js";
import { WEEKDAYS, type Weekday } from "../src/domain/time.js";
import type { WeeklySlots } from "../src/domain/types.js";
import { type TestApp, testApp } from "./helpers.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** An independent reading of the wall clock: formatToParts, uncached, to the minute. */
const fmts = new Map<string, Intl.DateTimeFormat>();
function wall(ms: number, zone: string) {
  let f = fmts.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
    });
    fmts.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(ms)))
    if (part.type !== "literal") p[part.type] = Number(part.value);
  return { y: p["year"]!, mo: p["month"]!, d: p["day"]!, h: p["hour"]!, mi: p["minute"]! };
}
/** Wall-clock minutes since the epoch, as if the wall clock were UTC. */
function wallMinutes(ms: number, zone: string): number {
  const w = wall(ms, zone);
  return Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi) / MIN;
}
const offsetMin = (ms: number, zone: string) => wallMinutes(ms, zone) - Math.floor(ms / MIN);

/**
 * The oracle: where a plan time P on date D should land. The first instant whose wall clock reads D P
 * (candidates: the naive time less each offset seen within two days), or, when no instant does (a
 * skipped time), null.
 */
function resolve(date: { y: number; mo: number; d: number }, hour: number, minute: number, zone: string) {
  const naive = Date.UTC(date.y, date.mo - 1, date.d, hour, minute);
  const offsets = new Set<number>();
  for (let t = naive - 2 * DAY; t <= naive + 2 * DAY; t += HOUR) offsets.add(offsetMin(t, zone));
  const target = naive / MIN;
  const hits = [...offsets]
    .map((o) => naive - o * MIN)
    .filter((t) => wallMinutes(t, zone) === target)
    .sort((a, b) => a - b);
  return hits[0] ?? null;
}

const weekdayOfDate = (y: number, mo: number, d: number): Weekday =>
  WEEKDAYS[new Date(Date.UTC(y, mo - 1, d)).getUTCDay()]!;

/**
 * Checks every slot slotsBetween gives in (from, to] against the oracle: after `from`, at most `to`,
 * each plan time of each date present once (two landing on one instant count once), at its first
 * occurrence, or moved forward by the gap when the clocks skip it.
 */
function checkSlots(plan: WeeklySlots, zone: string, from: number, to: number): void {
  const got = slotsBetween(plan, zone, from, to);
  const ats = got.map((s) => s.at);
  expect(new Set(ats).size, "no instant twice").toBe(ats.length);
  for (const s of got) {
    expect(s.at).toBeGreaterThan(from);
    expect(s.at).toBeLessThanOrEqual(to);
  }
  // Every (date, plan time) from a day before to a day after, resolved by the oracle.
  const expected = new Map<number, string>();
  let cursor = Date.UTC(wall(from, zone).y, wall(from, zone).mo - 1, wall(from, zone).d) - DAY;
  const end = Date.UTC(wall(to, zone).y, wall(to, zone).mo - 1, wall(to, zone).d) + DAY;
  for (; cursor <= end; cursor += DAY) {
    const c = new Date(cursor);
    const date = { y: c.getUTCFullYear(), mo: c.getUTCMonth() + 1, d: c.getUTCDate() };
    const weekday = weekdayOfDate(date.y, date.mo, date.d);
    for (const planned of plan[WEEKDAYS.indexOf(weekday)] ?? []) {
      const hour = Number(planned.slice(0, 2));
      const minute = Number(planned.slice(3));
      let at = resolve(date, hour, minute, zone);
      if (at === null) {
        // Skipped: moved forward by the gap, i.e. read with the offset in force before the change.
        const naive = Date.UTC(date.y, date.mo - 1, date.d, hour, minute);
        const before = offsetMin(naive - DAY, zone);
        at = naive - before * MIN;
        const gap = wallMinutes(at, zone) - naive / MIN;
        expect(gap, `${zone} ${planned} on ${JSON.stringify(date)} moves forward`).toBeGreaterThan(0);
        expect(offsetMin(at - gap * MIN - 1, zone)).toBe(before);
      }
      if (at > from && at <= to && !expected.has(at)) expected.set(at, planned);
    }
  }
  expect(
    got.map((s) => [s.at, s.planned]),
    `${zone} from ${new Date(from).toISOString()}`,
  ).toEqual([...expected.entries()].sort((a, b) => a[0] - b[0]));
}

/** The offset changes of a zone in [from, to), found hour by hour. */
function transitions(zone: string, from: number, to: number): number[] {
  const out: number[] = [];
  let prev = offsetMin(from, zone);
  for (let t = from + 6 * HOUR; t < to; t += 6 * HOUR) {
    const o = offsetMin(t, zone);
    if (o !== prev) {
      let lo = t - 6 * HOUR;
      let hi = t;
      while (hi - lo > MIN) {
        const mid = lo + Math.floor((hi - lo) / 2 / MIN) * MIN;
        if (offsetMin(mid, zone) === prev) lo = mid;
        else hi = mid;
      }
      out.push(hi);
      prev = o;
    }
  }
  return out;
}

const ZONES = Intl.supportedValuesOf("timeZone");
const planTime = fc
  .oneof(
    // Near the usual change hours, and anywhere.
    fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom(0, 15, 30, 45, 59)),
    fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })),
  )
  .map(([h, m]) => `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`);
const planArb = fc
  .dictionary(fc.constantFrom(...WEEKDAYS), fc.array(planTime, { minLength: 1, maxLength: 4 }), {
    minKeys: 1,
    maxKeys: 7,
  })
  .map((byName) => normaliseSlots(byName));

describe("slots against an independent oracle", () => {
  it("named cases: DST days, 30/45-minute zones, a zone that skipped a day, far future", () => {
    const at = Date.parse;
    const every = normaliseSlots(
      Object.fromEntries(
        WEEKDAYS.map((d) => [d, ["00:00", "00:30", "01:30", "02:00", "02:30", "03:00", "09:00"]]),
      ),
    );
    for (const [zone, from] of [
      ["America/New_York", "2026-03-07T00:00:00Z"],
      ["America/New_York", "2026-10-31T00:00:00Z"],
      ["Europe/Berlin", "2026-03-28T00:00:00Z"],
      ["Australia/Lord_Howe", "2026-04-04T00:00:00Z"], // 30-minute DST, back
      ["Australia/Lord_Howe", "2026-10-03T00:00:00Z"], // and forward
      ["Asia/Kathmandu", "2026-01-01T00:00:00Z"], // +05:45
      ["Australia/Eucla", "2026-01-01T00:00:00Z"], // +08:45
      ["Asia/Kolkata", "2026-01-01T00:00:00Z"],
      ["America/St_Johns", "2026-03-07T00:00:00Z"], // -03:30 with DST
      ["America/Santiago", "2026-04-03T00:00:00Z"], // changes at midnight
      ["America/Havana", "2026-03-07T00:00:00Z"], // 00:00 -> 01:00
      ["Pacific/Apia", "2011-12-28T00:00:00Z"], // skipped 2011-12-30 entirely
      ["Europe/Moscow", "2014-10-24T00:00:00Z"], // left +04 for +03 for good
      ["America/New_York", "2299-03-01T00:00:00Z"],
      ["Europe/Dublin", "2026-03-28T00:00:00Z"], // negative DST in the tz data
    ] as const) {
      checkSlots(every, zone, at(from), at(from) + 5 * DAY);
    }
  });

  it("property: random zones, plans and starts around a zone's changes", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        planArb,
        fc.integer({ min: 1975, max: 2045 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: -3 * 24 * 60, max: 3 * 24 * 60 }),
        (zone, plan, year, where, jitterMin) => {
          const yearStart = Date.UTC(year, 0, 1);
          const changes = transitions(zone, yearStart, Date.UTC(year + 1, 0, 1));
          const base =
            changes.length > 0
              ? changes[Math.floor(where * changes.length) % changes.length]!
              : yearStart + Math.floor(where * 365) * DAY;
          const from = base + jitterMin * MIN;
          checkSlots(plan, zone, from, from + 4 * DAY);
        },
      ),
      { numRuns: 150 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The next free slot through the service: never past, never taken, never twice.

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function readyNotes(a: TestApp, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await a.notes.create({ content: `n${i}`, status: "ready" })).id);
  return ids;
}

async function scheduledTimes(a: TestApp): Promise<string[]> {
  return (await a.queue.queue({ days: 31, includeFreeSlots: false, limit: 500 })).entries.map((e) => e.at);
}

describe("the next free slot", () => {
  it("does not hand an explicit time of the same batch to a note without one", async () => {
    app = await testApp("2026-03-02T08:00:00.000Z");
    await app.queue.setPlan({ timeZone: "UTC", slots: { monday: ["09:00"], tuesday: ["09:00"] } });
    const [a, b] = await readyNotes(app, 2);
    // a takes the 09:00 slot by its explicit time; b asks for the next free one, which is no longer it.
    const out = await app.notes.schedule([{ id: a!, scheduledAt: "2026-03-02T09:00:00Z" }, { id: b! }]);
    expect(out.map((n) => n.scheduledAt)).toEqual(["2026-03-02T09:00:00.000Z", "2026-03-03T09:00:00.000Z"]);
    // And in the other order.
    const [c, d] = await readyNotes(app, 2);
    const again = await app.notes.schedule([{ id: c! }, { id: d!, scheduledAt: "2026-03-09T09:00:00.000Z" }]);
    expect(again.map((n) => n.scheduledAt)).toEqual(["2026-03-10T09:00:00.000Z", "2026-03-09T09:00:00.000Z"]);
  });

  it("gives concurrent schedule_notes calls different slots", async () => {
    app = await testApp("2026-03-07T12:00:00.000Z");
    await app.queue.setPlan({
      timeZone: "America/New_York",
      slots: { sunday: ["01:30", "02:30", "03:30", "09:00"] },
    });
    const ids = await readyNotes(app, 8);
    const a = app;
    const results = await Promise.all(ids.map((id) => a.notes.schedule([{ id }])));
    const times = results.map((r) => r[0]!.scheduledAt!);
    expect(new Set(times).size).toBe(8);
    expect((await scheduledTimes(app)).length).toBe(8);
  });

  it("keeps scheduled notes at their instants when the plan changes, and does not reuse their instants", async () => {
    app = await testApp("2026-03-02T08:00:00.000Z");
    await app.queue.setPlan({ timeZone: "UTC", slots: { monday: ["14:00"] } });
    const [a, b] = await readyNotes(app, 2);
    await app.notes.schedule([{ id: a! }]); // 2026-03-02 14:00Z
    // The same wall time, now in New York (09:00 EST = 14:00Z): the slot is taken by a.
    await app.queue.setPlan({ timeZone: "America/New_York", slots: { monday: ["09:00"] } });
    expect((await app.notes.get(a!)).scheduledAt).toBe("2026-03-02T14:00:00.000Z");
    const [next] = await app.queue.nextFreeSlots(1);
    expect(next!.at).toBe("2026-03-09T13:00:00.000Z"); // 09:00 EDT after the change
    await app.notes.schedule([{ id: b! }]);
    expect((await app.notes.get(b!)).scheduledAt).toBe("2026-03-09T13:00:00.000Z");
  });

  it("property: schedules in batches and concurrently, some at explicit slot times, every note in the future, on a plan slot, none shared", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ZONES),
        planArb,
        fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2036, 0, 1) }),
        fc.array(fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { maxLength: 16 }),
        fc.boolean(),
        async (zone, plan, nowMs, batches, explicitSlots, concurrent) => {
          const now = Math.floor(nowMs / MIN) * MIN + 17_000; // seconds that no slot has
          const own = await testApp(new Date(now).toISOString());
          try {
            const byName = Object.fromEntries(WEEKDAYS.map((d, i) => [d, plan[i] ?? []])) as Record<
              Weekday,
              string[]
            >;
            await own.queue.setPlan({ timeZone: zone, slots: byName });
            const upcoming = slotsBetween(plan, zone, now, now + 60 * DAY);
            // Items of the first call: an explicit plan slot (each used once) or the next free one; later
            // calls take the next free ones (an explicit time may share an instant on purpose, so only
            // the first call names any).
            const picks = [...explicitSlots];
            const groups: Array<Array<{ id: string; scheduledAt?: string }>> = [];
            for (const [b, batch] of batches.entries()) {
              const ids = await readyNotes(own, batch.length);
              groups.push(
                ids.map((id, i) => {
                  const k = b === 0 && batch[i] ? picks.shift() : undefined;
                  return k === undefined
                    ? { id }
                    : { id, scheduledAt: new Date(upcoming[k]!.at).toISOString() };
                }),
              );
            }
            const run = (g: Array<{ id: string; scheduledAt?: string }>) => own.notes.schedule(g);
            const first = await run(groups[0]!);
            const rest = groups.slice(1);
            const later = concurrent
              ? (await Promise.all(rest.map(run))).flat()
              : await rest.reduce<Promise<Awaited<ReturnType<typeof run>>>>(
                  async (acc, g) => [...(await acc), ...(await run(g))],
                  Promise.resolve([]),
                );
            const times = [...first, ...later].map((n) => Date.parse(n.scheduledAt!));
            expect(new Set(times).size, "no two notes share a slot").toBe(times.length);
            const slots = new Set(slotsBetween(plan, zone, now, Math.max(...times)).map((s) => s.at));
            for (const t of times) {
              expect(t).toBeGreaterThan(now);
              expect(slots.has(t)).toBe(true);
            }
            if (!groups.flat().some((i) => i.scheduledAt)) expect(slots.size).toBe(times.length);
          } finally {
            await own.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("bad times get a clear error and change nothing", () => {
  it("refuses a calendar date that does not exist instead of rolling it into the next month", async () => {
    app = await testApp("2026-01-01T08:00:00.000Z");
    const [a, b] = await readyNotes(app, 2);
    // (and an hour or minute no clock shows: Date.parse reads 24:00 as the next day's midnight)
    for (const bad of [
      "2026-02-30T09:00:00Z",
      "2026-02-29T09:00:00Z",
      "2026-04-31T09:00:00+02:00",
      "2026-03-01T24:00:00Z",
      "2026-03-01T09:60:00Z",
    ]) {
      await expect(
        app.notes.schedule([
          { id: a!, scheduledAt: "2026-03-01T09:00:00Z" },
          { id: b!, scheduledAt: bad },
        ]),
      ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringMatching(/scheduledAt/) });
    }
    expect((await app.notes.get(a!)).status).toBe("ready");
    await expect(
      app.queue.queue({ fromMs: undefined, days: 1, includeFreeSlots: false, limit: 1 }),
    ).resolves.toBeDefined();
    // A real leap day is fine.
    await app.notes.schedule([{ id: a!, scheduledAt: "2028-02-29T09:00:00Z" }]);
    expect((await app.notes.get(a!)).scheduledAt).toBe("2028-02-29T09:00:00.000Z");
  });

  it("a batch with one unknown id or one past time schedules nothing", async () => {
    app = await testApp("2026-03-02T08:00:00.000Z");
    await app.queue.setPlan({ timeZone: "UTC", slots: { monday: ["09:00"], tuesday: ["09:00"] } });
    const [a, b] = await readyNotes(app, 2);
    await expect(app.notes.schedule([{ id: a! }, { id: "nope" }])).rejects.toMatchObject({
      reason: "NOT_FOUND",
    });
    await expect(
      app.notes.schedule([{ id: a! }, { id: b!, scheduledAt: "2026-03-02T07:00:00Z" }]),
    ).rejects.toMatchObject({ reason: "PAST_TIME" });
    await expect(
      app.notes.schedule([{ id: a! }, { id: b!, autoRestackAfterHours: 0 }]),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    expect((await app.notes.get(a!)).status).toBe("ready");
    expect((await app.notes.get(b!)).status).toBe("ready");
    expect(await scheduledTimes(app)).toEqual([]);
  });
});

describe("get_next_available_slots with an `after` in the past", () => {
  it("gives no slot that has passed: a free slot must be one a note can still be scheduled into", async () => {
    app = await testApp("2026-03-04T12:00:00.000Z");
    await app.queue.setPlan({ timeZone: "UTC", slots: { monday: ["09:00"], thursday: ["09:00"] } });
    const r = (await app.kit.callTool(
      "get_next_available_slots",
      { count: 2, after: "2026-03-01T00:00:00Z" },
      {
        scopes: [],
      },
    )) as { structuredContent: { slots: Array<{ at: string }> } };
    expect(r.structuredContent.slots.map((s) => s.at)).toEqual([
      "2026-03-05T09:00:00.000Z",
      "2026-03-09T09:00:00.000Z",
    ]);
    // A future `after` is kept.
    expect((await app.queue.nextFreeSlots(1, Date.parse("2026-03-06T00:00:00Z")))[0]!.at).toBe(
      "2026-03-09T09:00:00.000Z",
    );
  });
});
