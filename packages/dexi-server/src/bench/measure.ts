/** Timing helpers shared by the benchmark's parts. */

/** The p-th percentile (nearest rank) of some durations. */
export function pct(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Runs `fn` n times one after another; the milliseconds of each run. */
export async function time(n: number, fn: (i: number) => unknown | Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

export const ms = (x: number) => `${x.toFixed(2)} ms`;
