import unhomoglyph from "unhomoglyph";
import { DexiError } from "./errors.js";

/**
 * User and team names. A name is kept trimmed and in NFC, so " ann" and a decomposed "José" name the
 * users "ann" and "José"; the stores compare names case-insensitively in ASCII only (SQLite's NOCASE).
 * A team-mate reads a shared note's `owner` by its name, so a new name that would look like an existing
 * one (other case beyond ASCII, another Unicode form, look-alike letters or digits) is refused
 * rather than made a second account: "аnn" with a Cyrillic а is not a way to pass for ann.
 */

export type NameKind = "user" | "team";

/** A name as kept and looked up: NFC, trimmed. */
export function normalName(text: string): string {
  return text.normalize("NFC").trim();
}

/** A control character (a tab or newline would break `dexi users`) or an invisible one (U+200B, U+202E). */
const HIDDEN = /[\p{Cc}\p{Cf}]/u;

/** A name as kept, or INVALID_ARGUMENT: never empty, never holding a control or invisible character. */
export function checkName(kind: NameKind, text: string): string {
  const name = normalName(text);
  if (name === "") throw new DexiError("INVALID_ARGUMENT", `a ${kind} needs a name`);
  const hidden = HIDDEN.exec(name)?.[0];
  if (hidden !== undefined) {
    const code = hidden.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    throw new DexiError(
      "INVALID_ARGUMENT",
      `a ${kind} name cannot hold a control or invisible character (U+${code})`,
    );
  }
  return name;
}

/**
 * What a name looks like: Unicode's confusable skeleton (confusables.txt, through unhomoglyph) of its
 * compatibility form, taken again after lower-casing, so "аnn" (Cyrillic а), "ANN", "rn" and "m",
 * "l", "I" and "1", "0" and "o" each share one.
 */
export function nameSkeleton(name: string): string {
  return unhomoglyph(unhomoglyph(normalName(name).normalize("NFKC")).toLowerCase()).normalize("NFC");
}

/** The stores' own comparison of names (SQLite's NOCASE, dexi_nocase on PostgreSQL): ASCII case only. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * Refuses a new name that looks like one of `existing`. A name the store takes for the same one is
 * not refused: the caller's lookup missed it only because another call created it meanwhile (two
 * first requests of one `--user` at once), and the store's own insert-or-find answers it.
 */
export function refuseLookalike(kind: NameKind, name: string, existing: readonly string[]): void {
  const skeleton = nameSkeleton(name);
  const same = asciiLower(name);
  const twin = existing.find((e) => asciiLower(e) !== same && nameSkeleton(e) === skeleton);
  if (twin !== undefined)
    throw new DexiError("INVALID_ARGUMENT", `${kind} "${name}" looks like the existing ${kind} "${twin}"`);
}
