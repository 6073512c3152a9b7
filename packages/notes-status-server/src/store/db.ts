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

/** Applies the migrations the database has not seen yet, each in its own transaction. */
export function migrate(db: Db): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `The database is at schema version ${current}, newer than this program knows (${MIGRATIONS.length}); upgrade notes-status-mcp`,
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
  return MIGRATIONS.length;
}
