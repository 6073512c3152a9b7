import type { Source } from "../store/index.js";

/** One thing to import, already parsed. `key` makes imports idempotent: a key seen before is skipped. */
export interface ImportItem {
  key: string;
  /** A key an older dexi imported the same item under; a note found under it takes `key`. */
  legacyKey?: string;
  title: string;
  body: string;
  source: Source;
  sourceUrl: string | null;
  folder: string | null;
  createdMs: number | null;
  record?:
    | { kind: "bookmark"; url: string; addedMs: number | null }
    | {
        kind: "email";
        messageId: string | null;
        from: string | null;
        to: string | null;
        sentMs: number | null;
      }
    | { kind: "feed"; feedId: number | null; guid: string; url: string | null; publishedMs: number | null };
}

/** Parses a date string or number of seconds/ms; null when it is not a real date. */
export function parseDate(value: unknown): number | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === "number") return value < 1e11 ? value * 1000 : value;
  if (typeof value !== "string" || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) return parseDate(Number(value.trim()));
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Adds `#tag` for each given tag the body does not already mention, on a last line. */
export function withTags(body: string, tags: readonly string[]): string {
  const missing = tags
    .map((t) => t.trim().replace(/^#/, "").replace(/\s+/g, "-"))
    // redos-ok: a tag escaped to a literal after "#", at a line start or after white space
    .filter((t) => t !== "" && !new RegExp(`(^|\\s)#${escapeRe(t)}(?![\\p{L}\\p{N}_-])`, "iu").test(body))
    .map((t) => `#${t}`);
  if (missing.length === 0) return body;
  return body === "" ? missing.join(" ") : `${body}\n\n${missing.join(" ")}`;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
