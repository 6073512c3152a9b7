// A sender's Date header is read by headerTime/headerIso on every path (search rows, get_message,
// the cache's rows, thread members): whatever it holds, neither throws, and a time is one a Date holds.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headerIso, headerTime } from "../src/header-date.js";

describe("a header date", () => {
  it("is read as the time it names, or null", () => {
    expect(headerIso("Mon, 07 Dec 2026 10:00:00 +0000")).toBe("2026-12-07T10:00:00.000Z");
    expect(headerIso(new Date(Date.UTC(2020, 0, 1)))).toBe("2020-01-01T00:00:00.000Z");
    for (const bad of ["not a date", "", null, undefined, new Date("x"), Number.NaN, 8.64e15 + 1, -Infinity])
      expect(headerIso(bad), String(bad)).toBeNull();
    expect(headerIso(8.64e15)).toBe("+275760-09-13T00:00:00.000Z");
  });

  it("never throws, whatever a sender or a parser made of it", () => {
    const input = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.date({ noInvalidDate: false }),
      fc.constantFrom(null, undefined),
    );
    fc.assert(
      fc.property(input, (d) => {
        const t = headerTime(d);
        const iso = headerIso(d);
        expect(t === null || (Number.isFinite(t) && Math.abs(t) <= 8.64e15)).toBe(true);
        expect(iso === null ? t : Date.parse(iso)).toBe(t);
      }),
      { numRuns: 2000 },
    );
  });
});
