/**
 * The confirmed endpoint (provider, username, IMAP and SMTP servers) of each account in state.db. Rows
 * are never deleted: an account removed from config.toml and added back with another server is a
 * change that waits for the owner, not a new account. An account seen before the owner confirmed any
 * server settings of it has the JSON `null` as its confirmed endpoint (config.toml's waits as pending).
 */
import type Database from "better-sqlite3";

export const ENDPOINTS_MIGRATION = `CREATE TABLE endpoints (
     account TEXT PRIMARY KEY,
     confirmed TEXT NOT NULL,
     pending TEXT,
     updated TEXT NOT NULL
   );`;

export interface EndpointRow {
  account: string;
  /** The confirmed endpoint (JSON of Endpoint), or `null` (JSON) while none is confirmed yet. */
  confirmed: string;
  /** config.toml's endpoint while it differs from the confirmed one (JSON of Endpoint), else null. */
  pending: string | null;
}

export class EndpointStore {
  constructor(private readonly db: Database.Database) {}

  get(account: string): EndpointRow | undefined {
    return this.db
      .prepare("SELECT account, confirmed, pending FROM endpoints WHERE account = ?")
      .get(account) as EndpointRow | undefined;
  }

  put(account: string, confirmed: string, pending: string | null): void {
    this.db
      .prepare(
        `INSERT INTO endpoints (account, confirmed, pending, updated) VALUES (?, ?, ?, ?)
         ON CONFLICT(account) DO UPDATE SET confirmed = excluded.confirmed, pending = excluded.pending,
           updated = excluded.updated`,
      )
      .run(account, confirmed, pending, new Date().toISOString());
  }
}
