import { readFileSync } from "node:fs";

/** The p-th percentile (nearest rank) of a list of numbers. */
export function pct(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] ?? Number.NaN;
}

/** A process's resident set size in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/**
 * CPU time a process has used (user + system), in ms, from /proc/<pid>/stat. Clock ticks are
 * 100 a second on every Linux this bench runs on (USER_HZ is fixed at 100 for x86 and arm64).
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may contain spaces; the fields after its closing paren are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
export const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
