/**
 * An attachment's name is the sender's, of any length (RFC 2231 continuations): sanitizeFilename
 * gives what it gave before on every name (a property against the earlier code as the model), in
 * time in proportion to the name, not its square (a name of 40,000 characters took 30 s).
 */
import path from "node:path";
import fc from "fast-check";
import { expect, it } from "vitest";
import { MAX_NAME_BYTES, sanitizeFilename } from "../src/files/save.js";

/** The earlier code's trimming and cutting, after the same first steps. */
function model(name: string): string {
  let s = name.normalize("NFC");
  s = s.replace(
    // biome-ignore lint/suspicious/noMisleadingCharacterClass: as save.ts's INVISIBLE
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]/gu,
    "",
  );
  s = s
    .split(/[/\\]+/)
    .filter((seg) => seg !== "" && seg !== "." && seg !== "..")
    .join("_");
  s = s.replace(/^[.\s]+/, "").replace(/[.\s]+$/, "");
  s = s.replace(/\s+/g, " ");
  if (!s) s = "attachment";
  if (Buffer.byteLength(s) > MAX_NAME_BYTES) {
    const ext = path.extname(s);
    const keepExt = ext.length > 1 && Buffer.byteLength(ext) <= 20 ? ext : "";
    let stem = s.slice(0, s.length - keepExt.length);
    while (Buffer.byteLength(stem + keepExt) > MAX_NAME_BYTES) stem = [...stem].slice(0, -1).join("");
    s = stem.replace(/[.\s]+$/, "") + keepExt;
  }
  return s;
}

it("gives what the earlier code gave, on any name of these characters (fast-check)", () => {
  const char = fc.constantFrom(".", " ", "\t", "/", "\\", "a", "é", "😀", "\u202e", "\u200b", "-", ".pdf");
  fc.assert(
    fc.property(fc.array(char, { maxLength: 260 }), (chars) => {
      const name = chars.join("");
      expect(sanitizeFilename(name)).toBe(model(name));
    }),
    { numRuns: 1000 },
  );
});

it("takes a hostile name of a million characters in time in proportion to it", () => {
  // (the test's deadline is the guard against the square, not a measurement)
  // Cut to 196 bytes, "a. . . … ." is all dots and spaces after the "a": trimmed, as before
  expect(sanitizeFilename(`a${". ".repeat(500_000)}b.pdf`)).toBe("a.pdf");
  expect(model(`a${". ".repeat(500)}b.pdf`)).toBe("a.pdf");
  expect(sanitizeFilename(`a${" .".repeat(500_000)}`)).toBe("a");
  expect(sanitizeFilename(`${". ".repeat(500_000)}x`)).toBe("x");
  expect(sanitizeFilename(`x${" ".repeat(500_000)}y${"\t".repeat(500_000)}z`)).toBe("x yz"); // (a tab is a control character: removed)
  expect(sanitizeFilename(`${"é".repeat(1_000_000)}.pdf`)).toBe(`${"é".repeat(98)}.pdf`);
}, 10_000);
