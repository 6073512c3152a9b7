import type { Store } from "./port.js";

export type { UserRow, UserSettings } from "./accounts.js";
export type { AuthStore, ClientRow, CodeRow, GrantRow, GrantTerms, TokenKind, TokenRow } from "./auth.js";
export { defaultDbPath } from "./db.js";
export type { Card, ListFilter, NewNote, NoteRow, Source } from "./notes.js";
export { SNIPPET_CHARS } from "./notes.js";
export type { AuthPort, Store, Transact, VectorHit, VectorSearch, VectorsPort } from "./port.js";
export type { Scope } from "./scope.js";
export { SqliteStore } from "./sqlite.js";

/** A PostgreSQL connection URL (postgres:// or postgresql://) rather than a SQLite file path. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** How a store searches vectors, as the start-up log and `dexi status` say it. */
export function vectorsInUse(store: Pick<Store, "vectorSearch">): string {
  return store.vectorSearch?.label ?? "in-process";
}
