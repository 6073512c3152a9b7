/** One line of the bench's report: a figure for the kit, the same for the baseline, and the verdict. */
export interface Row {
  figure: string;
  kit: string;
  sdk: string;
  /** kit / baseline, when the two figures compare as a ratio. */
  ratio?: number;
  /** What the figure must meet, in words; "-" when no target is set. */
  target: string;
  /** undefined when there is no target. */
  met?: boolean;
}

/** A row whose target is a bound on kit / baseline. */
export function ratioRow(
  figure: string,
  kit: number,
  sdk: number,
  fmt: (v: number) => string,
  max?: number,
): Row {
  const ratio = kit / sdk;
  return {
    figure,
    kit: fmt(kit),
    sdk: fmt(sdk),
    ratio,
    target: max === undefined ? "-" : `<= ${max.toFixed(2)}x`,
    ...(max === undefined ? {} : { met: ratio <= max }),
  };
}

export function printTable(title: string, rows: readonly Row[]): void {
  if (rows.length === 0) return;
  const cells = rows.map((r) => [
    r.figure,
    r.kit,
    r.sdk,
    r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}x`,
    r.target,
    r.met === undefined ? "" : r.met ? "met" : "NOT MET",
  ]);
  const head = ["figure", "kit", "SDK baseline", "ratio", "target", ""];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) =>
    c
      .map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  console.log(`\n${title}`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const c of cells) console.log(line(c));
}
