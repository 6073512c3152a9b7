import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS } from "./migrations.js";

export type Db = Database.Database;

export const APP_DIR_NAME = "notes-status-mcp";

/** $XDG_DATA_HOME/notes-status-mcp, else ~/.local/share/notes-status-mcp. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env["XDG_DATA_HOME"] || join(homedir(), ".local", "share");
  return join(base, APP_DIR_NAME);
}

export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(defaultDataDir(env), "notes.db");
}

/** Opens (creating the folder and file if needed) and migrates a database. ":memory:" is allowed. */
export function openDatabase(path: string): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  // A cron run and the server may write at once; wait for the other rather than fail.
  db.pragma("busy_timeout = 5000");
  migrate(db);
  return db;
}

/**
 * Applies the migrations the database has not seen yet, each in its own transaction. Foreign keys are
 * off meanwhile (the pragma cannot change inside a transaction) so that a migration may rebuild a
 * referenced table; each one must still leave every reference valid, or it is rolled back.
 */
export function migrate(db: Db): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `The database is at schema version ${current}, newer than this program knows (${MIGRATIONS.length}); upgrade notes-status-mcp`,
    );
  }
  if (current === MIGRATIONS.length) return MIGRATIONS.length;
  const foreignKeys = db.pragma("foreign_keys", { simple: true }) as number;
  db.pragma("foreign_keys = OFF");
  try {
    for (let v = current; v < MIGRATIONS.length; v++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[v]!);
        const broken = db.pragma("foreign_key_check") as unknown[];
        if (broken.length > 0) {
          throw new Error(`Migration ${v + 1} left ${broken.length} broken references; nothing was changed`);
        }
        db.pragma(`user_version = ${v + 1}`);
      }).immediate();
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? "ON" : "OFF"}`);
  }
  return MIGRATIONS.length;
}
