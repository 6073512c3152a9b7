/** Body text shaping: HTML to text, quoted text and signatures cut, the body limit. */
import { convert } from "html-to-text";

export function htmlToText(html: string): string {
  return convert(html, { wordwrap: false, selectors: [{ selector: "img", format: "skip" }] });
}

/** Drops quoted lines (and the "On ... wrote:" line before them) and everything after a "-- " line. */
export function cutQuotesAndSignature(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const sig = lines.findIndex((l) => l === "-- " || l === "--");
  const kept = sig >= 0 ? lines.slice(0, sig) : lines;
  const out: string[] = [];
  for (let i = 0; i < kept.length; i++) {
    const line = kept[i]!;
    if (line.startsWith(">")) continue;
    const next = kept.slice(i + 1).find((l) => l.trim() !== "");
    if (/wrote:\s*$/i.test(line) && next?.startsWith(">")) continue;
    out.push(line);
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd();
}

export function shapeBody(text: string, full: boolean, limit: number): { body: string; truncated: boolean } {
  const body = full ? text : cutQuotesAndSignature(text);
  if (full || body.length <= limit) return { body, truncated: false };
  return { body: body.slice(0, limit), truncated: true };
}
