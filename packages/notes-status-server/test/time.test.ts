import { describe, expect, it } from "vitest";
import { NotesError } from "../src/domain/errors.js";
import { normaliseSlots, slotsBetween } from "../src/domain/slots.js";
import { canonicalTimeZone, formatLocal, fromLocal, offsetAt } from "../src/domain/time.js";
import { testApp } from "./helpers.js";

const at = (s: string) => Date.parse(s);
const utc = (ms: number) => new Date(ms).toISOString();

describe("zone math", () => {
  it("reads offsets on both sides of a change", async () => {
    expect(offsetAt(at("2026-03-07T12:00:00Z"), "America/New_York")).toBe(-5 * 3_600_000);
    expect(offsetAt(at("2026-03-09T12:00:00Z"), "America/New_York")).toBe(-4 * 3_600_000);
    expect(offsetAt(at("2026-07-01T12:00:00Z"), "Europe/Berlin")).toBe(2 * 3_600_000);
    expect(offsetAt(at("2026-07-01T12:00:00Z"), "Asia/Kolkata")).toBe(5.5 * 3_600_000);
  });

  it("keeps 09:00 local on both sides of the spring change in New York", async () => {
    expect(utc(fromLocal({ year: 2026, month: 3, day: 7, hour: 9, minute: 0 }, "America/New_York"))).toBe(
      "2026-03-07T14:00:00.000Z",
    );
    expect(utc(fromLocal({ year: 2026, month: 3, day: 8, hour: 9, minute: 0 }, "America/New_York"))).toBe(
      "2026-03-08T13:00:00.000Z",
    );
  });

  it("moves a time in the skipped hour forward by the gap", async () => {
    // 2026-03-08 02:00 EST jumps to 03:00 EDT: 02:30 does not exist and becomes 03:30 EDT.
    const ny = fromLocal({ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, "America/New_York");
    expect(utc(ny)).toBe("2026-03-08T07:30:00.000Z");
    expect(formatLocal(ny, "America/New_York")).toBe("2026-03-08 03:30");
    // Berlin: 2026-03-29 02:00 CET jumps to 03:00 CEST.
    const berlin = fromLocal({ year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, "Europe/Berlin");
    expect(utc(berlin)).toBe("2026-03-29T01:30:00.000Z");
    expect(formatLocal(berlin, "Europe/Berlin")).toBe("2026-03-29 03:30");
  });

  it("takes the first occurrence of a repeated time in the autumn", async () => {
    // 2026-11-01 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST).
    expect(utc(fromLocal({ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, "America/New_York"))).toBe(
      "2026-11-01T05:30:00.000Z",
    );
    expect(utc(fromLocal({ year: 2026, month: 10, day: 25, hour: 2, minute: 30 }, "Europe/Berlin"))).toBe(
      "2026-10-25T00:30:00.000Z",
    );
    expect(utc(fromLocal({ year: 2026, month: 11, day: 1, hour: 9, minute: 0 }, "America/New_York"))).toBe(
      "2026-11-01T14:00:00.000Z",
    );
  });

  it("canonicalises zone names and refuses unknown ones", async () => {
    expect(canonicalTimeZone("europe/berlin")).toBe("Europe/Berlin");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("Mars/Olympus_Mons")).toBeUndefined();
    expect(canonicalTimeZone("")).toBeUndefined();
  });
});

describe("weekly slots", () => {
  it("lists slots across the New York spring change at the same local times", async () => {
    const plan = normaliseSlots({ saturday: ["09:00"], sunday: ["02:30", "09:00"], monday: ["09:00"] });
    const slots = slotsBetween(
      plan,
      "America/New_York",
      at("2026-03-07T00:00:00Z"),
      at("2026-03-10T00:00:00Z"),
    );
    expect(slots.map((s) => [utc(s.at), s.local, s.planned, s.weekday])).toEqual([
      ["2026-03-07T14:00:00.000Z", "2026-03-07 09:00", "09:00", "saturday"],
      ["2026-03-08T07:30:00.000Z", "2026-03-08 03:30", "02:30", "sunday"],
      ["2026-03-08T13:00:00.000Z", "2026-03-08 09:00", "09:00", "sunday"],
      ["2026-03-09T13:00:00.000Z", "2026-03-09 09:00", "09:00", "monday"],
    ]);
  });

  it("lists slots across the autumn change in New York and Berlin", async () => {
    const plan = normaliseSlots({ saturday: ["09:00"], sunday: ["09:00"] });
    const ny = slotsBetween(plan, "America/New_York", at("2026-10-31T00:00:00Z"), at("2026-11-02T00:00:00Z"));
    expect(ny.map((s) => utc(s.at))).toEqual(["2026-10-31T13:00:00.000Z", "2026-11-01T14:00:00.000Z"]);
    const berlin = slotsBetween(
      plan,
      "Europe/Berlin",
      at("2026-10-24T00:00:00Z"),
      at("2026-10-26T00:00:00Z"),
    );
    expect(berlin.map((s) => utc(s.at))).toEqual(["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z"]);
  });

  it("counts two slots that land on one instant once", async () => {
    const plan = normaliseSlots({ sunday: ["02:30", "03:30"] });
    const slots = slotsBetween(
      plan,
      "America/New_York",
      at("2026-03-08T00:00:00Z"),
      at("2026-03-09T00:00:00Z"),
    );
    expect(slots.map((s) => utc(s.at))).toEqual(["2026-03-08T07:30:00.000Z"]);
  });

  it("only lists slots strictly after the start and up to the end", async () => {
    const plan = normaliseSlots({ monday: ["09:00"] });
    const slots = slotsBetween(plan, "UTC", at("2026-03-02T09:00:00Z"), at("2026-03-09T09:00:00Z"));
    expect(slots.map((s) => utc(s.at))).toEqual(["2026-03-09T09:00:00.000Z"]);
  });

  it("refuses malformed slot times", async () => {
    for (const bad of ["9:00", "24:00", "12:60", "", "noon", "12:00:00"]) {
      expect(() => normaliseSlots({ monday: [bad] })).toThrow(NotesError);
    }
    expect(normaliseSlots({ monday: ["17:00", "09:00", "09:00"] })).toEqual({ 1: ["09:00", "17:00"] });
  });

  it("stores the plan with its zone and answers the next free slots in it", async () => {
    const app = await testApp("2026-03-06T12:00:00.000Z");
    await app.queue.setPlan({
      timeZone: "america/new_york",
      slots: { sunday: ["09:00"], monday: ["09:00"] },
    });
    expect((await app.queue.plan()).timeZone).toBe("America/New_York");
    const [first, second] = await app.queue.nextFreeSlots(2);
    expect(first).toMatchObject({ at: "2026-03-08T13:00:00.000Z", local: "2026-03-08 09:00", slot: "09:00" });
    expect(second).toMatchObject({ at: "2026-03-09T13:00:00.000Z", weekday: "monday" });
    await expect(app.queue.setPlan({ timeZone: "Nowhere/Else" })).rejects.toThrow(/Unknown time zone/);
    await app.close();
  });
});
