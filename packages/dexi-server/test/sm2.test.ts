import { describe, expect, it } from "vitest";
import { AGAIN_DELAY_MS, type CardState, type Grade, schedule } from "../src/domain/sm2.js";

const DAY = 86_400_000;
const fresh: CardState = { intervalDays: 0, ease: 2.5, repetitions: 0 };

function run(grades: Grade[]): (CardState & { dueMs: number })[] {
  let card = fresh;
  let now = 0;
  const out = [];
  for (const g of grades) {
    const next = schedule(card, g, now);
    out.push(next);
    card = next;
    now = next.dueMs;
  }
  return out;
}

describe("SM-2 with the 1-4 grade mapping", () => {
  it("Good: 1 day, 6 days, then interval x ease", () => {
    const r = run([3, 3, 3, 3]);
    expect(r.map((c) => c.intervalDays)).toEqual([1, 6, 15, 38]);
    expect(r.every((c) => c.ease === 2.5)).toBe(true);
    expect(r.map((c) => c.repetitions)).toEqual([1, 2, 3, 4]);
  });

  it("Again resets repetitions, comes back in 10 minutes, keeps the ease", () => {
    const [, , again] = run([4, 4, 1]);
    expect(again).toMatchObject({ repetitions: 0, intervalDays: 0, ease: 2.7 });
    const s = schedule({ intervalDays: 20, ease: 2.1, repetitions: 5 }, 1, 1000);
    expect(s).toEqual({ intervalDays: 0, ease: 2.1, repetitions: 0, dueMs: 1000 + AGAIN_DELAY_MS });
    expect(AGAIN_DELAY_MS).toBe(10 * 60 * 1000);
  });

  it("Hard lowers the ease by 0.14, Easy raises it by 0.1, never below 1.3", () => {
    expect(schedule(fresh, 2, 0).ease).toBe(2.36);
    expect(schedule(fresh, 4, 0).ease).toBe(2.6);
    expect(schedule({ intervalDays: 10, ease: 1.35, repetitions: 3 }, 2, 0).ease).toBe(1.3);
    const easy = run([4, 4, 4]);
    expect(easy.map((c) => c.intervalDays)).toEqual([1, 6, 17]);
    expect(easy[2]!.dueMs).toBe((1 + 6 + 17) * DAY);
  });

  it("after Again the next pass starts over at 1 day", () => {
    const r = run([3, 3, 3, 1, 3]);
    expect(r[4]).toMatchObject({ intervalDays: 1, repetitions: 1 });
  });
});
