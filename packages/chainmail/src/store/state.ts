/**
 * state.db: the daemon's own SQLite (WAL) with versioned migrations. It holds the audit log; later
 * issues (sends, events, items) add their tables as further migrations.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

const MIGRATIONS: string[] = [
  `CREATE TABLE audit (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     time TEXT NOT NULL,
     client TEXT NOT NULL CHECK (client IN ('cli','mcp')),
     action TEXT NOT NULL,
     account TEXT,
     decision TEXT NOT NULL CHECK (decision IN ('allowed','denied','error')),
     summary TEXT NOT NULL
   );
   CREATE INDEX audit_action_time ON audit(action, time);
   CREATE INDEX audit_time ON audit(time);`,
];

export type Decision = "allowed" | "denied" | "error";
export type ClientKind = "cli" | "mcp";

export interface AuditRow {
  id: number;
  time: string;
  client: ClientKind;
  action: string;
  account: string | null;
  decision: Decision;
  summary: string;
}

export class StateDb {
  readonly db: Database.Database;
  constructor(file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("foreign_keys = ON");
    fs.chmodSync(file, 0o600);
    this.migrate();
  }

  private migrate(): void {
    const current = this.db.pragma("user_version", { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[v]!);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  schemaVersion(): number {
    return this.db.pragma("user_version", { simple: true }) as number;
  }

  audit(row: Omit<AuditRow, "id" | "time"> & { time?: string }): void {
    this.db
      .prepare(
        "INSERT INTO audit (time, client, action, account, decision, summary) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(
        row.time ?? new Date().toISOString(),
        row.client,
        row.action,
        row.account,
        row.decision,
        row.summary.slice(0, 500),
      );
  }

  /** Several rows at once, all or none. */
  auditMany(rows: Array<Omit<AuditRow, "id" | "time">>): void {
    const time = new Date().toISOString();
    this.db.transaction(() => {
      for (const r of rows) this.audit({ ...r, time });
    })();
  }

  readAudit(filter: { action?: string; since?: string; limit?: number }): AuditRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.action) {
      where.push("action = ?");
      args.push(filter.action);
    }
    if (filter.since) {
      where.push("time >= ?");
      args.push(filter.since);
    }
    const sql = `SELECT id, time, client, action, account, decision, summary FROM audit ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    return this.db.prepare(sql).all(...args, filter.limit ?? 1000) as AuditRow[];
  }

  close(): void {
    this.db.close();
  }
}
