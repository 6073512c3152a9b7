import type Database from "better-sqlite3";
import { Accounts } from "./accounts.js";
import { type AuthStore, SqliteAuthStore } from "./auth.js";
import { openDatabase } from "./db.js";
import { NoteStore } from "./notes.js";
import { Records } from "./records.js";
import { Tombstones } from "./tombstones.js";
import { VectorStore } from "./vectors.js";

export type { UserRow, UserSettings } from "./accounts.js";
export type { AuthStore, ClientRow, CodeRow, GrantRow, GrantTerms, TokenKind, TokenRow } from "./auth.js";
export { defaultDbPath } from "./db.js";
export type { Card, ListFilter, NewNote, NoteRow, Source } from "./notes.js";
export { SNIPPET_CHARS } from "./notes.js";
export type { Scope } from "./scope.js";

/** The embedded SQLite store. Everything SQL-specific stays under src/store. */
export class Store {
  readonly accounts: Accounts;
  readonly notes: NoteStore;
  readonly vectors: VectorStore;
  readonly records: Records;
  readonly tombstones: Tombstones;
  readonly auth: AuthStore;

  constructor(readonly db: Database.Database) {
    this.accounts = new Accounts(db);
    this.notes = new NoteStore(db);
    this.vectors = new VectorStore(db);
    this.records = new Records(db);
    this.tombstones = new Tombstones(db);
    this.auth = new SqliteAuthStore(db);
  }

  static open(path: string): Store {
    return new Store(openDatabase(path));
  }

  /** Runs `fn` in one IMMEDIATE transaction: all of it is written, or none. */
  tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  close(): void {
    this.db.close();
  }
}
