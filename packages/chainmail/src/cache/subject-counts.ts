// Exact counts of one subject word without walking its matches (issue 34). fts5vocab counts a word
// by walking its doclist in `subjects_fts` (about 25 ns a hit: 5 ms for `subject:update`, 213,907
// hits, at a million messages). Here each term's count of subjects is kept instead:
//
// - `subject_term_counts`: each term's number of `subjects_fts` rows, exact as of the last fold;
// - `subject_changes`: an FTS5 table, small, of the subjects indexed since (column `added`) and of
//   those taken out of the index since (column `removed`), tokenized by the same tokenizer from
//   the same text (`cjkSpaced` of the subject, as ./fts.ts `insertSubject` indexes it), so a term
//   is counted in it exactly as in `subjects_fts`;
//
// and a count is `kept + added - removed`, three look-ups (`keptSubjectCount`). A fold (in the
// writer's transaction, once `subject_changes` holds FOLD_AT rows) adds its term statistics to the
// kept counts and empties it.
//
// Every change of `subjects_fts` is mirrored: `insertSubject` adds the new text and, when it
// replaces a row, the text it replaces (the message's old subject, which the header write reads
// before it overwrites it; nothing when it is unchanged); a message row's deletion (removals,
// UIDVALIDITY resets, a folder or account dropped, an INSERT OR REPLACE) removes the subject it
// had through the trigger below, which reads it from `message_meta` before the row and its meta
// go. The trigger spaces CJK text with the SQL function `chainmail_fts_text` (`cjkSpaced`), which
// each connection that may delete messages must register (`registerCacheFunctions`: openCache and
// migrate do). `subjects_fts` holds a row for a message iff its stored subject is not empty
// (`insertSubject`, the storage migration), which is what the trigger relies on. A later step that
// rebuilds `subjects_fts` (or changes `cjkSpaced`, which the index's text comes from) must fill the
// counts again (`keepSubjectCounts`); the steps before this one are followed by it.
import { cjkSpaced } from "../query/cjk.js";
import type { CacheDb } from "./schema.js";
import { stmt } from "./schema.js";
import { FTS_TOKENIZE } from "./storage-migration.js";
import { hasTable, schemaChanged } from "./tables.js";

/** Rows of `subject_changes` from which a batch's write folds them into the kept counts. */
export const FOLD_AT = 4096;

/** The SQL function the deletion trigger spaces CJK text with (src/query/cjk.ts, cjkSpaced). */
const FTS_TEXT = "chainmail_fts_text";

/** The connection's functions the cache's triggers call; on every connection that writes the cache. */
export function registerCacheFunctions(db: CacheDb): void {
  db.function(FTS_TEXT, { deterministic: true }, (text: unknown) =>
    typeof text === "string" ? cjkSpaced(text) : text,
  );
}

/**
 * The migration: the tables, the trigger and the kept counts filled from `subjects_fts`'s term
 * statistics. Re-runnable: it empties both and fills them anew (a step before it that runs again
 * rebuilds `subjects_fts`, and this one runs after it).
 */
export function keepSubjectCounts(db: CacheDb): void {
  registerCacheFunctions(db);
  db.exec(`CREATE TABLE IF NOT EXISTS subject_term_counts (term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
    CREATE VIRTUAL TABLE IF NOT EXISTS subject_changes USING fts5(
      added, removed, content='', detail='column', ${FTS_TOKENIZE}
    );
    CREATE VIRTUAL TABLE IF NOT EXISTS vocab_subject_changes USING fts5vocab(subject_changes, 'col');
    DROP TRIGGER IF EXISTS messages_subject_gone;
    CREATE TRIGGER messages_subject_gone BEFORE DELETE ON messages BEGIN
      INSERT INTO subject_changes (removed)
        SELECT ${FTS_TEXT}(subject) FROM message_meta WHERE id = old.id AND subject <> '';
    END;
    DELETE FROM subject_term_counts;
    INSERT INTO subject_changes (subject_changes) VALUES ('delete-all');
    INSERT INTO subject_term_counts (term, n) SELECT term, doc FROM vocab_subjects_rows WHERE doc > 0;`);
  schemaChanged(db);
}

/** Whether the cache keeps subject counts (a cache file at an earlier version has not). */
const hasKeptCounts = (db: CacheDb) => hasTable(db, "subject_term_counts");

/**
 * Notes a change of a message's row in `subjects_fts`: the indexed text it took out (null: none)
 * and the one it put in (null: none), both as indexed (`cjkSpaced`).
 */
export function noteSubjectChange(db: CacheDb, removed: string | null, added: string | null): void {
  if (removed === added || !hasKeptCounts(db)) return;
  stmt(db, "INSERT INTO subject_changes (added, removed) VALUES (?, ?)").run(added, removed);
}

/**
 * Moves the changes into the kept counts once there are `atLeast` of them, in a transaction of
 * its own or the writer's (a savepoint). The fold reads the small table's term statistics (one
 * row per term in it) and upserts each term's count.
 */
export function foldSubjectChanges(db: CacheDb, atLeast = FOLD_AT): void {
  if (!hasKeptCounts(db)) return;
  // (the rows since the last fold: FTS5 numbers a contentless table's rows in its docsize table,
  // from 1 again once 'delete-all' emptied it)
  const rows = (stmt(db, "SELECT max(id) FROM subject_changes_docsize").pluck().get() as number | null) ?? 0;
  if (rows === 0 || rows < atLeast) return;
  db.transaction(() => {
    stmt(
      db,
      `INSERT INTO subject_term_counts (term, n)
        SELECT term, sum(CASE col WHEN 'added' THEN doc ELSE -doc END) FROM vocab_subject_changes WHERE true GROUP BY term
        ON CONFLICT (term) DO UPDATE SET n = n + excluded.n`,
    ).run();
    stmt(
      db,
      "DELETE FROM subject_term_counts WHERE n = 0 AND term IN (SELECT term FROM vocab_subject_changes WHERE col = 'removed')",
    ).run();
    stmt(db, "INSERT INTO subject_changes (subject_changes) VALUES ('delete-all')").run();
  })();
}

/**
 * The number of `subjects_fts` rows holding `token` (a token as the tokenizer makes it), from the
 * kept count and the changes since; null when the cache keeps no counts.
 */
export function keptSubjectCount(db: CacheDb, token: string): number | null {
  if (!hasKeptCounts(db)) return null;
  const r = stmt(
    db,
    `SELECT coalesce((SELECT n FROM subject_term_counts WHERE term = ?), 0)
      + coalesce((SELECT sum(CASE col WHEN 'added' THEN doc ELSE -doc END) FROM vocab_subject_changes WHERE term = ?), 0)`,
  )
    .pluck()
    .get(token, token) as number;
  return r;
}
