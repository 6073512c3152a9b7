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

/** `"word"` or `column : "word"`, as src/query/sql.ts writes a term (ftsString, ftsLeaf). */
const ONE_PHRASE = /^(?:([a-z_]+) : )?"((?:[^"]|"")*)"$/;

/** Per connection: the token of each word asked for (the tokenizer's answer never changes). */
const prepared = new WeakMap<CacheDb, Map<string, string | null>>();
const TOKEN_CACHE = 512;

const TEMP_TABLES = `CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_messages_rows USING fts5vocab(main, messages_fts, 'row');
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_messages_cols USING fts5vocab(main, messages_fts, 'col');
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_subjects_rows USING fts5vocab(main, subjects_fts, 'row');
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_tokenizer USING fts5(word, ${FTS_TOKENIZE});
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_tokens USING fts5vocab(temp, vocab_tokenizer, 'instance');`;

/**
 * The connection's temp tables: the term statistics of both indexes (per row, and per row and
 * column for a column filter), and a scratch index with the indexes' tokenizer that turns a word
 * into its token (`porter` stems it: `update` is `updat`). Temp tables are the connection's own:
 * nothing is written to the cache file. They are looked for at every count, not remembered: SQLite
 * drops a connection's whole temp schema whenever its `temp_store` changes, which the cache's
 * writes do around each transaction (./slices.ts), so after any write they may be gone.
 */
function tokensOf(db: CacheDb): Map<string, string | null> {
  // (the last one made: when it is there, the others are)
  if (!stmt(db, "SELECT 1 FROM temp.sqlite_master WHERE name = 'vocab_tokens'").get()) db.exec(TEMP_TABLES);
  let tokens = prepared.get(db);
  if (!tokens) {
    tokens = new Map();
    prepared.set(db, tokens);
  }
  return tokens;
}

/** The one token the indexes' tokenizer makes of `word`, or null when it makes none or several. */
function tokenOf(db: CacheDb, word: string): string | null {
  const tokens = tokensOf(db);
  const known = tokens.get(word);
  if (known !== undefined) return known;
  stmt(db, "INSERT INTO temp.vocab_tokenizer (rowid, word) VALUES (1, ?)").run(word);
  const terms = stmt(db, "SELECT term FROM temp.vocab_tokens").pluck().all() as string[];
  stmt(db, "DELETE FROM temp.vocab_tokenizer").run();
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
  const row =
    table === "subjects_fts"
      ? stmt(db, "SELECT doc FROM temp.vocab_subjects_rows WHERE term = ?").get(token)
      : column === undefined
        ? stmt(db, "SELECT doc FROM temp.vocab_messages_rows WHERE term = ?").get(token)
        : stmt(db, "SELECT doc FROM temp.vocab_messages_cols WHERE term = ? AND col = ?").get(token, column);
  return (row as { doc: number } | undefined)?.doc ?? 0;
}
