/**
 * Search finds what people write: Chinese, Japanese and Korean words inside longer runs, 1-character
 * terms and mixed Latin+CJK terms are found from the cache (each CJK character is its own token,
 * src/query/cjk.ts) and answer with the same rows as the server's SEARCH; accented Latin text is
 * folded as the query docs state for each source (src/query/README.md, "Accents").
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchResult } from "../src/service/search/index.js";
import { type MessageSpec, buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const start = Date.UTC(2026, 2, 1);
const spec = (n: number, subject: string, text: string, from = "Carol <carol@example.com>"): MessageSpec => ({
  from,
  to: ["alice@example.com"],
  subject,
  text,
  date: new Date(start + n * 3_600_000),
  messageId: `<cjk-${n}@example.com>`,
});
const MESSAGES: MessageSpec[] = [
  spec(1, "明日の定例会議", "明日の定例会議です。Q3会議の資料を添付します。よろしくお願いします。"),
  spec(2, "本周例会", "各位好，明天下午三点召开例会，请准时参加。预算报告见附件。"),
  spec(3, "季度會議", "下週三召開季度會議，請準備簡報。"),
  spec(4, "プロジェクト進捗", "プロジェクトの進捗を共有します。来週の会議で話しましょう。"),
  spec(5, "회의 안내", "내일 회의는 오후 3시입니다. 참석 부탁드립니다."),
  spec(6, "Grüße aus München", "Die Straße vor dem Büro ist morgen gesperrt. Schöne Grüße"),
  spec(7, "Le café est prêt", "Rendez-vous au café à côté de l'église, à bientôt."),
  spec(8, "Cafe menu", "The cafe on the corner has a new menu for the Munchen trip."),
  spec(
    9,
    "定例 notes",
    "Latin and 定例 side by side; also Q3 会議 with a space.",
    "田中 太郎 <tanaka@example.jp>",
  ),
  // Separators between CJK characters (src/query/cjk.ts: a boundary token spelling the run out)
  spec(10, "定例。会議", "会議Q3の資料です"),
  spec(11, "定例、会議", "会議 Q3 の予定"),
  spec(12, "定例 会議", "「会議」（定例）！？よろしく"),
  spec(13, "議事録", "定例\n会議の議事録"),
  spec(14, "회의 록", "내용 없음"),
  spec(15, "회의록", "공유합니다"),
  spec(16, "ラーメン", "時々、人々とラーメンを食べます。"),
  spec(17, "계획", "がんばります"),
];

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    MESSAGES.map((m) => ({ raw: buildMessage(m), flags: [] })),
  );
  const { accounts } = await env.client.cacheSync({ accounts: ["work"] });
  expect(accounts.map((a) => [a.account, a.ok])).toEqual([["work", true]]);
});
afterAll(async () => {
  await env?.stop();
});

const ids = (r: SearchResult) => r.rows.map((x) => x.message_id ?? "").sort();
const both = async (query: string) => {
  const cache = await env.client.search({ query, accounts: ["work"], limit: 50, source: "cache" });
  const server = await env.client.search({ query, accounts: ["work"], limit: 50, source: "server" });
  expect(cache.source, query).toBe("cache");
  expect(server.source, query).toBe("server");
  expect(cache.partial, query).toEqual([]);
  expect(server.partial, query).toEqual([]);
  return { cache: ids(cache), server: ids(server), cacheCount: cache.count, serverCount: server.count };
};
/** The messages whose subject, sender or body holds `term` as it is written (what a substring search finds). */
const containing = (term: string) =>
  MESSAGES.filter((m) => [m.subject, m.from, m.text ?? ""].some((t) => t.includes(term)))
    .map((m) => m.messageId)
    .sort();

describe("CJK terms", () => {
  const TERMS = [
    "会議", // Japanese, inside the runs 明日の定例会議です and Q3会議の資料を...
    "定例", // at the start of a run, and alone between Latin words
    "資料", // a Japanese word inside a longer run
    "お願い", // hiragana inside a run
    "プロジェクト", // katakana
    "会", // one character
    "例会", // Chinese (simplified) inside a run
    "預算", // traditional form of 预算: no message has it
    "预算",
    "會議", // traditional Chinese
    "Q3会議", // mixed Latin and CJK (see below for the same words with a space between)
    "회의", // Korean, with a particle attached (회의는)
    "田中", // a sender's name
  ];
  for (const term of TERMS) {
    it(`"${term}" finds the same messages from the cache and the server`, async () => {
      const r = await both(term);
      expect(r.server, term).toEqual(containing(term));
      expect(r.cache, term).toEqual(r.server);
      expect(r.cacheCount, term).toBe(r.serverCount);
    });
  }

  // A CJK term does not match across white space or punctuation in either source; a quoted phrase
  // matches its own separators exactly (src/query/cjk.ts: a boundary token in the separators' place)
  const ACROSS: [string, string, string[]][] = [
    // [query, the text it is a substring of, the messages it finds]
    [
      "例会",
      "定例会議 and 本周例会 (not 定例。会議 and the like)",
      ["<cjk-1@example.com>", "<cjk-2@example.com>"],
    ],
    ["定例会議", "明日の定例会議", ["<cjk-1@example.com>"]],
    ['"定例。会議"', "the subject 定例。会議", ["<cjk-10@example.com>"]],
    ['"定例、会議"', "the subject 定例、会議", ["<cjk-11@example.com>"]],
    ['"定例 会議"', "the subject 定例 会議, not the body 定例\n会議", ["<cjk-12@example.com>"]],
    ["会議Q3", "会議Q3 (not 会議 Q3)", ["<cjk-10@example.com>"]],
    ['"会議 Q3"', "会議 Q3 (not 会議Q3)", ["<cjk-11@example.com>"]],
    ["Q3会議", "Q3会議 (not Q3 会議)", ["<cjk-1@example.com>"]],
    ['"Q3 会議"', "Q3 会議", ["<cjk-9@example.com>"]],
    ['"会議」（定例"', "「会議」（定例）", ["<cjk-12@example.com>"]],
    ['"会議」定例"', "nothing: the separators differ", []],
    ["회의록", "회의록 (not 회의 록)", ["<cjk-15@example.com>"]],
    ['"회의 록"', "회의 록", ["<cjk-14@example.com>"]],
    ["의록", "회의록 (not 회의 록)", ["<cjk-15@example.com>"]],
    ["ラーメン", "ラーメン, with the long-vowel mark ー", ["<cjk-16@example.com>"]],
    ["ー", "the long-vowel mark alone", ["<cjk-16@example.com>"]],
    ["時々", "時々", ["<cjk-16@example.com>"]],
    ["々と", "人々と", ["<cjk-16@example.com>"]],
    ['"々、人"', "時々、人々", ["<cjk-16@example.com>"]],
    ["々人", "nothing: 、 lies between", []],
  ];
  for (const [query, where, expected] of ACROSS) {
    it(`${query} finds ${where} from both sources`, async () => {
      const r = await both(query);
      expect(r.server, query).toEqual(expected);
      expect(r.cache, query).toEqual(r.server);
      expect(r.cacheCount, query).toBe(r.serverCount);
    });
  }

  it("Dovecot compares decomposed text: a term's last syllable or kana also finds one that starts with it", async () => {
    // 획 is 회 and a final consonant, が is か and the voicing mark: the server's substring match
    // finds them as `cafe` finds `café`; the cache's tokens are whole characters (src/query/README.md)
    for (const [term, found] of [
      ["회", "<cjk-17@example.com>"],
      ["か", "<cjk-17@example.com>"],
      ["계회", "<cjk-17@example.com>"],
    ] as const) {
      const r = await both(term);
      expect(r.server, term).toContain(found);
      expect(r.cache, term).not.toContain(found);
      expect(r.server.filter((id) => id !== found)).toEqual(r.cache);
    }
    // one that is not the term's last character is compared whole in both
    for (const term of ["회획", "かん", "획"]) {
      const r = await both(term);
      expect(r.cache, term).toEqual(r.server);
    }
  });

  it("a term's leading and trailing punctuation: the server wants it, the cache ignores it", async () => {
    // (a term's edge has no neighbour in it to say whether it is a whole run: src/query/README.md)
    const r = await both('"「会議"');
    expect(r.server).toEqual(["<cjk-12@example.com>"]);
    expect(r.cache).toEqual((await both("会議")).server);
  });

  it("two CJK and Latin terms, and subject: phrases with separators, match the same rows", async () => {
    for (const query of ["会議 Q3", 'subject:"定例 会議"', "subject:定例、会議", "subject:例会"]) {
      const r = await both(query);
      expect(r.server, query).toEqual(r.cache);
    }
    expect((await both("会議 Q3")).cache).toEqual(
      ["<cjk-1@example.com>", "<cjk-9@example.com>", "<cjk-10@example.com>", "<cjk-11@example.com>"].sort(),
    );
    expect((await both('subject:"定例 会議"')).cache).toEqual(["<cjk-12@example.com>"]);
    expect((await both("subject:例会")).cache).toEqual(["<cjk-1@example.com>", "<cjk-2@example.com>"]);
  });

  it("a CJK phrase, a field and a negation compile the same way", async () => {
    for (const query of ['"定例会議"', "subject:会議", "from:田中", "会議 -資料", "定例 OR 회의"]) {
      const r = await both(query);
      expect(r.cache.length, query).toBeGreaterThan(0);
      expect(r.server, query).toEqual(r.cache);
    }
    expect((await both("subject:会議")).cache).toEqual(
      ["1", "10", "11", "12"].map((n) => `<cjk-${n}@example.com>`).sort(),
    );
    expect((await both("会議 -資料")).cache).toEqual(
      ["4", "9", "11", "12", "13"].map((n) => `<cjk-${n}@example.com>`).sort(),
    );
  });
});

describe("accents", () => {
  const CAFE = ["<cjk-7@example.com>", "<cjk-8@example.com>"]; // café, cafe
  const MUNICH = ["<cjk-6@example.com>", "<cjk-8@example.com>"]; // München, Munchen

  it("the cache folds accents and case both ways", async () => {
    for (const q of ["café", "cafe", "CAFÉ"]) expect((await both(q)).cache, q).toEqual(CAFE);
    for (const q of ["München", "Munchen", "munchen"]) expect((await both(q)).cache, q).toEqual(MUNICH);
    expect((await both("eglise")).cache).toEqual(["<cjk-7@example.com>"]);
    // ß is a letter of its own, not "ss", in both sources
    expect((await both("Strasse")).cache).toEqual([]);
    expect((await both("Straße")).cache).toEqual(["<cjk-6@example.com>"]);
  });

  it("Dovecot's SEARCH folds case but not accents: a substring of the decomposed text", async () => {
    // The accented term finds only the accented text, in any case
    expect((await both("café")).server).toEqual(["<cjk-7@example.com>"]);
    expect((await both("CAFÉ")).server).toEqual(["<cjk-7@example.com>"]);
    expect((await both("München")).server).toEqual(["<cjk-6@example.com>"]);
    // The plain term finds only the plain text, except where the accent is on the term's last
    // letter: Dovecot compares decomposed text (é is e + U+0301), so "cafe" is a prefix of "café"
    expect((await both("Munchen")).server).toEqual(["<cjk-8@example.com>"]);
    expect((await both("eglise")).server).toEqual([]);
    expect((await both("cafe")).server).toEqual(CAFE);
    expect((await both("Strasse")).server).toEqual([]);
    expect((await both("Straße")).server).toEqual(["<cjk-6@example.com>"]);
  });
});

/*
 * Property: mixtures of CJK characters, Latin words, punctuation and white space as subjects and
 * bodies, and query terms cut out of them (and random CJK terms), answer the same rows from the
 * cache and from Dovecot. Each run appends its messages to a folder of its own and searches `in:` it.
 * The generator leaves out what the design does not match, for the reasons written beside each
 * (src/query/README.md states them):
 * - a term is cut at piece boundaries only, never inside a Latin word (the server matches any
 *   substring of a Latin word, `em` in `memo`; the cache matches whole words, CJK or not) nor with a
 *   separator at its start or end (the cache ignores a term's leading and trailing separators);
 * - two Latin words are always set apart by one space (between Latin words the cache keeps only the
 *   words, as it did before CJK: `"memo zeta"` also finds `memo, zeta`);
 * - no two characters where one decomposes to the start of the other (か and が, 회 and 획): Dovecot
 *   compares decomposed text, so `회` finds `획` there, as `cafe` finds `café`;
 * - no line break in a subject (a header would be folded).
 */
describe("CJK, Latin, punctuation and white space mixed (fast-check)", () => {
  const CJK = [..."会議定例資料明日のをですお願いプロジェクトー々人時预算會회의록안내"];
  const LATIN = ["q3", "memo", "Zeta", "x9"];
  const SEPS = [
    " ",
    "  ",
    "。",
    "、",
    "！",
    "？",
    "「",
    "」",
    "（",
    "）",
    "・",
    ",",
    ".",
    "-",
    "\u3000",
    "\n",
  ];
  type Piece = { kind: "cjk" | "latin" | "sep"; text: string };
  const piece = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...CJK).map((text): Piece => ({ kind: "cjk", text })) },
    { weight: 1, arbitrary: fc.constantFrom(...LATIN).map((text): Piece => ({ kind: "latin", text })) },
    { weight: 3, arbitrary: fc.constantFrom(...SEPS).map((text): Piece => ({ kind: "sep", text })) },
  );
  /** Adjacent separators merged into one run; Latin words set apart by exactly one space. */
  const normalize = (ps: Piece[], lineBreaks: boolean): Piece[] => {
    const out: Piece[] = [];
    for (const p0 of ps) {
      const p = lineBreaks || p0.text !== "\n" ? p0 : { kind: "sep" as const, text: " " };
      const last = out[out.length - 1];
      if (p.kind === "sep" && last?.kind === "sep") last.text += p.text;
      else if (p.kind === "latin" && last?.kind === "latin") out.push({ kind: "sep", text: " " }, p);
      else if (p.kind === "latin" && last?.kind === "sep" && out[out.length - 2]?.kind === "latin") {
        last.text = " ";
        out.push(p);
      } else out.push({ ...p });
    }
    return out;
  };
  const text = (lineBreaks: boolean) =>
    fc.array(piece, { minLength: 1, maxLength: 16 }).map((ps) => normalize(ps, lineBreaks));
  /**
   * A term cut out of `ps` at piece boundaries, from a non-separator piece to one, or null; with
   * `joined` its separators left out (`定例、会議` → `定例会議`: the server does not find it there).
   */
  const cut = (ps: Piece[], a: number, n: number, joined = false): string | null => {
    const starts = ps.flatMap((p, i) => (p.kind === "sep" ? [] : [i]));
    if (starts.length === 0) return null;
    const from = starts[a % starts.length] as number;
    const ends = starts.filter((i) => i >= from);
    const to = ends[n % Math.min(ends.length, 4)] as number;
    return ps
      .slice(from, to + 1)
      .filter((p) => !joined || p.kind !== "sep")
      .map((p) => p.text)
      .join("");
  };
  const message = fc.record({
    subject: text(false),
    body: text(true),
    a: fc.nat(),
    n: fc.nat(),
    b: fc.nat(),
  });
  let run = 0;

  it("the cache answers the same rows as the server", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { minLength: 1, maxLength: 3 }),
        fc.array(fc.constantFrom(...CJK), { minLength: 1, maxLength: 3 }),
        async (msgs, random) => {
          const folder = `Mix${++run}`;
          const imap = await env.dv.connect("alice");
          await imap.mailboxCreate(folder);
          await imap.logout();
          const specs = msgs.map((m, i) => ({
            ...spec(100 + i, m.subject.map((p) => p.text).join(""), m.body.map((p) => p.text).join("")),
            messageId: `<mix-${run}-${i}@example.com>`,
          }));
          await env.dv.appendMessages(
            "alice",
            folder,
            specs.map((m) => ({ raw: buildMessage(m), flags: [] })),
          );
          const { accounts } = await env.client.cacheSync({ accounts: ["work"] });
          expect(accounts.map((a) => a.ok)).toEqual([true]);
          const terms = msgs.flatMap((m, i) =>
            [cut(m.subject, m.a, m.n), cut(m.body, m.b, m.n)].flatMap((t) => (t ? [{ t, from: i }] : [])),
          );
          const joined = msgs.flatMap((m) =>
            [cut(m.subject, m.a, m.n, true), cut(m.body, m.b, m.n, true)].flatMap((t) =>
              t ? [{ t, from: -1 }] : [],
            ),
          );
          for (const { t, from } of [...terms, ...joined, { t: random.join(""), from: -1 }]) {
            const query = `in:${folder} "${t}"`;
            const r = await both(query);
            expect(r.cache, JSON.stringify({ query, specs })).toEqual(r.server);
            // the message a term was cut from holds it, so neither answer is empty by accident
            if (from >= 0) expect(r.server, query).toContain(specs[from]?.messageId);
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
