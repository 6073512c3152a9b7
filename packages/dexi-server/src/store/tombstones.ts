import type Database from "better-sqlite3";

/**
 * Content keys of imported notes their owner deleted, with when. An import skips a remembered key, so
 * a deleted feed article, bookmark, email or vault note does not come back on the next poll or import.
 */
export class Tombstones {
  constructor(private readonly db: Database.Database) {}

  remember(userId: number, key: string, nowMs: number): void {
    this.db
      .prepare(
        `INSERT INTO import_tombstones (user_id, content_key, deleted_ms) VALUES (?, ?, ?)
         ON CONFLICT (user_id, content_key) DO UPDATE SET deleted_ms = excluded.deleted_ms`,
      )
      .run(userId, key, nowMs);
  }

  /** Whether the key was deleted at or after `sinceMs`. */
  has(userId: number, key: string, sinceMs: number): boolean {
    return (
      this.db
        .prepare("SELECT 1 FROM import_tombstones WHERE user_id = ? AND content_key = ? AND deleted_ms >= ?")
        .get(userId, key, sinceMs) !== undefined
    );
  }

  forget(userId: number, key: string): void {
    this.db.prepare("DELETE FROM import_tombstones WHERE user_id = ? AND content_key = ?").run(userId, key);
  }

  /** Drops every deletion older than `beforeMs`; returns how many. */
  expire(beforeMs: number): number {
    return this.db.prepare("DELETE FROM import_tombstones WHERE deleted_ms < ?").run(beforeMs).changes;
  }
}
