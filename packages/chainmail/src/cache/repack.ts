// Indexes rebuilt full after a bulk load (issue 34: cache.db at most a fifth of the Maildir).
//
// A first sync writes the headers newest batch first, each batch's rows in ascending order, so
// every batch is inserted just before the previous one: the b-tree pages where it lands are split
// again and again and left part empty. The body backfill moves each row of `messages_body` from
// state 0 to 1 the same way. At 100,000 messages the indexes of `messages` and `message_meta` held
// 4.8 MiB of unused space (dbstat, kept cache of the scale run); REINDEX rebuilds an index from a
// sorted pass, every page full. Tables cannot be rebuilt that way (only VACUUM rewrites them, 2.3 s
// at 100,000 with the daemon answering nothing), so they stay as written.
//
// After a bulk load the date-ordered indexes stay full: new mail is the newest and lands at their
// right edge, where SQLite appends. The others (thread key, Message-ID, size) take later mail in
// the middle and settle back towards the usual two-thirds full over many inserts.
import { checkpointSoon } from "./checkpoint.js";
import { releaseFreePages } from "./fts.js";
import { backgroundTurn } from "./priority.js";
import type { CacheDb } from "./schema.js";

/**
 * Messages a pass must add for its indexes to be rebuilt: a first sync or a large catch-up. Below
 * that the split pages are few and not worth a rebuild that holds every request up (a REINDEX is
 * one statement: about 0.2 s for the largest index at 100,000 messages on a loaded core).
 */
export const REPACK_MIN_ADDED = 10_000;

/** The indexes of the tables written per message (their own and those of UNIQUE constraints). */
function messageIndexes(db: CacheDb): string[] {
  return db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('messages', 'message_meta') ORDER BY name",
    )
    .pluck()
    .all() as string[];
}

/**
 * Rebuilds every index of `messages` and `message_meta`, each in its own statement after a
 * background turn (./priority.ts: requests first), then gives the freed pages back to the file
 * system (a cache created with incremental auto-vacuum; an older one keeps them for its next
 * writes). Returns the indexes rebuilt.
 */
export async function repackIndexes(db: CacheDb): Promise<string[]> {
  const names = messageIndexes(db);
  for (const name of names) {
    await backgroundTurn();
    // (a name from sqlite_master, quoted as an identifier)
    db.exec(`REINDEX "${name.replaceAll('"', '""')}"`);
    checkpointSoon(db);
  }
  await releaseFreePages(db);
  return names;
}
