/**
 * state.db: the daemon's own SQLite (WAL) with versioned migrations. It holds the audit log; later
 * issues (sends, events, items) add their tables as further migrations.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { ITEMS_MIGRATION } from "./items-schema.js";
import { EVENTS_ITEM_PATH_MIGRATION, EVENTS_MIGRATION } from "./events.js";
import { OUTBOX_FINGERPRINT_MIGRATION, OUTBOX_MIGRATION } from "./outbox.js";
import { ENDPOINTS_MIGRATION } from "./endpoints.js";
import { POLICY_MIGRATION } from "./policy.js";

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
  ITEMS_MIGRATION,
  EVENTS_MIGRATION,
  OUTBOX_MIGRATION,
  // A send the policy holds is audited as held. SQLite cannot change a CHECK, so the table is
  // rebuilt again with its rows and ids.
  `CREATE TABLE audit_new (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     time TEXT NOT NULL,
     client TEXT NOT NULL CHECK (client IN ('cli','mcp')),
     action TEXT NOT NULL,
     account TEXT,
     decision TEXT NOT NULL CHECK (decision IN ('allowed','denied','error','held','duplicate')),
     summary TEXT NOT NULL
   );
   INSERT INTO audit_new SELECT id, time, client, action, account, decision, summary FROM audit;
   DROP TABLE audit;
   ALTER TABLE audit_new RENAME TO audit;
   CREATE INDEX audit_action_time ON audit(action, time);
   CREATE INDEX audit_time ON audit(time);`,
  POLICY_MIGRATION,
  ENDPOINTS_MIGRATION,
  OUTBOX_FINGERPRINT_MIGRATION,
  EVENTS_ITEM_PATH_MIGRATION,
];

/** The schema version a fully migrated state.db has (its user_version). */
export const STATE_SCHEMA_VERSION = MIGRATIONS.length;

export type Decision = "allowed" | "denied" | "error" | "held" | "duplicate";
export type ClientKind = "cli" | "mcp";
/** Who an audit row is for: a connected client, or `config` for a change read from config.toml. */
export type AuditClient = ClientKind | "config";

export interface AuditRow {
  id: number;
  time: string;
  client: AuditClient;
  action: string;
  account: string | null;
  decision: Decision;
  summary: string;
}

export interface StateDbOptions {
  /** Where audit write failures are reported (never given summaries' contents beyond the action). */
  log?: (line: string) => void;
  /** Audit rows kept in memory while the store refuses them; the oldest go first past this. */
  maxPendingAudit?: number;
}

type PendingRow = Omit<AuditRow, "id">;

function toPending(row: Omit<AuditRow, "id" | "time"> & { time?: string }): PendingRow {
  return {
    time: row.time ?? new Date().toISOString(),
    client: row.client,
    action: row.action,
    account: row.account,
    decision: row.decision,
    summary: row.summary.slice(0, 500),
  };
}

/** A row that can never be stored (a CHECK or NOT NULL violation) is a bug, not a passing fault. */
const isBadRow = (err: unknown) =>
  ["SQLITE_CONSTRAINT_CHECK", "SQLITE_CONSTRAINT_NOTNULL"].includes((err as { code?: string })?.code ?? "");

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 30_000;

export class StateDb {
  readonly db: Database.Database;
  private readonly log: (line: string) => void;
  private readonly maxPending: number;
  /** Audit rows the store refused, oldest first, written before any newer row. */
  private readonly pending: PendingRow[] = [];
  private lost = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  private lastError = "";

  constructor(file: string, options: StateDbOptions = {}) {
    this.log = options.log ?? (() => undefined);
    this.maxPending = options.maxPendingAudit ?? 10_000;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    // Short: a write that waits for another process's lock blocks the daemon's event loop, and a
    // refused audit row waits in memory anyway.
    this.db.pragma("busy_timeout = 250");
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

  // Prepared once: every call the daemon answers writes an audit row, and preparing the INSERT
  // each time was a tenth of a cached search's time in the daemon
  private insertStmt: Database.Statement | undefined;

  private insert(row: PendingRow): void {
    this.insertStmt ??= this.db.prepare(
      "INSERT INTO audit (time, client, action, account, decision, summary) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.insertStmt.run(row.time, row.client, row.action, row.account, row.decision, row.summary);
  }

  /**
   * Records one row. A store that refuses the insert (locked, read-only, full, a failing disk) never
   * fails the operation being audited: the row is logged, kept in memory and written, in order and
   * with its own time, on the next audit, read or retry. Returns whether the row is in the table.
   */
  audit(row: Omit<AuditRow, "id" | "time"> & { time?: string }): boolean {
    const full = toPending(row);
    // Reads queued earlier in this turn go first, so ids follow time
    this.flushReads();
    if (this.flushAudit()) {
      try {
        this.insert(full);
        return true;
      } catch (err) {
        if (isBadRow(err)) throw err;
        this.lastError = (err as Error).message;
      }
    }
    this.log(`audit: writing a ${full.action} row failed, keeping it to retry: ${this.lastError}`);
    this.pending.push(full);
    if (this.pending.length > this.maxPending) {
      this.pending.shift();
      if (this.lost++ === 0)
        this.log(`audit: more than ${this.maxPending} rows wait for the store; the oldest are dropped`);
    }
    this.scheduleRetry();
    return false;
  }

  /** Read rows queued in this event-loop turn (auditRead), not yet in the table. */
  private readonly reads: PendingRow[] = [];
  private readsScheduled = false;

  /**
   * Records a read's row (search, get_message, get_thread): it is written with every other read of
   * this event-loop turn in one transaction at the turn's end, instead of a commit per call. Until
   * then it is in memory only, so a crash in between loses it; a write's row (audit) never waits.
   */
  auditRead(row: Omit<AuditRow, "id" | "time"> & { time?: string }): void {
    this.reads.push(toPending(row));
    if (this.readsScheduled) return;
    this.readsScheduled = true;
    setImmediate(() => {
      this.readsScheduled = false;
      this.flushReads();
    });
  }

  /** Moves the queued reads behind the rows waiting for the store and writes them all at once. */
  private flushReads(): void {
    if (this.reads.length === 0 || !this.db.open) return;
    const rows = this.reads.splice(0);
    const waiting = this.pending.length;
    this.pending.push(...rows);
    let written: boolean;
    try {
      written = this.writePending(waiting > 0);
    } catch (err) {
      // A row no table can take is a bug; at the end of a turn there is no caller to throw to
      this.pending.splice(waiting);
      this.log(
        `audit: ${rows.length} read row(s) can never be stored and are dropped: ${(err as Error).message}`,
      );
      return;
    }
    if (written) return;
    this.log(`audit: writing ${rows.length} read row(s) failed, keeping them to retry: ${this.lastError}`);
    while (this.pending.length > this.maxPending) {
      this.pending.shift();
      if (this.lost++ === 0)
        this.log(`audit: more than ${this.maxPending} rows wait for the store; the oldest are dropped`);
    }
    this.scheduleRetry();
  }

  /** Writes the rows waiting in memory; true when none is left. */
  flushAudit(): boolean {
    return this.writePending(true);
  }

  /** Writes `pending` in one transaction; `delayed`: some of them waited for a refusing store. */
  private writePending(delayed: boolean): boolean {
    if (this.pending.length === 0) return true;
    try {
      this.db.transaction(() => {
        for (const r of this.pending) this.insert(r);
      })();
    } catch (err) {
      if (isBadRow(err)) throw err;
      this.lastError = (err as Error).message;
      return false;
    }
    if (delayed)
      this.log(
        `audit: wrote ${this.pending.length} delayed row(s)${this.lost ? `; ${this.lost} row(s) were dropped` : ""}`,
      );
    this.pending.length = 0;
    this.lost = 0;
    this.retryMs = RETRY_FIRST_MS;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    return true;
  }

  /** Rows waiting in memory for the store. */
  pendingAudit(): number {
    return this.pending.length;
  }

  private scheduleRetry(): void {
    if (this.retryTimer || !this.db.open) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.db.open || this.flushAudit()) return;
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      this.scheduleRetry();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  readAudit(filter: { action?: string; since?: string; limit?: number }): AuditRow[] {
    this.flushReads();
    this.flushAudit();
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
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.flushReads();
    if (!this.flushAudit()) this.log(`audit: ${this.pending.length} row(s) could not be written before exit`);
    this.db.close();
  }
}
