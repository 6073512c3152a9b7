/**
 * The outbox in state.db: one row per idempotency key. A send's intent, with the Message-ID it will
 * carry, is committed before its SMTP transaction starts, and its outcome when the server accepts,
 * so a daemon killed in between knows, at its next start, which sends it cannot vouch for.
 */
import type Database from "better-sqlite3";

export const OUTBOX_MIGRATION = `CREATE TABLE outbox (
     key TEXT PRIMARY KEY,
     account TEXT NOT NULL,
     tool TEXT NOT NULL,
     message_id TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('pending','sent','held')),
     created TEXT NOT NULL,
     updated TEXT NOT NULL,
     result TEXT
   );
   CREATE INDEX outbox_status ON outbox(status);
   CREATE INDEX outbox_created ON outbox(created);`;

/**
 * Each row keeps the fingerprint of the input it was made for (the key a call derives from its
 * content), so a caller's key used again for a different message is told apart from a retry. Rows
 * from before this step have none and are taken as retries, as they were.
 */
export const OUTBOX_FINGERPRINT_MIGRATION = "ALTER TABLE outbox ADD COLUMN fingerprint TEXT;";

export type OutboxStatus = "pending" | "sent" | "held";

export interface OutboxRow {
  key: string;
  account: string;
  tool: string;
  message_id: string;
  status: OutboxStatus;
  created: string;
  updated: string;
  /** The compose result as JSON, once there is one. */
  result: string | null;
  /** The derived key of the input the row was made for; null on rows older than the column. */
  fingerprint: string | null;
}

const COLUMNS = "key, account, tool, message_id, status, created, updated, result, fingerprint";

export class OutboxStore {
  constructor(private readonly db: Database.Database) {}

  /** Forgets rows created before `before` (RFC 3339): their keys may send again. */
  prune(before: string): void {
    this.db.prepare("DELETE FROM outbox WHERE created < ? AND status <> 'pending'").run(before);
  }

  get(key: string): OutboxRow | undefined {
    return this.db.prepare(`SELECT ${COLUMNS} FROM outbox WHERE key = ?`).get(key) as OutboxRow | undefined;
  }

  /** Inserts the intent, committed before it returns; false when the key already has a row. */
  begin(
    row: Omit<OutboxRow, "updated" | "result" | "fingerprint"> & { fingerprint?: string | null },
  ): boolean {
    const res = this.db
      .prepare(
        `INSERT INTO outbox (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?) ON CONFLICT(key) DO NOTHING`,
      )
      .run(
        row.key,
        row.account,
        row.tool,
        row.message_id,
        row.status,
        row.created,
        row.created,
        row.fingerprint ?? null,
      );
    return res.changes === 1;
  }

  /**
   * Turns a held row into the intent of a new attempt (a hold sent nothing, so the retry is a send
   * of its own), committed before it returns; false when the row is no longer held.
   */
  retake(key: string, messageId: string, created: string): boolean {
    return (
      this.db
        .prepare(
          "UPDATE outbox SET status = 'pending', message_id = ?, created = ?, updated = ?, result = NULL WHERE key = ? AND status = 'held'",
        )
        .run(messageId, created, created, key).changes === 1
    );
  }

  finish(key: string, status: OutboxStatus, result: unknown): void {
    this.db
      .prepare("UPDATE outbox SET status = ?, result = ?, updated = ? WHERE key = ?")
      .run(status, JSON.stringify(result), new Date().toISOString(), key);
  }

  remove(key: string): boolean {
    return this.db.prepare("DELETE FROM outbox WHERE key = ?").run(key).changes === 1;
  }

  list(status?: OutboxStatus): OutboxRow[] {
    return (
      status
        ? this.db.prepare(`SELECT ${COLUMNS} FROM outbox WHERE status = ? ORDER BY created`).all(status)
        : this.db.prepare(`SELECT ${COLUMNS} FROM outbox ORDER BY created`).all()
    ) as OutboxRow[];
  }
}
