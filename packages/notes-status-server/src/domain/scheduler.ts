import { randomUUID } from "node:crypto";
import { PublishError, type Publisher } from "./publishers/types.js";
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
   */
  async publishDue(now: Date = this.clock()): Promise<PublishReport> {
    const report: PublishReport = { published: [], restacked: [], failed: [], gaveUp: [] };
    const nowIso = iso(now.getTime());
    // The lease runs from the claim, not from the start of the run: a run of 100 notes to a slow
    // receiver (up to 47 s a note with the webhook's retries) lasts far longer than the lease, and a
    // lease dated from its start would have expired before its later notes were even sent, leaving
    // them to another process while this one sends them too.
    const until = () => iso(Math.max(now.getTime(), this.clock().getTime()) + this.leaseMs);
    for (const listed of await this.repo.duePosts(nowIso, this.batch)) {
      if (!(await this.repo.claim(listed.id, "post", nowIso, until()))) continue;
      const note = (await this.repo.get(listed.id)) ?? listed; // what goes out is the note as it is now
      let retryAt: string | undefined;
      try {
        const outgoing: NoteDetail = { ...note, publishedAt: nowIso };
        const outcome = await this.publisher.publish({ kind: "post", at: nowIso, note: outgoing });
        await this.repo.transaction(async () => {
          const current = await this.repo.get(note.id);
          if (!current) return; // deleted while it went out: nothing left to record
          const hours = current.autoRestackAfterHours;
          await this.repo.update({
            ...current,
            status: "published",
            publishedAt: nowIso,
            restackDueAt: hours === null ? null : iso(now.getTime() + hours * HOUR_MS),
            restackedAt: null,
            attempts: current.attempts + (outcome?.attempts ?? 1),
            lastError: null,
            lastAttemptAt: nowIso,
          });
        });
        report.published.push(note.id);
      } catch (err) {
        retryAt = await this.recordFailure(note.id, "post", err, now, report);
        report.failed.push({ id: note.id, kind: "post", error: (err as Error).message });
      } finally {
        if (retryAt) await this.repo.defer(note.id, retryAt);
        else await this.repo.release(note.id);
      }
    }
    for (const listed of await this.repo.dueRestacks(nowIso, this.batch)) {
      if (!(await this.repo.claim(listed.id, "restack", nowIso, until()))) continue;
      const note = (await this.repo.get(listed.id)) ?? listed;
      let retryAt: string | undefined;
      try {
        await this.publisher.publish({ kind: "restack", at: nowIso, note });
        await this.repo.transaction(async () => {
          const current = await this.repo.get(note.id);
          if (current)
            await this.repo.update({
              ...current,
              restackedAt: nowIso,
              lastError: null,
              lastAttemptAt: nowIso,
            });
        });
        report.restacked.push(note.id);
      } catch (err) {
        retryAt = await this.recordFailure(note.id, "restack", err, now, report);
        report.failed.push({ id: note.id, kind: "restack", error: (err as Error).message });
      } finally {
        if (retryAt) await this.repo.defer(note.id, retryAt);
        else await this.repo.release(note.id);
      }
    }
    for (const f of report.failed) {
      const end = report.gaveUp.includes(f.id)
        ? `; gave up after ${this.giveUpAfter} failed runs${f.kind === "post" ? ", back to draft" : ""}`
        : "";
      this.log(`publishing ${f.kind} of note ${f.id} failed: ${f.error}${end}`);
    }
    return report;
  }

  /**
   * Records a failed run; returns when the note may be tried again, or undefined when it is not to be
   * tried again: deleted meanwhile, or at the limit of failed runs, when a post goes back to draft (off
   * the queue) and a restack is dropped (restackDueAt null). Either keeps attempts and lastError.
   */
  private async recordFailure(
    id: string,
    kind: "post" | "restack",
    err: unknown,
    now: Date,
    report: PublishReport,
  ): Promise<string | undefined> {
    const tries = err instanceof PublishError ? err.attempts : 1;
    const nowIso = iso(now.getTime());
    return this.repo.transaction(async () => {
      const current = await this.repo.get(id);
      if (!current) return undefined;
      const failed: NoteDetail = {
        ...current,
        attempts: current.attempts + tries,
        lastError: (err as Error).message || String(err),
        lastAttemptAt: nowIso,
      };
      await this.repo.update(failed);
      const runs = await this.repo.addFailedRun(id);
      // The owner may have moved the note while it was out (unscheduled it): only a delivery that is
      // still pending is given up on.
      const pending =
        kind === "post"
          ? current.status === "scheduled"
          : current.status === "published" && current.restackedAt === null;
      if (runs < this.giveUpAfter || !pending) return iso(now.getTime() + retryDelayMs(failed.attempts));
      await this.repo.update(
        kind === "post"
          ? { ...failed, status: "draft", scheduledAt: null }
          : { ...failed, restackDueAt: null },
      );
      report.gaveUp.push(id);
      return undefined;
    });
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
