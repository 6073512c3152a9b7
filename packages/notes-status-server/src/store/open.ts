import type { NotesRepository } from "../domain/types.js";
import { type Db, openDatabase } from "./db.js";
import { openPostgres } from "./postgres.js";
import { SqliteNotesRepository } from "./repository.js";

/** A PostgreSQL connection URL rather than a SQLite file path. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * Opens the store a `--db` value names: a postgres:// or postgresql:// URL is PostgreSQL, anything
 * else a SQLite file (":memory:" allowed). Either is migrated before it is returned.
 */
export async function openStore(location: string | Db): Promise<NotesRepository> {
  if (typeof location !== "string") return new SqliteNotesRepository(location);
  if (isPostgresUrl(location)) return openPostgres(location);
  return new SqliteNotesRepository(openDatabase(location));
}

/** The store for a log line: the kind and where it is, a URL without its password. */
export function describeStore(location: string): string {
  if (!isPostgresUrl(location)) return `sqlite ${location}`;
  const url = new URL(location);
  if (url.password) url.password = "***";
  return `postgresql ${url.toString()}`;
}
