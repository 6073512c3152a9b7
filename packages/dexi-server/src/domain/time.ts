/** Time helpers: ISO output and calendar-day boundaries in a user's IANA time zone. */

/** `2026-07-14T09:12:00+00:00`: UTC, whole seconds, as the seed writes timestamps. */
export function isoUtc(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}+00:00`;
}

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function zonedParts(
  ms: number,
  tz: string,
): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return {
    y: get("year"),
    m: get("month"),
    d: get("day"),
    h: get("hour"),
    min: get("minute"),
    s: get("second"),
  };
}

/** The zone's offset from UTC at an instant, in ms. */
function offsetAt(ms: number, tz: string): number {
  const p = zonedParts(ms, tz);
  return Date.UTC(p.y, p.m - 1, p.d, p.h, p.min, p.s) - Math.floor(ms / 1000) * 1000;
}

/** The instant of local midnight `daysBack` days before the local day containing `nowMs`. */
export function localMidnight(nowMs: number, tz: string, daysBack = 0): number {
  const p = zonedParts(nowMs, tz);
  const wall = Date.UTC(p.y, p.m - 1, p.d - daysBack);
  // Two passes settle the offset across a DST change between now and that midnight.
  let guess = wall - offsetAt(wall, tz);
  guess = wall - offsetAt(guess, tz);
  return guess;
}

export type Period = "today" | "yesterday" | "week";

/**
 * `today`: since local midnight; `yesterday`: the whole previous local day; `week`: the last seven
 * local calendar days including today (since midnight six days ago).
 */
export function periodRange(period: Period, nowMs: number, tz: string): { from: number; to: number } {
  switch (period) {
    case "today":
      return { from: localMidnight(nowMs, tz, 0), to: Number.MAX_SAFE_INTEGER };
    case "yesterday":
      return { from: localMidnight(nowMs, tz, 1), to: localMidnight(nowMs, tz, 0) };
    case "week":
      return { from: localMidnight(nowMs, tz, 6), to: Number.MAX_SAFE_INTEGER };
  }
}
