// The storage step of issue 34 (cache.db at most a fifth of the Maildir; `subject:` on a common
// word fast). Additive: nothing an existing cache holds is rewritten but the subjects, read into an
// index of their own.
//
// - bodies.enc: how a body's text is stored (./body-store.ts). Old rows are 0, the text itself, and
//   stay readable as they are; bodies stored from now on are compressed.
// - subjects_fts: the subjects alone, indexed as messages_fts indexes them (same tokenizer, same
//   CJK spacing), for queries whose words are all `subject:` terms (src/query/sql.ts). In
//   messages_fts a common word's position list spans every column of every message that has it
//   anywhere: `subject:update` read the whole list of `update` (in nearly every body) to keep the
//   21% of rows that have it in the subject, 2.8 ms at 100,000 messages. Kept by `insertSubject`
//   (./fts.ts) where a message's header row is written, and by a trigger where a message row goes.
// - a new, empty cache gets messages_fts with the body as its first column: FTS5 writes a column
//   number before the positions of every column but the first, two bytes per word of each message,
//   and most of the index's entries are body words. Columns are named in every query and write,
//   so the order is free; an existing cache keeps its table (rebuilding it would rewrite every row).
// - a new, empty cache gets its date indexes ascending (ASCENDING_DATE_INDEXES); an existing cache
//   keeps its descending ones.
import { FTS_MERGE_SETTINGS } from "./schema.js";
import type { CacheDb } from "./schema.js";
import { cjkSpaced } from "../query/cjk.js";

export const FTS_TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'";

const BODY_FIRST_FTS = `CREATE VIRTUAL TABLE messages_fts USING fts5(
    body, subject, from_addr, to_addr, cc_addr, bcc_addr,
    content='', contentless_delete=1, ${FTS_TOKENIZE}
  );`;

/**
 * The date-ordered indexes in ascending order, for a new cache. Mail is stored oldest first (a
 * sync fetches by UID) and new mail is the newest: in a descending index every insert lands at the
 * b-tree's left edge, where SQLite splits pages in half and leaves them so (at 100,000 messages
 * messages_newest was half empty, 3.5 of 7 MiB, the partial ones alike); at the right edge of an
 * ascending one it fills pages. SQLite reads an ascending index backwards for the newest-first
 * order the searches ask for, and the names stay (`INDEXED BY messages_newest`).
 */
const ASCENDING_DATE_INDEXES = ["newest", "unread", "flagged", "attach"]
  .map((name) => {
    const where = {
      newest: "",
      unread: " WHERE seen = 0",
      flagged: " WHERE flagged = 1",
      attach: " WHERE has_attachment = 1",
    }[name];
    return `DROP INDEX messages_${name};
  CREATE INDEX messages_${name} ON messages (internal_date, id, folder_id, account)${where};`;
  })
  .join("\n");

export const SUBJECTS_FTS_SQL = `CREATE VIRTUAL TABLE subjects_fts USING fts5(
    subject, content='', contentless_delete=1, ${FTS_TOKENIZE}
  );
  CREATE TRIGGER messages_subject_del AFTER DELETE ON messages BEGIN
    DELETE FROM subjects_fts WHERE rowid = old.id;
  END;`;

/**
 * The word indexes' term statistics (fts5vocab: no storage of their own, rows read from the index
 * when asked), for a one-word count without walking its matches (./fts-vocab.ts). In the main
 * schema: fts5vocab can name a table of another schema only from the temp schema, and SQLite drops
 * a connection's temp schema whenever its `temp_store` changes, which the cache's writes do around
 * each transaction (./slices.ts).
 */
export const VOCAB_TABLES = `CREATE VIRTUAL TABLE IF NOT EXISTS vocab_messages_rows USING fts5vocab(messages_fts, 'row');
  CREATE VIRTUAL TABLE IF NOT EXISTS vocab_messages_cols USING fts5vocab(messages_fts, 'col');
  CREATE VIRTUAL TABLE IF NOT EXISTS vocab_subjects_rows USING fts5vocab(subjects_fts, 'row');`;

export function compactStorage(db: CacheDb): void {
  const cols = db.prepare("SELECT name FROM pragma_table_info('bodies')").pluck().all() as string[];
  if (!cols.includes("enc")) db.exec("ALTER TABLE bodies ADD COLUMN enc INTEGER NOT NULL DEFAULT 0");
  if (!db.prepare("SELECT 1 FROM messages LIMIT 1").get()) {
    db.exec(`DROP TABLE messages_fts; ${BODY_FIRST_FTS} ${FTS_MERGE_SETTINGS} ${ASCENDING_DATE_INDEXES}`);
  }
  // (a step runs again when an older user_version is found: the subjects' index is built anew)
  db.exec("DROP TRIGGER IF EXISTS messages_subject_del; DROP TABLE IF EXISTS subjects_fts;");
  db.exec(SUBJECTS_FTS_SQL);
  // In id order: FTS5 writes its pending terms out whenever a rowid is lower than the last
  const add = db.prepare("INSERT INTO subjects_fts (rowid, subject) VALUES (?, ?)");
  const next = db.prepare("SELECT id, subject FROM message_meta WHERE id > ? ORDER BY id LIMIT 5000");
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const rows = next.all(after) as { id: number; subject: string }[];
    if (rows.length === 0) break;
    for (const r of rows) if (r.subject) add.run(r.id, cjkSpaced(r.subject));
    after = (rows[rows.length - 1] as { id: number }).id;
  }
  db.exec("INSERT INTO subjects_fts (subjects_fts) VALUES ('optimize')");
}
