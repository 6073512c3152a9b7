import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { migrate } from "./migrations.js";

/** The default database file: $XDG_DATA_HOME/dexi/dexi.db, else ~/.local/share/dexi/dexi.db. */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env["XDG_DATA_HOME"] || join(homedir(), ".local", "share");
  return join(base, "dexi", "dexi.db");
}

/** Opens (creating when needed) and migrates a dexi database. `:memory:` gives a private in-memory one. */
export function openDatabase(path: string): Database.Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  const fresh = (db.pragma("user_version", { simple: true }) as number) === 0 && isEmpty(db);
  // Page size only takes on an empty database, before WAL; 16 KiB packs vectors densely (see migrations).
  if (fresh) db.pragma("page_size = 16384");
  db.pragma("journal_mode = WAL");
  // NORMAL in WAL mode: a committed transaction survives a process crash (SIGKILL); only an OS crash
  // or power loss can lose the last commits, never corrupt the file.
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  migrate(db);
  return db;
}

function isEmpty(db: Database.Database): boolean {
  const row = db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number };
  return row.n === 0;
}
