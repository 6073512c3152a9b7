import type { AgeUnit } from "./ast.js";

/** Start of a YYYY-MM-DD day in UTC, in ms. */
export function dayStartMs(date: string): number {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d);
}

/**
 * The instant `amount` units before `now`: days are 24 h, months and years are calendar steps
 * in UTC (the day of month is clamped, so 3 months before May 31 is Feb 28/29).
 */
export function ageCutoffMs(now: Date, amount: number, unit: AgeUnit): number {
  if (unit === "d") return now.getTime() - amount * 86_400_000;
  const months = unit === "m" ? amount : amount * 12;
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth() - months;
  const target = new Date(
    Date.UTC(y, m, 1, now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds(), now.getUTCMilliseconds()),
  );
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(now.getUTCDate(), lastDay));
  return target.getTime();
}
