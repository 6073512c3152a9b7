/** Time helpers: ISO output and calendar-day boundaries in a user's IANA time zone. */

/** `2026-07-14T09:12:00+00:00`: every timestamp Dexi returns is UTC, whole seconds, with an explicit `+00:00`. */
export function isoUtc(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}+00:00`;
}

/** The zone's own spelling (`europe/berlin` is `Europe/Berlin`), or undefined for an unknown zone. */
export function canonicalTimeZone(tz: string): string | undefined {
  if (tz.trim() === "") return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: tz.trim() }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** This machine's time zone (the TZ variable, else the system's), UTC when the runtime cannot tell. */
export function machineTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

// Building a formatter costs far more than using one; a server sees few zones.
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(tz, f);
  }
  return f;
}

function zonedParts(
  ms: number,
  tz: string,
): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts = formatter(tz).formatToParts(new Date(ms));
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

const DAY_MS = 86_400_000;

/** The local calendar date at an instant, as the UTC midnight of that date (comparable, day arithmetic). */
function localDate(ms: number, tz: string): number {
  const p = zonedParts(ms, tz);
  return Date.UTC(p.y, p.m - 1, p.d);
}

/**
 * The first instant whose local date is the given date (`date` as the UTC midnight of that calendar
 * date). Usually local midnight; where a DST change skips midnight (America/Sao_Paulo on 2018-11-04
 * jumped from 00:00 to 01:00) the day starts when the skipped hour ends, 01:00 there, never at 23:00
 * of the day before; where a change repeats the hour before midnight, the first midnight counts.
 */
export function dayStart(date: number, tz: string): number {
  // Every offset in use around that day: at most one change happens near a given midnight.
  const offsets = [...new Set([-DAY_MS, 0, DAY_MS].map((d) => offsetAt(date + d, tz)))];
  const midnights = offsets.map((o) => date - o).filter((t) => offsetAt(t, tz) === date - t);
  if (midnights.length > 0) return Math.min(...midnights);
  // Midnight does not exist that day: find the end of the skipped hour(s), to the second.
  let lo = Math.floor((date - Math.max(...offsets)) / 1000); // before the change: still the day before
  let hi = Math.ceil((date - Math.min(...offsets)) / 1000); // after it: already the day
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (localDate(mid * 1000, tz) >= date) hi = mid;
    else lo = mid;
  }
  return hi * 1000;
}

/** The start of the local day `daysBack` days before the local day containing `nowMs`. */
export function localMidnight(nowMs: number, tz: string, daysBack = 0): number {
  return dayStart(localDate(nowMs, tz) - daysBack * DAY_MS, tz);
}

/** list_notes' `period`: today, yesterday, or the last seven local days. */
export const PERIODS = ["today", "yesterday", "week"] as const;
export type Period = (typeof PERIODS)[number];

/**
 * `today`: since the local day began; `yesterday`: the whole previous local day; `week`: the last seven
 * local calendar days including today (since the start of the day six days ago).
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
