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
