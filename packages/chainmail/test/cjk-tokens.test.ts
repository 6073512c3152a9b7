// The cache's CJK tokens (src/query/cjk.ts) on a real FTS5 table: a run of CJK text indexed through
// insertFts is found by every run of characters inside it, as a substring search finds it, and
// Latin-script text is indexed and queried exactly as before.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertFts } from "../src/cache/fts.js";
import { type CacheDb, openCache } from "../src/cache/index.js";
import { cjkSpaced, hasCjk } from "../src/query/cjk.js";
import { ftsString } from "../src/query/index.js";

let db: CacheDb;
beforeAll(() => {
  db = openCache(":memory:");
});
afterAll(() => db.close());

const CJK = [..."会議定例資料明日のをです。、お願いプロジェクトー预算會议회의는々"];
const LATIN = [..."abcQ3 -.,é"];
const cjkChar = fc.constantFrom(...CJK.filter((c) => hasCjk(c)));
const anyChar = fc.constantFrom(...CJK, ...LATIN);

/** Whether `term` matches the message `text` in a fresh FTS row (the table is emptied first). */
function matches(text: string, term: string): boolean {
  db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
  insertFts(db, 1, { subject: "", from: "", to: "", cc: "", bcc: "", body: text });
  return (
    db
      .prepare("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?")
      .pluck()
      .get(ftsString(term)) === 1
  );
}

describe("CJK tokens", () => {
  it("every run of CJK characters inside a text finds it", () => {
    fc.assert(
      fc.property(fc.array(anyChar, { minLength: 1, maxLength: 40 }), fc.nat(), fc.nat(), (chars, a, b) => {
        const text = chars.join("");
        // A run of CJK characters of the text, as a user would copy a word out of it
        const runs = text.match(/[^\sa-zA-Z0-9.,\-é。、]+/gu) ?? [];
        const run = runs[a % Math.max(1, runs.length)];
        if (!run || !hasCjk(run)) return;
        const cs = [...run];
        const from = b % cs.length;
        const term = cs.slice(from, from + 1 + (b % 4)).join("");
        expect(matches(text, term), `${term} in ${text}`).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("a term with a CJK character the text lacks does not find it", () => {
    fc.assert(
      fc.property(
        fc.array(anyChar, { maxLength: 30 }),
        cjkChar,
        fc.array(cjkChar, { maxLength: 3 }),
        (chars, c, more) => {
          const text = chars.join("");
          fc.pre(!text.includes(c));
          expect(matches(text, [c, ...more].join(""))).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("leaves text without CJK characters as it is, on both sides", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (s) => {
        fc.pre(!hasCjk(s));
        expect(cjkSpaced(s)).toBe(s);
        expect(ftsString(s)).toBe(`"${s.replace(/"/g, '""')}"`);
      }),
    );
  });

  it("mixed terms: a whole Latin word joined to CJK characters", () => {
    expect(matches("資料はQ3会議のものです", "Q3会議")).toBe(true);
    expect(matches("資料はQ3会議のものです", "Q会議")).toBe(false);
    expect(matches("資料はXQ3会議のものです", "Q3会議")).toBe(false);
    expect(matches("定例会議です", "会議")).toBe(true);
    expect(matches("定例会議です", "会")).toBe(true);
    expect(matches("定例会議です", "議会")).toBe(false);
  });
});

describe("boundary tokens (separators touching CJK characters)", () => {
  /** Every BMP character that is not a letter, digit, mark or private-use: what cjkSpaced calls a separator. */
  const SEPARATORS = Array.from({ length: 0xffff }, (_, cp) => cp)
    .filter((cp) => cp < 0xd800 || cp > 0xdfff)
    .map((cp) => String.fromCodePoint(cp))
    .filter((c) => /[^\p{L}\p{N}\p{M}\p{Co}]/u.test(c));
  const sep = fc.constantFrom(...SEPARATORS, "😀", "\u{1F4E7}");
  const run = fc.array(sep, { minLength: 1, maxLength: 40 }).map((cs) => cs.join(""));
  const terms = (table: "messages_fts" | "subjects_fts", id: number) => {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_${table} USING fts5vocab(main, ${table}, instance)`);
    return db
      .prepare(`SELECT term FROM temp.v_${table} WHERE doc = ? ORDER BY col, offset`)
      .pluck()
      .all(id) as string[];
  };

  it("a run of separators between CJK characters is one token in both word indexes, as it is spelled", () => {
    fc.assert(
      fc.property(run, run, (r, other) => {
        const text = `会${r}議`;
        db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
        db.exec("DELETE FROM subjects_fts");
        insertFts(db, 1, { subject: text, from: "", to: "", cc: "", bcc: "", body: "" });
        db.prepare("INSERT INTO subjects_fts (rowid, subject) VALUES (1, ?)").run(cjkSpaced(text));
        for (const table of ["messages_fts", "subjects_fts"] as const) {
          const t = terms(table, 1);
          // unicode61 with remove_diacritics 2 (and porter) keeps the token whole and unchanged
          expect(t.length, JSON.stringify(r)).toBe(3);
          expect([t[0], t[2]]).toEqual(["会", "議"]);
          expect(cjkSpaced(text)).toContain(` ${t[1]} `);
        }
        // the same run finds it; any other run of separators, or none, does not
        expect(matches(text, text)).toBe(true);
        expect(matches(text, "会議")).toBe(false);
        if (other !== r && [...r].length <= 33 && [...other].length <= 33)
          expect(matches(text, `会${other}議`), JSON.stringify([r, other])).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("separators touching one CJK character make a boundary; between Latin words, at the ends, they do not", () => {
    expect(matches("定例。会議", "例会")).toBe(false);
    expect(matches("定例。会議", "定例。会議")).toBe(true);
    expect(matches("定例。会議", "定例、会議")).toBe(false);
    expect(matches("定例 会議", "定例 会議")).toBe(true);
    expect(matches("定例\n会議", "定例 会議")).toBe(false);
    expect(matches("会議 Q3", "会議Q3")).toBe(false);
    expect(matches("会議Q3", "会議 Q3")).toBe(false);
    expect(matches("会議 Q3", "会議 Q3")).toBe(true);
    expect(matches("회의 록", "회의록")).toBe(false);
    expect(matches("회의록", "회의 록")).toBe(false);
    // a term's leading and trailing separators have no neighbour in it: it finds the characters
    // after or before any separator, or none
    expect(matches("会議です", "「会議")).toBe(true);
    expect(matches("（会議）", "会議」")).toBe(true);
    // between two Latin words the separators are dropped as before, in a text with CJK as without
    expect(matches("memo, zeta 会議", "memo zeta")).toBe(true);
    expect(cjkSpaced("memo, zeta 会")).toBe(`memo, zeta ${String.fromCodePoint(0xf0020)}  会 `);
  });
});
