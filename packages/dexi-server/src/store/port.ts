import type { Accounts } from "./accounts.js";
import type { AuthStore } from "./auth.js";
import type { NoteStore } from "./notes.js";
import type { Records } from "./records.js";
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
  /** Runs `fn` in one transaction: all of it is written, or none. Nested calls join the open one. */
  tx: Transact;
  close(): Promise<void>;
}
