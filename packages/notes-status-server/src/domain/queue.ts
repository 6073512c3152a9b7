import { NotesError } from "./errors.js";
import { toListNote } from "./shape.js";
import { normaliseSlots, type Slot, slotsBetween, slotsByName } from "./slots.js";
import { canonicalTimeZone, type Clock, formatLocal, iso, toLocal, type Weekday, weekdayOf } from "./time.js";
import type { Note, NotesRepository, QueueSettings } from "./types.js";

const DAY_MS = 86_400_000;
/** How far ahead "the next free slot" is looked for. */
export const FREE_SLOT_SEARCH_DAYS = 366;
export const MAX_HORIZON_HOURS = 24 * 90;
export const MAX_MIN_GAP_DAYS = 3650;
export const DEFAULT_QUEUE_DAYS = 7;
export const MAX_QUEUE_DAYS = 31;
export const DEFAULT_QUEUE_ENTRIES = 100;
export const MAX_QUEUE_ENTRIES = 500;
export const DEFAULT_FREE_SLOTS = 5;
export const MAX_FREE_SLOTS = 50;

/**
 * The next `count` slots after `afterMs` that no scheduled note occupies (notes in `ignore` do not
 * count, so a note being rescheduled may keep its own slot) and that are not in `alsoTaken` (the
 * explicit times of the same schedule call). Throws NO_FREE_SLOT when there are fewer.
 */
export async function findFreeSlots(
  repo: NotesRepository,
  afterMs: number,
  count: number,
  ignore = new Set<string>(),
  alsoTaken: ReadonlySet<number> = new Set<number>(),
): Promise<Slot[]> {
  const { timeZone } = await repo.getSettings();
  const plan = await repo.getSlots();
  if (Object.keys(plan).length === 0) {
    throw new NotesError("NO_FREE_SLOT", "The weekly queue plan has no slots yet");
  }
  for (let days = 14; ; days = Math.min(days * 2, FREE_SLOT_SEARCH_DAYS)) {
    const to = afterMs + days * DAY_MS;
    const taken = new Set(
      (await repo.scheduledTimesBetween(iso(afterMs), iso(to))).map((t) => Date.parse(t)),
    );
    // Notes being rescheduled do not hold their slots.
    if (ignore.size > 0) {
      for (const n of await repo.scheduledBetween(iso(afterMs), iso(to)))
        if (ignore.has(n.id)) taken.delete(Date.parse(n.scheduledAt!));
    }
    for (const t of alsoTaken) taken.add(t);
    const free = slotsBetween(plan, timeZone, afterMs, to).filter((s) => !taken.has(s.at));
    if (free.length >= count) return free.slice(0, count);
    if (days >= FREE_SLOT_SEARCH_DAYS) {
      throw new NotesError(
        "NO_FREE_SLOT",
        `Only ${free.length} free queue slot${free.length === 1 ? "" : "s"} in the next ${FREE_SLOT_SEARCH_DAYS} days; ${count} needed`,
      );
    }
  }
}

export interface QueuePlan extends QueueSettings {
  slots: Record<Weekday, string[]>;
}

export interface QueuePlanPatch {
  timeZone?: string;
  /** The whole weekly plan; a weekday left out has no slots. */
  slots?: Partial<Record<Weekday, readonly string[]>>;
  evergreenHorizonHours?: number;
  evergreenMinGapDays?: number;
}

export interface SlotView {
  at: string;
  local: string;
  weekday: Weekday;
  /** The plan's slot time ("09:00"), or null for a note scheduled at a time of its own. */
  slot: string | null;
}

export interface QueueEntry extends SlotView {
  note: Note | null;
}

export interface QueueView {
  timeZone: string;
  from: string;
  to: string;
  entries: QueueEntry[];
  total: number;
  hasMore: boolean;
}

function view(s: Slot): SlotView {
  return { at: iso(s.at), local: s.local, weekday: s.weekday, slot: s.planned };
}

/** The weekly plan, the queue as it stands and the free slots. */
export class QueueService {
  constructor(
    private readonly repo: NotesRepository,
    private readonly clock: Clock,
  ) {}

  async plan(): Promise<QueuePlan> {
    return { ...(await this.repo.getSettings()), slots: slotsByName(await this.repo.getSlots()) };
  }

  async setPlan(patch: QueuePlanPatch): Promise<QueuePlan> {
    const settings = await this.repo.getSettings();
    if (patch.timeZone !== undefined) {
      const zone = canonicalTimeZone(patch.timeZone);
      if (!zone) throw new NotesError("INVALID_TIME_ZONE", `Unknown time zone: "${patch.timeZone}"`);
      settings.timeZone = zone;
    }
    if (patch.evergreenHorizonHours !== undefined) {
      const h = patch.evergreenHorizonHours;
      if (!Number.isFinite(h) || h < 0 || h > MAX_HORIZON_HOURS) {
        throw new NotesError(
          "INVALID_ARGUMENT",
          `evergreenHorizonHours must be from 0 to ${MAX_HORIZON_HOURS}`,
        );
      }
      settings.evergreenHorizonHours = h;
    }
    if (patch.evergreenMinGapDays !== undefined) {
      const d = patch.evergreenMinGapDays;
      if (!Number.isFinite(d) || d < 0 || d > MAX_MIN_GAP_DAYS) {
        throw new NotesError("INVALID_ARGUMENT", `evergreenMinGapDays must be from 0 to ${MAX_MIN_GAP_DAYS}`);
      }
      settings.evergreenMinGapDays = d;
    }
    const slots = patch.slots === undefined ? undefined : normaliseSlots(patch.slots);
    await this.repo.transaction(async () => {
      await this.repo.setSettings(settings);
      if (slots) await this.repo.setSlots(slots);
    });
    return this.plan();
  }

  /** The next free slots after `afterMs`, or after now when that is later: a slot past is no longer free. */
  async nextFreeSlots(count: number, after = this.clock().getTime()): Promise<SlotView[]> {
    const afterMs = Math.max(after, this.clock().getTime());
    const plan = await this.repo.getSlots();
    if (Object.keys(plan).length === 0) return [];
    try {
      return (await findFreeSlots(this.repo, afterMs, count)).map(view);
    } catch (err) {
      if (!(err instanceof NotesError) || err.reason !== "NO_FREE_SLOT") throw err;
      // Fewer than asked: give what there is.
      const to = afterMs + FREE_SLOT_SEARCH_DAYS * DAY_MS;
      const taken = new Set(
        (await this.repo.scheduledTimesBetween(iso(afterMs), iso(to))).map((t) => Date.parse(t)),
      );
      const { timeZone } = await this.repo.getSettings();
      return slotsBetween(plan, timeZone, afterMs, to)
        .filter((s) => !taken.has(s.at))
        .slice(0, count)
        .map(view);
    }
  }

  /**
   * Scheduled notes and plan slots from `fromMs` (default now) for `days` days, earliest first. With the
   * default start, overdue notes that are still scheduled (a publisher failing) come first.
   */
  async queue(options: {
    fromMs?: number;
    days: number;
    includeFreeSlots: boolean;
    limit: number;
  }): Promise<QueueView> {
    const now = this.clock().getTime();
    const from = options.fromMs ?? now;
    const to = from + options.days * DAY_MS;
    const { timeZone } = await this.repo.getSettings();
    const slots = slotsBetween(await this.repo.getSlots(), timeZone, from, to);
    const slotAt = new Map(slots.map((s) => [s.at, s]));
    const lower = options.fromMs === undefined ? "" : iso(from);
    // Which slots are taken and how many notes there are come from the times alone; full notes are
    // read only for the page (any note after the first `limit` notes cannot be in the first `limit`).
    const times = (await this.repo.scheduledTimesBetween(lower, iso(to))).map((t) => Date.parse(t));
    const used = new Set(times.filter((t) => slotAt.has(t)));
    const notes = await this.repo.scheduledBetween(lower, iso(to), options.limit);
    const entries: Array<QueueEntry & { ms: number }> = notes.map((n) => {
      const ms = Date.parse(n.scheduledAt!);
      const slot = slotAt.get(ms);
      const local = toLocal(ms, timeZone);
      return {
        ms,
        at: n.scheduledAt!,
        local: formatLocal(ms, timeZone),
        weekday: weekdayOf(local.year, local.month, local.day),
        slot: slot ? slot.planned : null,
        note: toListNote(n),
      };
    });
    const freeCount = options.includeFreeSlots ? slots.filter((s) => !used.has(s.at)).length : 0;
    if (options.includeFreeSlots) {
      for (const s of slots) if (!used.has(s.at)) entries.push({ ms: s.at, ...view(s), note: null });
    }
    entries.sort((a, b) => a.ms - b.ms);
    const page = entries.slice(0, options.limit).map(({ ms: _ms, ...e }) => e);
    const total = times.length + freeCount;
    return { timeZone, from: iso(from), to: iso(to), entries: page, total, hasMore: total > page.length };
  }
}
