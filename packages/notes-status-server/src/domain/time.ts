/**
 * Time-zone arithmetic on Intl.DateTimeFormat alone (no dependency). Instants are epoch milliseconds;
 * local times are wall-clock fields in an IANA zone.
 */

export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export const WEEKDAYS = [
  "sunday",
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A formatter per zone; building one costs far more than using it, so they are kept. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The canonical IANA name of a zone ("america/new_york" -> "America/New_York"), or undefined. */
export function canonicalTimeZone(name: string): string | undefined {
  if (name.trim() === "" || name.length > 64) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

function formatParts(ms: number, timeZone: string): LocalDateTime {
  const out: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== "literal") out[p.type] = Number(p.value);
  }
  return {
    year: out["year"]!,
    month: out["month"]!,
    day: out["day"]!,
    hour: out["hour"]!,
    minute: out["minute"]!,
  };
}

const QUARTER_HOUR = 15 * 60_000;
const offsetCache = new Map<string, number>();

/**
 * The zone's offset from UTC at an instant, in ms (east positive), to the minute. formatToParts is
 * slow (tens of microseconds), so offsets are cached per quarter hour: every offset change in the
 * tz database since 1970 happens on a quarter-hour boundary, so one offset holds for the whole bucket.
 */
export function offsetAt(ms: number, timeZone: string): number {
  const bucket = Math.floor(ms / QUARTER_HOUR) * QUARTER_HOUR;
  const key = `${timeZone}|${bucket}`;
  let offset = offsetCache.get(key);
  if (offset === undefined) {
    const l = formatParts(bucket, timeZone);
    offset = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute) - bucket;
    if (offsetCache.size > 50_000) offsetCache.clear();
    offsetCache.set(key, offset);
  }
  return offset;
}

/** Wall-clock fields of an instant in a zone (seconds dropped). */
export function toLocal(ms: number, timeZone: string): LocalDateTime {
  const t = new Date(Math.floor(ms / 60_000) * 60_000 + offsetAt(ms, timeZone));
  return {
    year: t.getUTCFullYear(),
    month: t.getUTCMonth() + 1,
    day: t.getUTCDate(),
    hour: t.getUTCHours(),
    minute: t.getUTCMinutes(),
  };
}

const DAY_MS = 86_400_000;

function sameLocal(a: LocalDateTime, b: LocalDateTime): boolean {
  return (
    a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute
  );
}

/**
 * The instant a wall-clock time names in a zone. Across a DST change:
 * - a time that occurs twice (clocks go back) resolves to the first occurrence;
 * - a time that does not exist (clocks go forward) is read with the offset in force before the change,
 *   which moves it forward by the gap (02:30 on a night that jumps 02:00 -> 03:00 becomes 03:30).
 * Real zones change offset at most once within a day either side, which this relies on.
 */
export function fromLocal(local: LocalDateTime, timeZone: string): number {
  const naive = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  const before = offsetAt(naive - DAY_MS, timeZone);
  const after = offsetAt(naive + DAY_MS, timeZone);
  const candidates = [naive - before, naive - after].filter((t) => sameLocal(toLocal(t, timeZone), local));
  if (candidates.length > 0) return Math.min(...candidates);
  return naive - before;
}

/** The weekday of a calendar date (the date alone; no zone involved). */
export function weekdayOf(year: number, month: number, day: number): Weekday {
  return WEEKDAYS[new Date(Date.UTC(year, month - 1, day)).getUTCDay()]!;
}

/** The next calendar date. */
export function nextDate(d: { year: number; month: number; day: number }): {
  year: number;
  month: number;
  day: number;
} {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day) + DAY_MS);
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

const pad = (n: number) => String(n).padStart(2, "0");

/** "2026-03-09 09:00" in the zone. */
export function formatLocal(ms: number, timeZone: string): string {
  const l = toLocal(ms, timeZone);
  return `${l.year}-${pad(l.month)}-${pad(l.day)} ${pad(l.hour)}:${pad(l.minute)}`;
}

/** A slot time: "HH:MM", 24-hour, 00:00 to 23:59. */
export const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
/** Longer than any IANA zone name: a bound on input, before the zone is looked up. */
export const MAX_TIME_ZONE_LENGTH = 64;

/** Parses "HH:MM" (00:00 to 23:59) into its hour and minute, or undefined. */
export function parseHhMm(value: string): { hour: number; minute: number } | undefined {
  return HH_MM.test(value) ? { hour: Number(value.slice(0, 2)), minute: Number(value.slice(3)) } : undefined;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
