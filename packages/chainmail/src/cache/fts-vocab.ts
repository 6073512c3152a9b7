// Exact match counts of one word from FTS5's own term statistics (fts5vocab), without iterating the
// matches. `count(*) ... WHERE messages_fts MATCH '"invoice"'` steps through every hit in SQLite's
// virtual machine (one xNext, one aggregate step each): at 1,000,000 messages `subject:update`
// (213,907 hits) and `invoice` (101,741) spent most of their time there. fts5vocab walks the same
// doclist inside FTS5 and returns the number of rows, deletions (contentless_delete tombstones) and
// not yet flushed rows of the open transaction counted as a MATCH counts them. Only an expression
// that is one word, which the tokenizer makes one token, is counted so; anything else (phrases,
// prefixes, several terms, CJK runs) returns null and is counted by the MATCH.
import type { FtsTable } from "../query/index.js";
import { type CacheDb, stmt } from "./schema.js";
import { FTS_TOKENIZE } from "./storage-migration.js";
import { keptSubjectCount } from "./subject-counts.js";

/** `"word"` or `column : "word"`, as src/query/sql.ts writes a term (ftsString, ftsLeaf). */
const ONE_PHRASE = /^(?:([a-z_]+) : )?"((?:[^"]|"")*)"$/;

/**
 * Per connection: the token of each word asked for (the tokenizer's answer never changes), or
 * null where no tokenizer could be attached.
 */
const prepared = new WeakMap<CacheDb, Map<string, string | null> | null>();
const TOKEN_CACHE = 512;

/**
 * A scratch index with the word indexes' tokenizer, which turns a word into its token (`porter`
 * stems it: `update` is `updat`), in an in-memory database attached to the connection: nothing
 * is written to the cache file, and unlike the temp schema it outlives the `temp_store` changes
 * of the cache's writes (./slices.ts). Null when it cannot be attached (ATTACH is refused inside
 * a transaction): the count is then a MATCH's.
 */
function tokensOf(db: CacheDb): Map<string, string | null> | null {
  const known = prepared.get(db);
  if (known !== undefined) return known;
  if (db.inTransaction) return null;
  let tokens: Map<string, string | null> | null = null;
  try {
    const attached = (db.pragma("database_list") as { name: string }[]).some(
      (d) => d.name === "vocab_scratch",
    );
    if (!attached) db.exec("ATTACH DATABASE ':memory:' AS vocab_scratch");
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS vocab_scratch.tokenizer USING fts5(word, ${FTS_TOKENIZE});
      CREATE VIRTUAL TABLE IF NOT EXISTS vocab_scratch.tokens USING fts5vocab(tokenizer, 'instance');`);
    tokens = new Map();
  } catch {
    tokens = null;
  }
  prepared.set(db, tokens);
  return tokens;
}

/** The one token the indexes' tokenizer makes of `word`, or null when it makes none or several. */
function tokenOf(db: CacheDb, word: string): string | null {
  const tokens = tokensOf(db);
  if (!tokens) return null;
  const known = tokens.get(word);
  if (known !== undefined) return known;
  stmt(db, "INSERT INTO vocab_scratch.tokenizer (rowid, word) VALUES (1, ?)").run(word);
  const terms = stmt(db, "SELECT term FROM vocab_scratch.tokens").pluck().all() as string[];
  stmt(db, "DELETE FROM vocab_scratch.tokenizer").run();
  const token = terms.length === 1 ? (terms[0] as string) : null;
  if (tokens.size >= TOKEN_CACHE) tokens.clear();
  tokens.set(word, token);
  return token;
}

/**
 * How many rows of `table` the FTS5 expression matches, read from the term statistics, or null when
 * the expression is not one word (then only a MATCH can count it).
 */
export function vocabCount(db: CacheDb, expr: string, table: FtsTable): number | null {
  const m = ONE_PHRASE.exec(expr);
  if (!m) return null;
  const column = m[1];
  // (subjects_fts has the one column `subject`)
  if (table === "subjects_fts" && column !== undefined && column !== "subject") return null;
  const token = tokenOf(db, (m[2] as string).replaceAll('""', '"'));
  if (token === null) return null;
  if (table === "subjects_fts") {
    // (kept per term, ./subject-counts.ts; null in a cache at an earlier version)
    const kept = keptSubjectCount(db, token);
    if (kept !== null) return kept;
  }
  let row: unknown;
  try {
    row =
      table === "subjects_fts"
        ? stmt(db, "SELECT doc FROM vocab_subjects_rows WHERE term = ?").get(token)
        : column === undefined
          ? stmt(db, "SELECT doc FROM vocab_messages_rows WHERE term = ?").get(token)
          : stmt(db, "SELECT doc FROM vocab_messages_cols WHERE term = ? AND col = ?").get(token, column);
  } catch {
    // (a cache not yet migrated to the term statistics' tables, as tests hold one: MATCH counts)
    return null;
  }
  return (row as { doc: number } | undefined)?.doc ?? 0;
}
