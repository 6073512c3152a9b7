import { describe, expect, it } from "vitest";
import { localMidnight, periodRange } from "../src/domain/time.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe("a local day starts at the first instant whose local date is that day", () => {
  it("is local midnight on ordinary days and across a DST change in the week", () => {
    expect(iso(localMidnight(at("2026-03-10T20:00:00Z"), "America/New_York"))).toBe(
      "2026-03-10T04:00:00.000Z",
    );
    // Six days back is before the change of 2026-03-08: midnight then was at UTC-5.
    expect(iso(localMidnight(at("2026-03-10T20:00:00Z"), "America/New_York", 6))).toBe(
      "2026-03-04T05:00:00.000Z",
    );
    expect(iso(localMidnight(at("2026-04-05T12:00:00Z"), "Pacific/Chatham"))).toBe(
      "2026-04-05T11:15:00.000Z",
    );
  });

  it("where DST skips midnight, is the end of the skipped hour (São Paulo 2018-11-04: 01:00)", () => {
    expect(iso(localMidnight(at("2018-11-04T15:00:00Z"), "America/Sao_Paulo"))).toBe(
      "2018-11-04T03:00:00.000Z",
    );
    expect(periodRange("yesterday", at("2018-11-05T15:00:00Z"), "America/Sao_Paulo")).toEqual({
      from: at("2018-11-04T03:00:00Z"),
      to: at("2018-11-05T02:00:00Z"),
    });
  });

  it("where DST repeats the hour before midnight, is the midnight after which the date stays", () => {
    // Beirut, 2023-10-29: at 00:00 (UTC+3) clocks went back to 23:00 on the 28th; the 29th is first
    // shown at 00:00 UTC+2.
    expect(iso(localMidnight(at("2023-10-29T12:00:00Z"), "Asia/Beirut"))).toBe("2023-10-28T22:00:00.000Z");
  });

  it("a skipped calendar day is empty (Samoa left out 2011-12-30)", () => {
    const now = at("2011-12-31T12:00:00Z"); // 02:00 on 2012-01-01 in Apia
    expect(iso(localMidnight(now, "Pacific/Apia"))).toBe("2011-12-31T10:00:00.000Z");
    const dec31 = localMidnight(now, "Pacific/Apia", 1);
    const dec30 = localMidnight(now, "Pacific/Apia", 2);
    expect(iso(dec31)).toBe("2011-12-30T10:00:00.000Z");
    expect(dec30).toBe(dec31);
  });
});
