import { NotesError } from "./errors.js";
import {
  formatLocal,
  fromLocal,
  nextDate,
  parseHhMm,
  toLocal,
  WEEKDAYS,
  type Weekday,
  weekdayOf,
} from "./time.js";
import type { WeeklySlots } from "./types.js";

/** One slot of the weekly plan on one date. */
export interface Slot {
  /** The instant, epoch ms. */
  at: number;
  /** The slot as the plan names it ("09:00"); `local` differs when a DST gap moved it. */
  planned: string;
  weekday: Weekday;
  /** The wall-clock time the slot actually falls on in the zone, "YYYY-MM-DD HH:MM". */
  local: string;
}

export const MAX_SLOTS_PER_DAY = 96;

/** Checks and normalises a weekly plan given by weekday name: sorted, without duplicates. */
export function normaliseSlots(byName: Partial<Record<Weekday, readonly string[]>>): WeeklySlots {
  const out: WeeklySlots = {};
  for (const [i, name] of WEEKDAYS.entries()) {
    const times = byName[name];
    if (!times || times.length === 0) continue;
    for (const t of times) {
      if (!parseHhMm(t)) {
        throw new NotesError(
          "INVALID_SLOT",
          `Invalid slot time for ${name}: "${t}" (use HH:MM, 00:00 to 23:59)`,
        );
      }
    }
    const unique = [...new Set(times)].sort();
    if (unique.length > MAX_SLOTS_PER_DAY) {
      throw new NotesError("INVALID_SLOT", `Too many slots on ${name}: at most ${MAX_SLOTS_PER_DAY}`);
    }
    out[i] = unique;
  }
  return out;
}

export function slotsByName(slots: WeeklySlots): Record<Weekday, string[]> {
  const out = {} as Record<Weekday, string[]>;
  for (const [i, name] of WEEKDAYS.entries()) out[name] = [...(slots[i] ?? [])];
  return out;
}

/**
 * Every slot instant in (fromMs, toMs], earliest first. Slots are wall-clock times in the zone, so a
 * 09:00 slot stays 09:00 local across a DST change; a slot inside a skipped hour moves forward by the
 * gap (see fromLocal), and two slots that land on the same instant count once.
 */
export function slotsBetween(slots: WeeklySlots, timeZone: string, fromMs: number, toMs: number): Slot[] {
  const out: Slot[] = [];
  if (toMs <= fromMs || Object.keys(slots).length === 0) return out;
  const seen = new Set<number>();
  // Walk local dates from a day before fromMs to a day after toMs: a moved (DST gap) slot can cross
  // midnight, and two extra days cost nothing.
  let date = toLocal(fromMs - 86_400_000, timeZone);
  const last = toLocal(toMs + 86_400_000, timeZone);
  const lastKey = last.year * 10_000 + last.month * 100 + last.day;
  for (;;) {
    const key = date.year * 10_000 + date.month * 100 + date.day;
    if (key > lastKey) break;
    const weekday = weekdayOf(date.year, date.month, date.day);
    for (const planned of slots[WEEKDAYS.indexOf(weekday)] ?? []) {
      const hm = parseHhMm(planned)!;
      const at = fromLocal({ year: date.year, month: date.month, day: date.day, ...hm }, timeZone);
      if (at <= fromMs || at > toMs || seen.has(at)) continue;
      seen.add(at);
      out.push({ at, planned, weekday, local: formatLocal(at, timeZone) });
    }
    date = { ...nextDate(date), hour: 0, minute: 0 };
  }
  return out.sort((a, b) => a.at - b.at);
}
