// Whether the cache file has a table. A cache at an earlier schema version lacks the later ones (the
// tests of each migration write such files with this code; openCache migrates before any write), and
// the code that writes a table only there (the subjects' index, the kept subject counts) asks first.
// Asked once per connection and table; `schemaChanged` (called by `migrate`) forgets the answers.
import type { CacheDb } from "./schema.js";

const known = new WeakMap<CacheDb, Map<string, boolean>>();

export function hasTable(db: CacheDb, name: string): boolean {
  let tables = known.get(db);
  if (!tables) {
    tables = new Map();
    known.set(db, tables);
  }
  let has = tables.get(name);
  if (has === undefined) {
    has = db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
    tables.set(name, has);
  }
  return has;
}

/** Forgets what `hasTable` found on this connection (the schema changed). */
export function schemaChanged(db: CacheDb): void {
  known.delete(db);
}
