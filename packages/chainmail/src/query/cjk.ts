// How the cache's word index and its queries treat Chinese, Japanese and Korean text.
/**
 * Chinese, Japanese and Korean script characters (Han with 々 and 〆, Hiragana, Katakana with its
 * long-vowel mark ー and the half-width forms, Hangul). unicode61 makes one token of a whole run of
 * them (`定例会議です` is one token, so `会議` found nothing), so the cache indexes each one as a token
 * of its own and a CJK term is searched as the phrase of its characters (`cjkSpaced` on both sides: src/cache/fts.ts, `insertFts`, and ./sql.ts, `ftsString`):
 * `会議` is the phrase `会 議`, which matches those two characters next to each other anywhere in a
 * run, as the server's substring SEARCH does. Chosen over a trigram index by measurement
 * (src/bench/cjk-bench.ts, figures in the README): a trigram index cannot match a 1- or 2-character
 * term, and most Chinese words are 2 characters.
 */
const CJK_CLASS =
  "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u3005\\u3006\\u30fc\\uff70";
// redos-ok: one character class of fixed scripts
const HAS_CJK = new RegExp(`[${CJK_CLASS}]`, "u");
/**
 * What unicode61 makes no token of (white space, punctuation, symbols, controls; also the symbols
 * of CJK scripts, such as the squared Katakana words ㌝): a separator. Letters, digits, combining
 * marks (folded into their letter by remove_diacritics) and private-use characters (category Co:
 * unicode61's token characters, which the boundary tokens below are made of) are not.
 */
const TOKEN_CHARS = "\\p{L}\\p{N}\\p{M}\\p{Co}";
const SEP = `[^${TOKEN_CHARS}]`;
/** A CJK character that is not a separator (a letter, digit or mark of those scripts). */
const CJK_LETTER = `[[${CJK_CLASS}]&&[${TOKEN_CHARS}]]`;
// redos-ok: one character class of fixed scripts
const CJK_CHAR = new RegExp(CJK_LETTER, "gv");
/**
 * A whole run of separators with a character on both sides, one of them a CJK letter (a run at
 * the start or end of the text is left alone). Two passes of the engine's own replacing (this
 * one, then CJK_CHAR's) cost about a third of one pass with a callback per character.
 */
// redos-ok: a run starts only after a token character and its separators are never CJK letters, so
// each run is read once (recheck cannot read the v flag; a million separators take milliseconds)
const TOUCHING_RUN = new RegExp(
  `(?<=${CJK_LETTER})${SEP}+(?=[${TOKEN_CHARS}])|(?<=[${TOKEN_CHARS}])${SEP}+(?=${CJK_LETTER})`,
  "gv",
);

/** Whether `text` holds a CJK character (then `cjkSpaced` changes it). */
export const hasCjk = (text: string): boolean => HAS_CJK.test(text);

/**
 * Separator characters a boundary token spells out (`boundaryToken`); a longer run keeps its first
 * and last BOUNDARY_EDGE characters around BOUNDARY_CUT, so one line of `=====` does not make a
 * token of hundreds of bytes (a query never writes such a run out).
 */
const BOUNDARY_EDGE = 16;
const BOUNDARY_CUT = 0x10fffd;

/**
 * The run of separators `run` as one token: each character moved into a private-use plane (a BMP
 * character c to U+F0000 + c, one of plane 1, where the emoji are, to U+100000 + c - 0x10000, any
 * other to U+10FFFD), which unicode61 keeps as token characters (category Co, unchanged by case
 * folding and remove_diacritics; pinned by test/cjk-tokens.test.ts). Mail and queries hold no
 * characters of those planes in practice, so only the same run of separators makes the same token.
 */
function boundaryToken(run: string): string {
  let cps = [...run];
  if (cps.length > 2 * BOUNDARY_EDGE + 1)
    cps = [...cps.slice(0, BOUNDARY_EDGE), String.fromCodePoint(BOUNDARY_CUT), ...cps.slice(-BOUNDARY_EDGE)];
  let token = "";
  for (const c of cps) {
    const cp = c.codePointAt(0) as number;
    token += String.fromCodePoint(
      cp === BOUNDARY_CUT
        ? cp
        : cp < 0x10000
          ? 0xf0000 + cp
          : cp < 0x20000
            ? 0x100000 + cp - 0x10000
            : BOUNDARY_CUT,
    );
  }
  return token;
}

/**
 * `text` with every CJK character set apart by spaces, so unicode61 makes a token of each, and
 * every run of separators that touches a CJK character (white space, punctuation, symbols: `。`,
 * ` `, `\n`, `「`) replaced by a boundary token that spells the run out (`boundaryToken`). Without
 * it a phrase would match across separators, which take no token position (`会議` found `会。議`,
 * `Q3会議` found `Q3 会議`), where the server's substring SEARCH does not: with it `定例。会議` is the
 * tokens `定 例 [。] 会 議`, so `例会` is not found in it, `"定例。会議"` is (the query goes through
 * here too) and `"定例 会議"` is not. A run at the very start or end of `text` is left as it is
 * (unicode61 drops it): a query's term has no neighbour there, so `、会議` finds `会議` after any
 * separator, or none. Text without a CJK character comes back as it is (the same string: no copy
 * for Latin-script mail or queries), and separators between two Latin words stay separators.
 * The one function both the index (src/cache/fts.ts) and the query (./sql.ts) use.
 */
export const cjkSpaced = (text: string): string =>
  hasCjk(text)
    ? text.replace(TOUCHING_RUN, (run) => ` ${boundaryToken(run)} `).replace(CJK_CHAR, " $& ")
    : text;
