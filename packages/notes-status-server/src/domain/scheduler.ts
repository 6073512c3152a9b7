import { randomUUID } from "node:crypto";
import { PublishError, type PublishKind, type Publisher } from "./publishers/types.js";
import { slotsBetween } from "./slots.js";
import { type Clock, iso } from "./time.js";
import type { NoteDetail, NotesRepository } from "./types.js";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Failed runs in a row before a note is no longer tried. */
export const DEFAULT_GIVE_UP_AFTER = 8;

/**
 * How long a note that failed waits before the next try: 1 minute after its first attempt, doubling
 * with each attempt (a webhook's own retries count), at most an hour, so a platform that is down is not
 * hammered by every run and a note still goes out within the hour of its recovery.
 */
export function retryDelayMs(attempts: number): number {
  return Math.min(HOUR_MS, MINUTE_MS * 2 ** Math.max(0, Math.min(attempts, 20) - 1));
}

export interface PublishReport {
  /** Notes handed to the publisher and now published. */
  published: string[];
  /** Published notes handed over once more as restacks. */
  restacked: string[];
  failed: Array<{ id: string; kind: "post" | "restack"; error: string }>;
  /** Of the failed ones, those that reached the limit of failed runs and are no longer tried. */
  gaveUp: string[];
  /**
   * Answered by the publisher (sent or failed) but the store refused to record it: this process writes
   * the record on its next runs, and no run sends the note again meanwhile.
   */
  unrecorded: Array<{ id: string; kind: PublishKind; error: string }>;
  /**
   * Handed to the publisher by a run that stopped before recording the answer: they may have gone out,
   * so they are not sent again; a post is back to draft and each carries the reason in lastError.
   */
  outcomeUnknown: Array<{ id: string; kind: PublishKind }>;
}

/** A delivery's answer that is still to be written: `write` records it (and ends the delivery). */
interface PendingRecord {
  kind: PublishKind;
  write: (report: PublishReport) => Promise<void>;
}

/**
 * Waits (ms) before writing a refused record again within the run: a busy or briefly unreachable store
 * often takes it a moment later. After them, later runs try again.
 */
const RECORD_RETRY_MS = [50, 250];

/**
 * Whether the delivery of `kind` is still owed: the post is still scheduled; the restack not yet out,
 * whatever the note's status since it was published (a published note made evergreen keeps it).
 */
function pendingDelivery(note: NoteDetail, kind: PublishKind): boolean {
  return kind === "post"
    ? note.status === "scheduled"
    : note.restackDueAt !== null && note.restackedAt === null;
}

export interface TickReport extends PublishReport {
  /** New scheduled copies of evergreen notes. */
  recycled: string[];
}

export interface SchedulerOptions {
  /** How long a run holds a note it is publishing, so a second process (cron) skips it. Default 10 min. */
  leaseMs?: number;
  /** Notes per kind per run. Default 100; the rest wait for the next run. */
  batch?: number;
  /**
   * After this many runs in a row whose publish of a note failed, that note is no longer tried: a post
   * goes back to draft (attempts and lastError kept), a restack is dropped. Default 8 (with the back-off, about two hours).
   */
  giveUpAfter?: number;
  log?: (line: string) => void;
}

/**
 * Publishing and recycling. Nothing here waits on a timer: `tick(now)` does the work due at `now`, so a
 * test passes its own clock, the server calls it from an interval, and cron runs it once.
 */
export class Scheduler {
  private readonly leaseMs: number;
  private readonly batch: number;
  private readonly giveUpAfter: number;
  private readonly log: (line: string) => void;
  private running: Promise<TickReport> | undefined;
  /** Answers this process got but could not record yet, by note id (see `record`). */
  private readonly unrecorded = new Map<string, PendingRecord>();

  constructor(
    private readonly repo: NotesRepository,
    private readonly publisher: Publisher,
    private readonly clock: Clock,
    options: SchedulerOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 10 * 60_000;
    this.batch = options.batch ?? 100;
    this.giveUpAfter = options.giveUpAfter ?? DEFAULT_GIVE_UP_AFTER;
    if (!Number.isInteger(this.giveUpAfter) || this.giveUpAfter < 1)
      throw new Error("giveUpAfter must be a whole number of runs, 1 or more");
    this.log = options.log ?? (() => undefined);
  }

  /**
   * Hands every due scheduled note to the publisher (it becomes published) and every due restack. A
   * failure leaves the note as it was, with `attempts` and `lastError`, to be tried again by the first
   * run after its back-off (`retryDelayMs`), until `giveUpAfter` runs in a row have failed.
   *
   * Each note is handed over once: the claim marks it as being delivered before the publisher sees it,
   * and only the record of the answer (success or failure) clears that mark. A record the store
   * refuses is kept in this process and written by a later run, never replaced by a second send; a mark
   * whose run is gone (its lease over, nobody left to record the answer) is resolved as an unknown
   * outcome, shown on the note, for its owner to decide (`resolveAbandoned`).
   */
  async publishDue(now: Date = this.clock()): Promise<PublishReport> {
    const report: PublishReport = {
      published: [],
      restacked: [],
      failed: [],
      gaveUp: [],
      unrecorded: [],
      outcomeUnknown: [],
    };
    const nowIso = iso(now.getTime());
    for (const [id, pending] of [...this.unrecorded]) await this.record(id, pending, report, []);
    await this.resolveAbandoned(nowIso, report);
    // The lease runs from the claim, not from the start of the run: a run of 100 notes to a slow
    // receiver (up to 47 s a note with the webhook's retries) lasts far longer than the lease, and a
    // lease dated from its start would have expired before its later notes were even sent, leaving
    // them to another process while this one sends them too.
    const until = () => iso(Math.max(now.getTime(), this.clock().getTime()) + this.leaseMs);
    for (const kind of ["post", "restack"] as const) {
      const due =
        kind === "post"
          ? await this.repo.duePosts(nowIso, this.batch)
          : await this.repo.dueRestacks(nowIso, this.batch);
      for (const listed of due) {
        if (!(await this.repo.claim(listed.id, kind, nowIso, until()))) continue;
        await this.deliver(kind, listed, now, report);
      }
    }
    for (const f of report.failed) {
      const end = report.gaveUp.includes(f.id)
        ? `; gave up after ${this.giveUpAfter} failed runs${f.kind === "post" ? ", back to draft" : ""}`
        : "";
      this.log(`publishing ${f.kind} of note ${f.id} failed: ${f.error}${end}`);
    }
    for (const u of report.unrecorded)
      this.log(
        `${u.kind} of note ${u.id} answered, but the store refused the record (kept for the next run): ${u.error}`,
      );
    for (const u of report.outcomeUnknown)
      this.log(
        `${u.kind} of note ${u.id}: outcome unknown (a run stopped before recording it); not sent again`,
      );
    return report;
  }

  /** Hands one claimed note over and records the answer. */
  private async deliver(kind: PublishKind, listed: NoteDetail, now: Date, report: PublishReport) {
    const nowIso = iso(now.getTime());
    let note: NoteDetail;
    try {
      note = (await this.repo.get(listed.id)) ?? listed; // what goes out is the note as it is now
    } catch (err) {
      // Nothing went out: end the delivery, so its mark is not later taken for an unknown outcome.
      await this.repo.settle(listed.id).catch(() => undefined);
      throw err;
    }
    let write: PendingRecord["write"];
    try {
      const outgoing: NoteDetail = kind === "post" ? { ...note, publishedAt: nowIso } : note;
      const outcome = await this.publisher.publish({ kind, at: nowIso, note: outgoing });
      write = (r) => this.recordSuccess(note.id, kind, outcome?.attempts ?? 1, now, r);
    } catch (err) {
      write = (r) => this.recordFailure(note.id, kind, err, now, r);
    }
    await this.record(note.id, { kind, write }, report, RECORD_RETRY_MS);
  }

  /**
   * Writes the answer of a delivery, trying again after each of `waits` (ms); when the store still
   * refuses, keeps it for the next run (the delivery mark keeps every run from sending the note again
   * meanwhile) and reports it as unrecorded.
   */
  private async record(
    id: string,
    pending: PendingRecord,
    report: PublishReport,
    waits: readonly number[],
  ): Promise<void> {
    let error: unknown;
    for (const wait of [0, ...waits]) {
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      try {
        await pending.write(report);
        this.unrecorded.delete(id);
        return;
      } catch (err) {
        error = err;
      }
    }
    this.unrecorded.set(id, pending);
    report.unrecorded.push({ id, kind: pending.kind, error: (error as Error).message || String(error) });
  }

  private async recordSuccess(
    id: string,
    kind: PublishKind,
    attempts: number,
    now: Date,
    report: PublishReport,
  ): Promise<void> {
    const nowIso = iso(now.getTime());
    await this.repo.transaction(async () => {
      const current = await this.repo.get(id);
      if (!current) return; // deleted while it went out: nothing left to record
      if (kind === "post") {
        const hours = current.autoRestackAfterHours;
        await this.repo.update({
          ...current,
          status: "published",
          publishedAt: nowIso,
          restackDueAt: hours === null ? null : iso(now.getTime() + hours * HOUR_MS),
          restackedAt: null,
          attempts: current.attempts + attempts,
          lastError: null,
          lastAttemptAt: nowIso,
        });
      } else {
        await this.repo.update({ ...current, restackedAt: nowIso, lastError: null, lastAttemptAt: nowIso });
      }
      await this.repo.settle(id);
    });
    (kind === "post" ? report.published : report.restacked).push(id);
  }

  /**
   * Records a failed run and ends the delivery: with a back-off before the next try, or not to be
   * tried again: deleted meanwhile, or at the limit of failed runs, when a post goes back to draft (off
   * the queue) and a restack is dropped (restackDueAt null). Either keeps attempts and lastError.
   */
  private async recordFailure(
    id: string,
    kind: PublishKind,
    err: unknown,
    now: Date,
    report: PublishReport,
  ): Promise<void> {
    const tries = err instanceof PublishError ? err.attempts : 1;
    const nowIso = iso(now.getTime());
    const error = (err as Error).message || String(err);
    const gaveUp = await this.repo.transaction(async () => {
      const current = await this.repo.get(id);
      if (!current) return false;
      const failed: NoteDetail = {
        ...current,
        attempts: current.attempts + tries,
        lastError: error,
        lastAttemptAt: nowIso,
      };
      await this.repo.update(failed);
      const runs = await this.repo.addFailedRun(id);
      // The owner may have moved the note while it was out (unscheduled it): only a delivery that is
      // still pending is given up on.
      if (runs < this.giveUpAfter || !pendingDelivery(current, kind)) {
        await this.repo.settle(id, iso(now.getTime() + retryDelayMs(failed.attempts)));
        return false;
      }
      await this.repo.update(
        kind === "post"
          ? { ...failed, status: "draft", scheduledAt: null }
          : { ...failed, restackDueAt: null },
      );
      await this.repo.settle(id);
      return true;
    });
    report.failed.push({ id, kind, error });
    if (gaveUp) report.gaveUp.push(id);
  }

  /**
   * Deliveries whose run is gone (the lease over with the mark still set: a process killed between the
   * publisher's answer and the record, or one that ended with the record unwritten) may or may not have
   * gone out. Sending again could post twice, so they are not: a post goes back to draft, off the queue
   * (the owner's `schedule_notes` sends it again), a restack is dropped, and lastError says why.
   */
  private async resolveAbandoned(nowIso: string, report: PublishReport): Promise<void> {
    for (const id of await this.repo.abandonedDeliveries(nowIso, this.batch)) {
      if (this.unrecorded.has(id)) continue; // this process knows the answer and writes it when it can
      const kind = await this.repo.transaction(async () => {
        const taken = await this.repo.takeAbandoned(id, nowIso);
        const current = taken && (await this.repo.get(id));
        if (!taken || !current) return undefined;
        const pending = pendingDelivery(current, taken);
        const lastError = `Outcome unknown: this ${taken} was handed to the publisher (delivery id ${id}:${taken}) by a scheduler run that stopped before recording the answer, so it may have gone out. It is not sent again by itself${
          taken === "post" ? ": check the receiver, and schedule it again with schedule_notes to send it" : ""
        }.`;
        await this.repo.update({
          ...current,
          ...(pending && taken === "post" ? { status: "draft" as const, scheduledAt: null } : {}),
          ...(pending && taken === "restack" ? { restackDueAt: null } : {}),
          attempts: current.attempts + 1,
          lastError,
        });
        return taken;
      });
      if (kind) report.outcomeUnknown.push({ id, kind });
    }
  }

  /**
   * Fills every free plan slot within the horizon with a copy of an evergreen note: the least recently
   * used source first (never used before all others), skipping a source whose copy is scheduled or
   * published, or that was itself published, within the minimum gap of that slot. The copy is a new scheduled note with sourceNoteId.
   */
  async recycleEvergreen(now: Date = this.clock()): Promise<NoteDetail[]> {
    const settings = await this.repo.getSettings();
    const nowMs = now.getTime();
    if (settings.evergreenHorizonHours <= 0) return [];
    const horizon = nowMs + settings.evergreenHorizonHours * HOUR_MS;
    const gap = settings.evergreenMinGapDays * DAY_MS;
    return this.repo.transaction(async () => {
      const slots = slotsBetween(await this.repo.getSlots(), settings.timeZone, nowMs, horizon);
      if (slots.length === 0) return [];
      const taken = new Set(
        (await this.repo.scheduledTimesBetween(iso(nowMs), iso(horizon))).map((t) => Date.parse(t)),
      );
      const sources = await this.repo.evergreenByLeastRecentUse();
      const created: NoteDetail[] = [];
      const nowIso = iso(nowMs);
      for (const slot of slots) {
        if (taken.has(slot.at)) continue;
        let index = -1;
        for (const [i, s] of sources.entries()) {
          if (await this.farEnough(s, slot.at, gap)) {
            index = i;
            break;
          }
        }
        if (index < 0) continue;
        const source = sources[index]!;
        const copy: NoteDetail = {
          id: randomUUID(),
          content: source.content,
          tags: [...source.tags],
          status: "scheduled",
          scheduledAt: iso(slot.at),
          autoRestackAfterHours: source.autoRestackAfterHours,
          createdAt: nowIso,
          updatedAt: nowIso,
          publishedAt: null,
          restackDueAt: null,
          restackedAt: null,
          sourceNoteId: source.id,
          lastRecycledAt: null,
          attempts: 0,
          lastError: null,
          lastAttemptAt: null,
        };
        await this.repo.insert(copy);
        // Bookkeeping only: updatedAt stays, since the person did not change the source.
        const used = { ...source, lastRecycledAt: iso(slot.at) };
        await this.repo.update(used);
        sources.splice(index, 1);
        sources.push(used);
        created.push(copy);
      }
      return created;
    });
  }

  private async farEnough(source: NoteDetail, slotMs: number, gap: number): Promise<boolean> {
    if (gap <= 0) return true;
    if (source.lastRecycledAt !== null && Math.abs(slotMs - Date.parse(source.lastRecycledAt)) < gap)
      return false;
    // A published note made evergreen went out itself: that counts as a use, like a copy's.
    if (source.publishedAt !== null && Math.abs(slotMs - Date.parse(source.publishedAt)) < gap) return false;
    return !(await this.repo.hasCopyBetween(source.id, iso(slotMs - gap), iso(slotMs + gap)));
  }

  /** One scheduler run: recycle, then publish what is due. Overlapping calls share one run. */
  tick(now: Date = this.clock()): Promise<TickReport> {
    if (this.running) return this.running;
    const run = async (): Promise<TickReport> => {
      const recycled = (await this.recycleEvergreen(now)).map((n) => n.id);
      return { recycled, ...(await this.publishDue(now)) };
    };
    this.running = run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * Before a one-shot run (publish-due) ends: writes the answers the store refused, trying again every
   * second for up to `forMs`. An answer this process still holds when it exits becomes an unknown
   * outcome at the next run (the note back to draft for its owner to check), so a store that is busy
   * or unreachable for a few seconds is waited for. `report.unrecorded` is left with what is still
   * unwritten; what got written joins published, restacked or failed.
   */
  async recordHeld(report: PublishReport, forMs: number): Promise<void> {
    const end = Date.now() + forMs;
    while (this.unrecorded.size > 0 && Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, Math.max(0, end - Date.now()))));
      report.unrecorded.length = 0;
      for (const [id, pending] of [...this.unrecorded]) await this.record(id, pending, report, []);
    }
  }

  /** Runs `tick` every `intervalMs` in this process without keeping it alive; returns a stop function. */
  start(intervalMs: number): () => void {
    const run = () =>
      void this.tick().catch((err: unknown) => this.log(`scheduler run failed: ${(err as Error).message}`));
    const timer = setInterval(run, intervalMs);
    timer.unref();
    setImmediate(run).unref();
    return () => clearInterval(timer);
  }
}
