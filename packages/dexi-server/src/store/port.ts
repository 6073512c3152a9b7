import type { Accounts } from "./accounts.js";
import type { AuthStore } from "./auth.js";
import type { NoteStore } from "./notes.js";
import type { Records } from "./records.js";
import type { Scope } from "./scope.js";
import type { Tombstones } from "./tombstones.js";
import type { VectorStore } from "./vectors.js";

/** Every public method of `T`, returning a promise of what it returned. */
export type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** Runs a function inside the store's one open transaction (or opens one). */
export type Transact = <T>(fn: () => Promise<T>) => Promise<T>;

export type NotesPort = Async<NoteStore>;
export type AccountsPort = Async<Accounts>;
export type RecordsPort = Async<Records>;
export type TombstonesPort = Async<Tombstones>;
/** Vectors, streamed to a visitor rather than returned as one array (100k vectors are 200 MB). */
export type VectorsPort = Async<Omit<VectorStore, "all">> & {
  each(model: string, visit: (id: number, vec: Float32Array) => void): Promise<void>;
};
/** A nearest note and its cosine similarity (-1..1). */
export interface VectorHit {
  id: number;
  cosine: number;
}

/**
 * Nearest neighbours found by the database itself (pgvector), the reader's access rules inside the
 * query: every hit is visible to `scope`, and a reader gets `k` of them whenever it can see `k`.
 */
export interface VectorSearch {
  /** How it searches, for the start-up log and `dexi status`: `pgvector exact`, `pgvector hnsw (threshold N)`. */
  readonly label: string;
  /** The `k` visible notes nearest `query` among this model's vectors, never `exclude`; best first, ties by id. */
  nearest(
    scope: Scope,
    model: string,
    query: Float32Array,
    k: number,
    exclude?: number,
  ): Promise<VectorHit[]>;
}

export type AuthPort = Async<Omit<AuthStore, "tx">> & { tx: Transact };

/**
 * The store the domain and auth see: the same operations on every engine, all async. Which engine is
 * underneath (`kind`) is for start-up logs and the admin CLI only; no domain rule reads it.
 */
export interface Store {
  readonly kind: "sqlite" | "postgres";
  readonly accounts: AccountsPort;
  readonly notes: NotesPort;
  readonly vectors: VectorsPort;
  readonly records: RecordsPort;
  readonly tombstones: TombstonesPort;
  readonly auth: AuthPort;
  /** Set when the database searches vectors itself; otherwise Dexi scores them in process. */
  readonly vectorSearch?: VectorSearch;
  /** Runs `fn` in one transaction: all of it is written, or none. Nested calls join the open one. */
  tx: Transact;
  close(): Promise<void>;
}
