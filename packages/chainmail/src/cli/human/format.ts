/**
 * The shared formatting of the CLI's text output: aligned columns (wide characters counted as two),
 * `key: value` blocks, readable times and an error's one-line form.
 */

export interface WireLike {
  reason: string;
  message: string;
  hint?: string;
  /** Outside text (a server's reply), printed as plain text like the mail itself. */
  detail?: string;
}

export const errorLine = (e: WireLike) =>
  `${e.reason}: ${e.message}${e.hint ? ` (${e.hint})` : ""}${e.detail ? ` [${e.detail.replace(/\n/g, "; ")}]` : ""}`;

/** Columns a string takes in a terminal: wide (CJK, fullwidth) characters take two. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x20 || (c >= 0x7f && c < 0xa0) || (c >= 0x300 && c <= 0x36f) || c === 0x200b) continue;
    w += WIDE.some(([lo, hi]) => c >= lo && c <= hi) ? 2 : 1;
  }
  return w;
}

// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth W/F, the large blocks).
const WIDE: Array<[number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

/** One line of a cell: a newline or tab in outside text would break the columns. */
export const cell = (v: unknown): string =>
  v === null || v === undefined || v === "" ? "-" : String(v).replace(/[\t\r\n]+/g, " ");

/**
 * Rows as aligned columns under a header, each column as wide as its widest cell; the last
 * column is not padded (it holds free text such as a subject or a summary).
 */
export function columns(header: string[], rows: unknown[][]): string {
  const all = [header, ...rows.map((r) => r.map(cell))];
  const widths = header.map((_, i) => Math.max(...all.map((r) => displayWidth(r[i] ?? ""))));
  return all
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(widths[i]! - displayWidth(c))))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `key: value` lines with the values aligned; undefined values are left out. */
export function fields(pairs: Array<[string, unknown]>): string {
  const kept = pairs.filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...kept.map(([k]) => k.length));
  return kept.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cell(v)}`).join("\n");
}

/**
 * An RFC 3339 time as `2026-12-06 07:30:47 UTC`, in the local time zone when it is not UTC
 * (`2026-12-06 08:30:47 +01:00`); anything that is not a time is shown as it is.
 */
export function when(iso: string | null | undefined): string {
  if (!iso) return "-";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = new Date(t);
  const off = -d.getTimezoneOffset();
  const p = (n: number) => String(n).padStart(2, "0");
  const local = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  if (off === 0) return `${local} UTC`;
  return `${local} ${off < 0 ? "-" : "+"}${p(Math.floor(Math.abs(off) / 60))}:${p(Math.abs(off) % 60)}`;
}
