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
const CJK_CHAR =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3005\u3006\u30fc\uff70]/gu;
const HAS_CJK =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3005\u3006\u30fc\uff70]/u;

/** Whether `text` holds a CJK character (then `cjkSpaced` changes it). */
export const hasCjk = (text: string): boolean => HAS_CJK.test(text);

/**
 * `text` with every CJK character set apart by spaces, so unicode61 makes a token of each; text
 * without one comes back as it is (the same string: no copy for Latin-script mail or queries).
 */
export const cjkSpaced = (text: string): string => (hasCjk(text) ? text.replace(CJK_CHAR, " $& ") : text);
