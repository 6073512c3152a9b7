import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareStrings, GENERATED_MARKER } from "./model.js";

export interface CheckReport {
  /** Files whose content differs from what the generator would write now. */
  stale: string[];
  missing: string[];
  /** Pages this generator wrote earlier that no tool needs any more (a tool was removed). */
  extra: string[];
}

export interface WriteReport {
  written: string[];
  unchanged: string[];
  removed: string[];
}

/**
 * Generated pages left behind by removed tools: `.mdx` files in the folder that carry the generator's
 * marker. Hand-written pages (no marker) are never touched or reported.
 */
function leftovers(dir: string, files: ReadonlyMap<string, string>): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".mdx") && !files.has(name))
    .filter((name) => {
      const path = join(dir, name);
      return statSync(path).isFile() && readFileSync(path, "utf8").includes(GENERATED_MARKER);
    })
    .sort(compareStrings);
}

/** Compares the folder with the files the generator would write; writes nothing. */
export function checkOutput(dir: string, files: ReadonlyMap<string, string>): CheckReport {
  const report: CheckReport = { stale: [], missing: [], extra: leftovers(dir, files) };
  for (const [name, content] of [...files].sort(([a], [b]) => compareStrings(a, b))) {
    const path = join(dir, name);
    if (!existsSync(path)) report.missing.push(name);
    else if (readFileSync(path, "utf8") !== content) report.stale.push(name);
  }
  return report;
}

export function isFresh(report: CheckReport): boolean {
  return report.stale.length + report.missing.length + report.extra.length === 0;
}

/** Writes the files that changed (leaving unchanged ones and their mtimes alone) and removes leftovers. */
export function writeOutput(dir: string, files: ReadonlyMap<string, string>): WriteReport {
  mkdirSync(dir, { recursive: true });
  const report: WriteReport = { written: [], unchanged: [], removed: leftovers(dir, files) };
  for (const name of report.removed) rmSync(join(dir, name));
  for (const [name, content] of [...files].sort(([a], [b]) => compareStrings(a, b))) {
    const path = join(dir, name);
    if (existsSync(path) && readFileSync(path, "utf8") === content) {
      report.unchanged.push(name);
      continue;
    }
    writeFileSync(path, content);
    report.written.push(name);
  }
  return report;
}
