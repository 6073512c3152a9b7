import { checkpointSoon } from "./checkpoint.js";
import { backgroundTurn } from "./priority.js";
import { writeWhenFree } from "./busy.js";
import { mergeOffThread, takeTurn, writerRunning } from "./writer.js";
import { cjkSpaced } from "../query/cjk.js";
import { type CacheDb, stmt } from "./schema.js";
import { noteSubjectChange } from "./subject-counts.js";
import { hasTable } from "./tables.js";

/**
 * FTS5 keeps its index as a set of b-tree segments: every committed write adds one and automerge
 * folds them together four at a time. After bulk writes (an initial sync; a body backfill, which
 * also re-indexes every row it fills and leaves a tombstone for its old entry) the index sits in a
 * dozen or more segments, and every term look-up visits each of them: at 100,000 messages with 17
 * segments, word and address queries took 2-3x as long as on one merged segment.
 *
 * Merging rewrites the whole index (about 1.4 s at 100,000 messages with bodies on an idle core),
 * so it waits until the segment count reaches MAX_SEGMENTS. With automerge folding four into one,
 * that takes a few dozen write transactions since the previous merge: a bulk load merges a few
 * times on the way, and a mailbox receiving mail one message at a time every few dozen messages.
 */
const MAX_SEGMENTS = 8;
/**
 * Pages per step of `compactFts`' full merge, then the event loop gets a turn: 500 took up to 60
 * ms; at 100,000 messages 100 took 4 ms typically but up to 27 (p99) over the largest segments,
 * which a search waiting behind the step saw whole.
 */
const STEP_PAGES = 40;

/**
 * Pages of output per step of the merging between write transactions (`mergeFtsStep`). At 50 a
 * step took 1-2 ms (p99 7 ms) during a backfill at load 3.5, but 10-35 ms now and then over the
 * largest segments at 100,000 messages; 20 halves that tail for about 14% more backfill CPU (a
 * step's fixed cost, about 1 ms there, is paid more often), which the backfill target leaves room
 * for (52 s of 90 at 100,000).
 */
export const UPKEEP_PAGES = 20;

/*
 * FTS5's own merging runs inside the commit that writes a segment, where it cannot be bounded:
 * automerge does 64 pages of merge work per level of the index each time 64 leaves (counting each
 * contentless delete as one) have been written, and crisismerge merges a whole level at once when
 * it reaches 16 segments. During a body backfill that made commits of 60-120 ms of CPU (a body
 * replaces its header-only row, a delete and an insert), and the daemon answers no search while a
 * commit runs. So the cache turns automerge off (a migration, `FTS_MERGE_SETTINGS` in schema.ts)
 * and merges itself between its write transactions in steps of UPKEEP_PAGES (`ftsUpkeep`);
 * crisismerge stays as a backstop at 64 segments on one level, which the upkeep keeps any level
 * far below.
 */

/** Segments in the FTS index (each has at least one row in %_idx, one per leaf page). */
const segments = (db: CacheDb) =>
  (db.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;

/** True when the FTS index has enough segments that merging them pays off. */
export function ftsNeedsMerge(db: CacheDb): boolean {
  return segments(db) >= MAX_SEGMENTS;
}

const changes = (db: CacheDb) => stmt(db, "SELECT total_changes() AS n").pluck().get() as number;

/**
 * One step of FTS5's incremental merge, as automerge picks its work (a level holding `usermerge`,
 * 4, or more segments; an unfinished merge; a level with 10% or more tombstones), writing at most
 * `pages` pages. Returns whether it merged anything (a step that changes fewer than two rows found
 * nothing to merge).
 */
export function mergeFtsStep(db: CacheDb, pages = UPKEEP_PAGES): boolean {
  const before = changes(db);
  stmt(db, "INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)").run(pages);
  checkpointSoon(db);
  return changes(db) - before >= 2;
}

/**
 * The merging automerge would do, outside any write transaction: merge steps of UPKEEP_PAGES,
 * each its own transaction with a background turn before it (./priority.ts: requests first), until
 * no level needs one.
 * `writeInSlices` runs it after each of its transactions, so no level of the index piles up
 * segments (every committed FTS write adds one). With `offThread` (a bulk writer: the body
 * backfill) the steps run on the header writer's thread (`mergeOffThread`), in jobs with a
 * background turn between two, when that thread runs; when it does not, the first step runs here
 * and only a step that found work starts it, so a write that leaves nothing to merge (new mail, a
 * message at a time) starts no thread for it.
 */
export async function ftsUpkeep(db: CacheDb, options: { offThread?: boolean } = {}): Promise<void> {
  for (;;) {
    await backgroundTurn();
    await takeTurn(db);
    if (options.offThread && writerRunning(db) && (await mergeRestOffThread(db, UPKEEP_PAGES))) return;
    if (!(await writeWhenFree(db, () => mergeFtsStep(db)))) return;
    if (options.offThread && (await mergeRestOffThread(db, UPKEEP_PAGES))) return;
  }
}

/**
 * Merge steps of `pages` on the header writer's thread until none is left, with a background turn
 * between two jobs: true once done, false at once when there is no such thread (the caller goes
 * on stepping on this one).
 */
async function mergeRestOffThread(db: CacheDb, pages: number): Promise<boolean> {
  for (;;) {
    const job = mergeOffThread(db, pages);
    if (!job) return false;
    if (!(await job)) return true;
    await backgroundTurn();
  }
}

/**
 * Merges the FTS index into one segment (and drops tombstones) when `ftsNeedsMerge` says so, in
 * bounded steps that yield to the event loop between them. Returns whether it merged.
 * `force` merges whenever there is more than one segment; `offThread` as `ftsUpkeep`'s.
 */
export async function compactFts(
  db: CacheDb,
  options: { force?: boolean; offThread?: boolean } = {},
): Promise<boolean> {
  if (options.force ? segments(db) < 2 : !ftsNeedsMerge(db)) return false;
  // (a bulk writer's: on the header writer's thread, as `ftsUpkeep`; what is left, if that thread
  // is not there, here)
  if (options.offThread) await mergeRestOffThread(db, -STEP_PAGES);
  // A negative page count merges segments of every level, as 'optimize' does, but a step at a
  // time; a step that changes fewer than two rows means there was nothing left to merge
  const step = stmt(db, "INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)");
  for (;;) {
    const merged = await writeWhenFree(db, () => {
      const before = changes(db);
      step.run(-STEP_PAGES);
      return changes(db) - before;
    });
    checkpointSoon(db);
    if (merged < 2) break;
    await backgroundTurn();
  }
  await releaseFreePages(db);
  return true;
}

/** Free pages given back per step of `releaseFreePages` (each step moves pages from the file's end). */
const VACUUM_PAGES = 256;

/**
 * Gives the free pages back to the file system in steps of VACUUM_PAGES, each its own transaction
 * with a background turn before it, in a cache created with `auto_vacuum = INCREMENTAL` (openCache
 * sets it on a new file; an older cache has none and keeps its free pages for later writes). A
 * full merge frees the pages of every segment it merged.
 */
export async function releaseFreePages(db: CacheDb): Promise<void> {
  if (db.pragma("auto_vacuum", { simple: true }) !== 2) return;
  const free = () => db.pragma("freelist_count", { simple: true }) as number;
  // (a step that gives nothing back ends it: nothing here waits on another connection)
  for (let left = free(), was = Number.POSITIVE_INFINITY; left > 0 && left < was; was = left, left = free()) {
    await backgroundTurn();
    await writeWhenFree(db, () => db.pragma(`incremental_vacuum(${VACUUM_PAGES})`));
    checkpointSoon(db);
  }
}

/** The indexed fields of one message, as the FTS row's columns take them (before `cjkSpaced`). */
export interface FtsFields {
  subject: string;
  from: string;
  to: string;
  cc: string;
  bcc: string;
  body: string;
}

/**
 * Adds a message's row to the FTS index, every field through `cjkSpaced`. Every writer of the index
 * goes through here, so the index and the query side (src/query/sql.ts, `ftsString`) agree.
 */
export function insertFts(db: CacheDb, id: number, f: FtsFields): void {
  stmt(
    db,
    "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
  ).run(
    id,
    cjkSpaced(f.subject),
    cjkSpaced(f.from),
    cjkSpaced(f.to),
    cjkSpaced(f.cc),
    cjkSpaced(f.bcc),
    cjkSpaced(f.body),
  );
}

/**
 * Adds (with `previous`, the message's subject as it was indexed: first removes) a message's row in
 * the subjects' own index (./storage-migration.ts), through `cjkSpaced` as `insertFts` writes the
 * subject column, and notes the change for the kept word counts (./subject-counts.ts). A subject
 * with nothing to index gets no row. A message row's deletion removes its row (a trigger).
 */
export function insertSubject(db: CacheDb, id: number, subject: string, previous?: string): void {
  if (!hasTable(db, "subjects_fts")) return;
  if (previous !== undefined) stmt(db, "DELETE FROM subjects_fts WHERE rowid = ?").run(id);
  const text = subject ? cjkSpaced(subject) : null;
  if (text !== null) stmt(db, "INSERT INTO subjects_fts (rowid, subject) VALUES (?, ?)").run(id, text);
  // (the same subject again changes no count: the common re-sync of a message)
  if (previous !== subject) noteSubjectChange(db, previous ? cjkSpaced(previous) : null, text);
}
