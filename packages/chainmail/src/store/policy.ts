/**
 * The confirmed policy of each account in state.db. config.toml says what the owner (or anything
 * that can write the file) asks for; this table says what the owner has confirmed, so a widening
 * written into the file waits here until `chainmail policy confirm`.
 */
import type Database from "better-sqlite3";

// policy_adopted is no longer read: it marked a first start that adopted config.toml's policies,
// which a deleted state.db would repeat (every account now starts CLOSED until the owner confirms).
// The audit table is rebuilt (SQLite cannot change a CHECK) so that changes read from config.toml
// can be audited under their own client, `config`: nobody connected made them.
export const POLICY_MIGRATION = `CREATE TABLE policy (
     account TEXT PRIMARY KEY,
     confirmed TEXT NOT NULL,
     pending TEXT,
     updated TEXT NOT NULL
   );
   CREATE TABLE policy_adopted (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     at TEXT NOT NULL
   );
   CREATE TABLE audit_new (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     time TEXT NOT NULL,
     client TEXT NOT NULL CHECK (client IN ('cli','mcp','config')),
     action TEXT NOT NULL,
     account TEXT,
     decision TEXT NOT NULL CHECK (decision IN ('allowed','denied','error','held','duplicate')),
     summary TEXT NOT NULL
   );
   INSERT INTO audit_new SELECT id, time, client, action, account, decision, summary FROM audit;
   DROP TABLE audit;
   ALTER TABLE audit_new RENAME TO audit;
   CREATE INDEX audit_action_time ON audit(action, time);
   CREATE INDEX audit_time ON audit(time);`;

export interface PolicyRow {
  account: string;
  /** The confirmed policy (JSON of Gates). */
  confirmed: string;
  /** config.toml's policy while it is wider than the confirmed one (JSON of Gates), else null. */
  pending: string | null;
  updated: string;
}

export class PolicyStore {
  constructor(private readonly db: Database.Database) {}

  get(account: string): PolicyRow | undefined {
    return this.db
      .prepare("SELECT account, confirmed, pending, updated FROM policy WHERE account = ?")
      .get(account) as PolicyRow | undefined;
  }

  put(account: string, confirmed: string, pending: string | null): void {
    this.db
      .prepare(
        `INSERT INTO policy (account, confirmed, pending, updated) VALUES (?, ?, ?, ?)
         ON CONFLICT(account) DO UPDATE SET confirmed = excluded.confirmed, pending = excluded.pending,
           updated = excluded.updated`,
      )
      .run(account, confirmed, pending, new Date().toISOString());
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
