/**
 * Every ref encodeRef hands out is one decodeRef accepts back: a property test over random account
 * names and long folder names of every kind of UTF-16 content, up to the folder length refs promise.
 */
import { describe, expect, it } from "vitest";
import { decodeRef, encodeRef, MAX_REF_FOLDER_UNITS, MAX_REF_LENGTH } from "../src/refs.js";

/** A small seeded PRNG (mulberry32), so a failure names a seed that reproduces it. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** One piece of folder text: each pool stresses an encoding differently. */
const POOLS: Array<(r: Rand) => string> = [
  (r) => String.fromCharCode(pick(r, 0x20, 0x7e)), // ASCII, with " and \ that JSON escapes
  (r) => String.fromCharCode(pick(r, 0xa0, 0x7ff)), // 2 bytes in UTF-8
  (r) => String.fromCharCode(pick(r, 0x4e00, 0x9fff)), // CJK, 3 bytes in UTF-8
  (r) => String.fromCharCode(pick(r, 0xe000, 0xfffd)), // private use and specials
  (r) => String.fromCodePoint(pick(r, 0x1f300, 0x1faff)), // emoji: a surrogate pair
  (r) => String.fromCharCode(pick(r, 0xd800, 0xdfff)), // a lone surrogate, as a broken server may send
  (r) => String.fromCharCode(pick(r, 0x00, 0x1f)), // control characters: 6 bytes each in JSON
  (r) => ["\u2028", "\u202e", "\u2066", "/", "."][pick(r, 0, 4)]!,
];

function folderName(r: Rand, units: number): string {
  // Mostly one pool (the worst cases are uniform), sometimes a mix.
  const main = POOLS[pick(r, 0, POOLS.length - 1)]!;
  let s = "";
  while (s.length < units) {
    const piece = (r() < 0.8 ? main : POOLS[pick(r, 0, POOLS.length - 1)]!)(r);
    if (s.length + piece.length > units) s += "x";
    else s += piece;
  }
  return s;
}

const ACCOUNT_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
const accountName = (r: Rand) =>
  Array.from({ length: r() < 0.3 ? 64 : pick(r, 1, 64) }, () => ACCOUNT_CHARS[pick(r, 0, 63)]).join("");
const uid32 = (r: Rand) => (r() < 0.2 ? 0xffffffff : pick(r, 1, 0xffffffff));

describe("refs over long unicode folder names", () => {
  it("round-trips every ref it hands out, at most MAX_REF_LENGTH characters long", () => {
    // 500 is the longest folder name the daemon creates; more covers a namespace prefix and
    // folders other clients made.
    const lengths = [1, 100, 255, 499, 500, 506, 600, MAX_REF_FOLDER_UNITS];
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      const units =
        seed <= lengths.length * 40 ? lengths[seed % lengths.length]! : pick(r, 1, MAX_REF_FOLDER_UNITS);
      const m = {
        account: accountName(r),
        folder: folderName(r, units),
        uidValidity: uid32(r),
        uid: uid32(r),
      };
      const ref = encodeRef(m);
      expect(ref.length, `seed ${seed}`).toBeLessThanOrEqual(MAX_REF_LENGTH);
      expect(decodeRef(ref), `seed ${seed}`).toEqual(m);
      expect(encodeRef(decodeRef(ref)), `seed ${seed}`).toBe(ref);
    }
  });

  it("at 500 CJK characters and a 64-character account, the case that used to exceed 2048", () => {
    const m = { account: "a".repeat(64), folder: "漢".repeat(500), uidValidity: 0xffffffff, uid: 0xffffffff };
    const ref = encodeRef(m);
    expect(ref.length).toBeLessThanOrEqual(MAX_REF_LENGTH);
    expect(decodeRef(ref)).toEqual(m);
  });

  it("keeps the m1 form for refs that fit it, so refs already handed out stay the same", () => {
    expect(encodeRef({ account: "work", folder: "INBOX", uidValidity: 1, uid: 1 })).toBe(
      "m1.WyJ3b3JrIiwiSU5CT1giLDEsMV0",
    );
  });

  it("refuses, rather than hands out, a ref for a folder name too long for any form", () => {
    expect(() => encodeRef({ account: "work", folder: "漢".repeat(1100), uidValidity: 1, uid: 1 })).toThrow(
      expect.objectContaining({ reason: "UNSUPPORTED" }),
    );
  });

  it("refuses malformed packed refs", () => {
    const bytes = (b: number[]) => `m2.${Buffer.from(b).toString("base64url")}`;
    for (const bad of [
      "m2.",
      bytes([0, 0, 0, 0, 1, 0, 0, 0, 1, 4, 119]), // account length past the end
      bytes([0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 119]), // empty folder
      bytes([2, 0, 0, 0, 1, 0, 0, 0, 1, 1, 119, 65]), // unknown form
      bytes([1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 119, 65]), // odd UTF-16 length
      bytes([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 119, 65]), // UIDVALIDITY 0
      bytes([0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0xff, 65]), // account not UTF-8
      `m2.${"A".repeat(MAX_REF_LENGTH)}`,
    ]) {
      expect(() => decodeRef(bad), bad).toThrow(expect.objectContaining({ reason: "INVALID_ARGUMENT" }));
    }
  });
});
