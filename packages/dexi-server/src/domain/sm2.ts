/**
 * SM-2 spaced repetition with Dexi's four grades (1 Again, 2 Hard, 3 Good, 4 Easy) mapped onto SM-2's
 * 0-5 quality scale:
 *
 * | grade | meaning | SM-2 q | effect |
 * | 1 | Again | 1 | repetitions reset to 0, due again in 10 minutes, ease unchanged |
 * | 2 | Hard  | 3 | passes: next interval, ease - 0.14 |
 * | 3 | Good  | 4 | passes: next interval, ease unchanged |
 * | 4 | Easy  | 5 | passes: next interval, ease + 0.10 |
 *
 * A pass's interval is 1 day after the first success, 6 days after the second, then the previous
 * interval times the ease, rounded to whole days. Ease starts at 2.5 and never drops below 1.3:
 * EF' = EF + (0.1 - (5 - q) * (0.08 + (5 - q) * 0.02)).
 */

/** The four grades: 1 Again, 2 Hard, 3 Good, 4 Easy. */
export const GRADES = [1, 2, 3, 4] as const;
export type Grade = (typeof GRADES)[number];
export const MIN_GRADE: Grade = 1;
export const MAX_GRADE: Grade = 4;

export interface CardState {
  intervalDays: number;
  ease: number;
  repetitions: number;
}

export interface Scheduled extends CardState {
  dueMs: number;
}

export const AGAIN_DELAY_MS = 10 * 60 * 1000;
export const INITIAL_EASE = 2.5;
export const MIN_EASE = 1.3;
const DAY_MS = 86_400_000;

export const GRADE_TO_QUALITY: Readonly<Record<Grade, number>> = { 1: 1, 2: 3, 3: 4, 4: 5 };

export function schedule(card: CardState, grade: Grade, nowMs: number): Scheduled {
  const q = GRADE_TO_QUALITY[grade];
  if (q < 3) {
    return { intervalDays: 0, ease: card.ease, repetitions: 0, dueMs: nowMs + AGAIN_DELAY_MS };
  }
  const ease = Math.max(MIN_EASE, round2(card.ease + (0.1 - (5 - q) * (0.08 + (5 - q) * 0.02))));
  const repetitions = card.repetitions + 1;
  const intervalDays =
    repetitions === 1 ? 1 : repetitions === 2 ? 6 : Math.max(1, Math.round(card.intervalDays * ease));
  return { intervalDays, ease, repetitions, dueMs: nowMs + intervalDays * DAY_MS };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
