import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { checkpointInBackground } from "./checkpoint.js";
import { cleanStandInsAndBareIds, recomputeThreadKeys } from "./thread-migration.js";
import { renumberByArrival } from "./arrival-migration.js";
import { indexCjkBoundaries, indexCjkCharacters } from "./cjk-migration.js";
import { addAddressAttached, addAddressIndex, dropAddressInsertTriggers } from "./address-index.js";
import { VOCAB_TABLES, compactStorage } from "./storage-migration.js";
import { schemaChanged } from "./tables.js";
import { keepSubjectCounts, registerCacheFunctions } from "./subject-counts.js";

export type CacheDb = Database.Database;

// Per-folder counters of cached messages, bodies, unreadable bodies and messages with labels, so
// freshness and completeness are known without a GROUP BY over the mailbox (and searches know
// whether any label can match). Triggers keep them in the same transaction as whatever statement
// adds, removes or re-states a message (sync, backfill, eviction, a folder's cascade), so no
// writer can forget them.
const COUNTER_DELTA = (sign: "+" | "-", row: "new" | "old") =>
  `UPDATE folders SET cached_count = cached_count ${sign} 1,
      with_body = with_body ${sign} (${row}.body_state IN (1, 2)),
      unreadable = unreadable ${sign} (${row}.body_state = 3),
      labelled = labelled ${sign} (${row}.labels_norm != '')
    WHERE id = ${row}.folder_id;`;
const FOLDER_COUNTERS = `ALTER TABLE folders ADD COLUMN cached_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE folders ADD COLUMN with_body INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE folders ADD COLUMN unreadable INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE folders ADD COLUMN labelled INTEGER NOT NULL DEFAULT 0;
  UPDATE folders SET
    cached_count = (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id),
    with_body = (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id AND m.body_state IN (1, 2)),
    unreadable = (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id AND m.body_state = 3),
    labelled = (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id AND m.labels_norm != '');
  CREATE TRIGGER messages_count_ins AFTER INSERT ON messages BEGIN
    ${COUNTER_DELTA("+", "new")}
  END;
  CREATE TRIGGER messages_count_del AFTER DELETE ON messages BEGIN
    ${COUNTER_DELTA("-", "old")}
  END;
  CREATE TRIGGER messages_count_upd AFTER UPDATE OF folder_id, body_state, labels_norm ON messages
  WHEN old.folder_id IS NOT new.folder_id OR old.body_state IS NOT new.body_state
    OR (old.labels_norm != '') IS NOT (new.labels_norm != '') BEGIN
    ${COUNTER_DELTA("-", "old")}
    ${COUNTER_DELTA("+", "new")}
  END;`;

// Per-folder counts of unread, flagged and attachment-bearing messages, kept like the counters
// above, so search counts `is:unread`, `is:flagged`, `has:attachment` (alone, with `in:`, or the
// empty query) from the folder rows instead of reading every match (29,718 index entries for
// `is:unread in:inbox` at 100,000). The three triggers are replaced by ones that keep every counter,
// and an update of seen, flagged or has_attachment now fires too.
const FLAG_DELTA = (sign: "+" | "-", row: "new" | "old") =>
  `UPDATE folders SET cached_count = cached_count ${sign} 1,
      with_body = with_body ${sign} (${row}.body_state IN (1, 2)),
      unreadable = unreadable ${sign} (${row}.body_state = 3),
      labelled = labelled ${sign} (${row}.labels_norm != ''),
      unread_count = unread_count ${sign} (${row}.seen = 0),
      flagged_count = flagged_count ${sign} (${row}.flagged = 1),
      attachment_count = attachment_count ${sign} (${row}.has_attachment = 1)
    WHERE id = ${row}.folder_id;`;
const FLAG_COUNTER_SQL = `UPDATE folders SET
    unread_count = (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id AND m.seen = 0),
    flagged_count = (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id AND m.flagged = 1),
    attachment_count = (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id AND m.has_attachment = 1);
  DROP TRIGGER IF EXISTS messages_count_ins;
  DROP TRIGGER IF EXISTS messages_count_del;
  DROP TRIGGER IF EXISTS messages_count_upd;
  CREATE TRIGGER messages_count_ins AFTER INSERT ON messages BEGIN
    ${FLAG_DELTA("+", "new")}
  END;
  CREATE TRIGGER messages_count_del AFTER DELETE ON messages BEGIN
    ${FLAG_DELTA("-", "old")}
  END;
  CREATE TRIGGER messages_count_upd AFTER UPDATE OF folder_id, body_state, labels_norm, seen, flagged, has_attachment ON messages
  WHEN old.folder_id IS NOT new.folder_id OR old.body_state IS NOT new.body_state
    OR (old.labels_norm != '') IS NOT (new.labels_norm != '') OR old.seen IS NOT new.seen
    OR old.flagged IS NOT new.flagged OR old.has_attachment IS NOT new.has_attachment BEGIN
    ${FLAG_DELTA("-", "old")}
    ${FLAG_DELTA("+", "new")}
  END;`;

/** Adds the counters (a no-op for the columns when they are there: a test re-runs the steps after one). */
function addFlagCounters(db: CacheDb): void {
  const cols = db.prepare("SELECT name FROM pragma_table_info('folders')").pluck().all() as string[];
  for (const c of ["unread_count", "flagged_count", "attachment_count"])
    if (!cols.includes(c)) db.exec(`ALTER TABLE folders ADD COLUMN ${c} INTEGER NOT NULL DEFAULT 0`);
  db.exec(FLAG_COUNTER_SQL);
}

/**
 * Adds folders.body_cut, set once the size bound has stopped the folder's backfill (./backfill.ts,
 * bodyBudgetCut); a no-op when it is there (a test re-runs the steps after one).
 */
function addBodyCut(db: CacheDb): void {
  const cols = db.prepare("SELECT name FROM pragma_table_info('folders')").pluck().all() as string[];
  if (!cols.includes("body_cut"))
    db.exec("ALTER TABLE folders ADD COLUMN body_cut INTEGER NOT NULL DEFAULT 0");
}

/**
 * Adds bodies.from_html (src/cache/body-store.ts, putBody; NULL for bodies stored before it); a no-op
 * when it is there (a test re-runs the steps after one).
 */
function addBodyFromHtml(db: CacheDb): void {
  const cols = db.prepare("SELECT name FROM pragma_table_info('bodies')").pluck().all() as string[];
  if (!cols.includes("from_html")) db.exec("ALTER TABLE bodies ADD COLUMN from_html INTEGER");
}

/**
 * Adds bodies.partial (src/cache/body-store.ts, putBody; NULL for bodies stored before it, read as
 * whole); a no-op when it is there.
 */
function addBodyPartial(db: CacheDb): void {
  const cols = db.prepare("SELECT name FROM pragma_table_info('bodies')").pluck().all() as string[];
  if (!cols.includes("partial")) db.exec("ALTER TABLE bodies ADD COLUMN partial INTEGER");
}

/** Adds message_meta.text_part; a no-op when it is there (a test re-runs the steps after one). */
function addTextPart(db: CacheDb): void {
  const cols = db.prepare("SELECT name FROM pragma_table_info('message_meta')").pluck().all() as string[];
  if (!cols.includes("text_part")) db.exec("ALTER TABLE message_meta ADD COLUMN text_part TEXT");
}

/**
 * FTS5's automerge off and crisismerge at 64 segments (a backstop): its merging ran inside the
 * commits and held searches up to 120 ms; `ftsUpkeep` (src/cache/fts.ts) merges between them.
 * FTS5 takes these values as integers only (a bound JavaScript number is a REAL), hence literals.
 */
export const FTS_MERGE_SETTINGS = `
  INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
  INSERT INTO messages_fts (messages_fts, rank) VALUES ('crisismerge', 64);`;

/**
 * Ordered migrations; user_version is the number applied. Never edit a released step, add one.
 * Folder and message rows carry the account, so one cache.db serves every account. A step is SQL,
 * or a function for a step SQL cannot express; either runs inside the step's transaction.
 */
const MIGRATIONS: (string | ((db: CacheDb) => void))[] = [
  `
  CREATE TABLE folders (
    id INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    path TEXT NOT NULL,
    path_norm TEXT NOT NULL,
    role TEXT,
    uidvalidity TEXT,
    uidnext INTEGER,
    highestmodseq TEXT,
    server_count INTEGER NOT NULL DEFAULT 0,
    last_sync INTEGER,
    complete INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    UNIQUE (account, path)
  );
  -- Narrow rows: every column a search filters or sorts on, so scans and rowid look-ups stay in
  -- few pages; the display fields live in message_meta and are read for one page of results only
  CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
    account TEXT NOT NULL,
    uid INTEGER NOT NULL,
    thread_key TEXT NOT NULL,
    internal_date INTEGER NOT NULL,
    seen INTEGER NOT NULL DEFAULT 0,
    flagged INTEGER NOT NULL DEFAULT 0,
    answered INTEGER NOT NULL DEFAULT 0,
    draft INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL DEFAULT 0,
    has_attachment INTEGER NOT NULL DEFAULT 0,
    -- 0 no body, 1 body stored and indexed, 2 indexed but text evicted, 3 could not be read
    body_state INTEGER NOT NULL DEFAULT 0,
    keywords_norm TEXT NOT NULL DEFAULT '',
    labels_norm TEXT NOT NULL DEFAULT '',
    filenames_norm TEXT NOT NULL DEFAULT '',
    UNIQUE (folder_id, uid)
  );
  CREATE INDEX messages_newest ON messages (internal_date DESC, id DESC, folder_id, account);
  CREATE INDEX messages_thread ON messages (account, thread_key);
  CREATE INDEX messages_body ON messages (folder_id, body_state);
  -- Small partial indexes for the commonest filters: counting and paging them reads only the
  -- matching entries (the planner uses them for exactly "m.seen = 0" etc., as compileToSql writes)
  CREATE INDEX messages_unread ON messages (internal_date DESC, id DESC, folder_id, account) WHERE seen = 0;
  CREATE INDEX messages_flagged ON messages (internal_date DESC, id DESC, folder_id, account) WHERE flagged = 1;
  CREATE INDEX messages_attach ON messages (internal_date DESC, id DESC, folder_id, account) WHERE has_attachment = 1;
  CREATE INDEX messages_size ON messages (size, folder_id, account);
  CREATE TABLE message_meta (
    id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    message_id TEXT,
    in_reply_to TEXT,
    refs TEXT NOT NULL DEFAULT '[]',
    gm_thread_id TEXT,
    date INTEGER,
    from_json TEXT NOT NULL DEFAULT '[]',
    to_json TEXT NOT NULL DEFAULT '[]',
    cc_json TEXT NOT NULL DEFAULT '[]',
    bcc_json TEXT NOT NULL DEFAULT '[]',
    subject TEXT NOT NULL DEFAULT '',
    keywords_json TEXT NOT NULL DEFAULT '[]',
    labels_json TEXT NOT NULL DEFAULT '[]',
    attachments_json TEXT NOT NULL DEFAULT '[]',
    modseq TEXT
  );
  CREATE INDEX message_meta_msgid ON message_meta (message_id);
  CREATE TABLE bodies (
    message_rowid INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    fetched_at INTEGER NOT NULL
  );
  CREATE VIRTUAL TABLE messages_fts USING fts5(
    subject, from_addr, to_addr, cc_addr, bcc_addr, body,
    content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2'
  );
  CREATE TABLE downloads (
    account TEXT NOT NULL,
    day TEXT NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account, day)
  );
  `,
  // 2: Reply-To, so get_message can answer from the cache (NULL for rows synced before: those read
  // from the server until their next full header fetch)
  `ALTER TABLE message_meta ADD COLUMN reply_to_json TEXT;`,
  // 3: the size index also holds the arrival time, so larger:/smaller: page from the index alone
  // (sorting its range) instead of reading every matching row for its date
  `DROP INDEX messages_size;
  CREATE INDEX messages_size ON messages (size, internal_date, folder_id, account);`,
  // 4: the folder counters (above)
  FOLDER_COUNTERS,
  // the one canonical thread key (src/thread-key.ts) in place of the older folder-dependent fallbacks
  recomputeThreadKeys,
  // where the body text is (src/cache/body.ts, textPartRef, as JSON), so the backfill fetches that
  // part alone; NULL for rows synced before, and for mail whose body is one text/plain part
  addTextPart,
  // unread, flagged and attachment counts per folder (above)
  addFlagCounters,
  // FTS5 merges no more inside its commits: the cache merges between them (src/cache/fts.ts)
  FTS_MERGE_SETTINGS,
  // message ids that follow arrival time, so FTS5's rowid order is newest first (./arrival-id.ts)
  renumberByArrival,
  // each CJK character its own token, so a Chinese or Japanese word inside a run is found
  // (src/query/cjk.ts); the rows holding CJK text are indexed again
  indexCjkCharacters,
  // an index of the From/To/Cc/Bcc addresses, kept by triggers, for whole-address terms
  // (./address-index.ts)
  addAddressIndex,
  // bodies stored compressed from now on (bodies.enc), an index of the subjects alone, and a new
  // cache's word index with the body first (./storage-migration.ts)
  compactStorage,
  // the address rows of written messages added per batch by the header write, not by row triggers
  // (./address-index.ts, indexAddresses)
  dropAddressInsertTriggers,
  // a boundary token where white space or punctuation touches a CJK character, so a CJK term does
  // not match across it (src/query/cjk.ts); the rows holding CJK text are indexed again
  indexCjkBoundaries,
  // whether the size bound stopped a folder's backfill, so that room the index's merges free after
  // a pass does not start it again (./backfill.ts, bodyBudgetCut)
  addBodyCut,
  // the word indexes' term statistics, for a one-word count (./fts-vocab.ts)
  VOCAB_TABLES,
  // per address, header and folder the messages with attachments, for `has:attachment from:x`
  // (./address-index.ts)
  addAddressAttached,
  // each subject word's count kept, with the changes since in a small index, so a one-word
  // `subject:` count does not walk its matches (./subject-counts.ts)
  keepSubjectCounts,
  // whether a body's text was made from HTML, for get_message (src/service/cached-read.ts)
  addBodyFromHtml,
  // whether a body's text is one part of several (./joined-text.ts), for get_message likewise
  addBodyPartial,
  // Dovecot's MISSING_* address stand-ins dropped, thread keys of bare ids made again
  // (./thread-migration.ts)
  cleanStandInsAndBareIds,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
/** The version that adds the folder counters (tests migrate to the one before it). */
export const FOLDER_COUNTERS_VERSION = MIGRATIONS.indexOf(FOLDER_COUNTERS) + 1;
/** The version that adds the unread, flagged and attachment counts (tests migrate to the one before). */
export const FLAG_COUNTERS_VERSION = MIGRATIONS.indexOf(addFlagCounters) + 1;
/** The version that rewrites thread keys by the canonical rule (its test re-runs it). */
export const THREAD_KEYS_VERSION = MIGRATIONS.indexOf(recomputeThreadKeys) + 1;
/** The version from which message ids follow arrival time (its test migrates to the one before). */
export const ARRIVAL_IDS_VERSION = MIGRATIONS.indexOf(renumberByArrival) + 1;
/** The version from which CJK characters are indexed one token each (its test migrates to the one before). */
export const CJK_TOKENS_VERSION = MIGRATIONS.indexOf(indexCjkCharacters) + 1;
/** The version from which separators beside CJK characters are boundary tokens (its test re-runs it). */
export const CJK_BOUNDARY_VERSION = MIGRATIONS.indexOf(indexCjkBoundaries) + 1;
/** The version that adds the address index (its test migrates to the one before). */
export const ADDRESS_INDEX_VERSION = MIGRATIONS.indexOf(addAddressIndex) + 1;
/** The version that compresses bodies and indexes subjects alone (its test migrates to the one before). */
export const COMPACT_STORAGE_VERSION = MIGRATIONS.indexOf(compactStorage) + 1;
/** The version from which the header write adds the address rows itself (./address-index.ts). */
export const ADDRESS_BATCH_VERSION = MIGRATIONS.indexOf(dropAddressInsertTriggers) + 1;
/** The version from which the address rows and counts say which messages have attachments. */
export const ADDRESS_ATTACHED_VERSION = MIGRATIONS.indexOf(addAddressAttached) + 1;
/** The version from which each subject word's count is kept (its test migrates to the one before). */
export const SUBJECT_COUNTS_VERSION = MIGRATIONS.indexOf(keepSubjectCounts) + 1;

/** The default cache file: $XDG_DATA_HOME/chainmail/cache.db (or ~/.local/share/...). */
export function defaultCachePath(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME)
      ? env.XDG_DATA_HOME
      : path.join(os.homedir(), ".local", "share");
  return path.join(base, "chainmail", "cache.db");
}

/**
 * The settings every connection that writes cache.db needs, the daemon's (`openCache`) and the
 * header writer's (./writer-worker.ts): the folder counter triggers, for one, only see the rows
 * INSERT OR REPLACE deletes with recursive_triggers on. (The attached scratch database of
 * ./fts-vocab.ts is attached on first use, per connection, and only searches use it.)
 */
export function configureConnection(db: CacheDb, cacheSize = -65536): void {
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  // A row that INSERT OR REPLACE deletes fires the delete trigger only with this on, and the folder
  // counters (migration 4) must see every deleted message row
  db.pragma("recursive_triggers = ON");
  db.pragma("busy_timeout = 5000");
  // (the SQL functions the cache's triggers call, on every connection that writes: ./subject-counts.ts)
  registerCacheFunctions(db);
  // Search touches many pages of messages and the FTS index: keep them in memory (64 MiB, this
  // connection's; the checkpoint worker's keeps SQLite's default 2 MiB). No memory map: every page
  // of it the daemon touched stayed resident (RssFile), up to its whole size, and the scale run at
  // 100,000 messages (src/bench/scale-bench.ts) measured the daemon at 471-506 MB with 256 MiB
  // mapped, 286-312 MB without, the searches and the sync as fast (the OS page cache serves reads)
  db.pragma(`cache_size = ${cacheSize}`);
  db.pragma("mmap_size = 0");
}

/**
 * Opens (creating when missing) and migrates the cache. `:memory:` works for tests. `log` hears of
 * an upgrade of a cache that holds mail: some steps rewrite every row (the arrival-order ids
 * rebuild the search index), and the daemon answers nothing until they are done.
 */
export function openCache(file: string = defaultCachePath(), log?: (line: string) => void): CacheDb {
  if (file !== ":memory:") fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  // A new cache gives the pages an FTS merge frees back to the file system (`releaseFreePages`,
  // ./fts.ts): a full merge leaves the old segments' pages free, 10 MiB at 100,000 messages. The
  // mode can only be chosen before the first table (and before WAL); an existing cache keeps its own.
  if (db.pragma("user_version", { simple: true }) === 0) db.pragma("auto_vacuum = INCREMENTAL");
  db.pragma("journal_mode = WAL");
  configureConnection(db);
  const from = db.pragma("user_version", { simple: true }) as number;
  const upgrading = log && from > 0 && from < MIGRATIONS.length;
  const started = Date.now();
  if (upgrading) {
    const n = (db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
    log(
      `cache: upgrading ${file} from version ${from} to ${MIGRATIONS.length} (${n} messages); a step that rewrites every message can take a minute on a large cache`,
    );
  }
  migrate(db);
  if (upgrading) log(`cache: upgraded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // WAL checkpoints in a worker thread, not in the commits the daemon's searches wait for
  checkpointInBackground(db, file);
  return db;
}

/** Applies the migrations after the file's version, up to `target` (default: all). */
export function migrate(db: CacheDb, target: number = MIGRATIONS.length): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length)
    throw new Error(`cache.db is version ${current}, newer than this chainmail (${MIGRATIONS.length})`);
  // (a connection a test opens on its own migrates through here: its deletions need them too)
  registerCacheFunctions(db);
  for (let v = current; v < Math.min(target, MIGRATIONS.length); v++) {
    db.transaction(() => {
      const step = MIGRATIONS[v];
      if (typeof step === "function") step(db);
      else db.exec(step as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  schemaChanged(db);
}

const statements = new WeakMap<CacheDb, Map<string, Database.Statement>>();

/** A prepared statement, compiled once per connection (preparing costs more than most runs). */
export function stmt(db: CacheDb, sql: string): Database.Statement {
  let map = statements.get(db);
  if (!map) {
    map = new Map();
    statements.set(db, map);
  }
  let s = map.get(sql);
  if (!s) {
    // Search SQL varies with the query's shape; keep the map from growing without bound
    if (map.size > 500) map.clear();
    s = db.prepare(sql);
    map.set(sql, s);
  }
  return s;
}
