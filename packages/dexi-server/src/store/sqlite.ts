import { AsyncLocalStorage } from "node:async_hooks";
import type Database from "better-sqlite3";
import { Accounts } from "./accounts.js";
import { SqliteAuthStore } from "./auth.js";
import { openDatabase } from "./db.js";
import { NoteStore } from "./notes.js";
import type {
  AccountsPort,
  Async,
  AuthPort,
  NotesPort,
  RecordsPort,
  Store,
  TombstonesPort,
  VectorsPort,
} from "./port.js";
import { Records } from "./records.js";
import { Tombstones } from "./tombstones.js";
import { VectorStore } from "./vectors.js";

/** The transaction an async flow is inside; `open` turns false at its end, so a late flow cannot use it. */
interface TxScope {
  open: boolean;
}

const noop = () => {};

/**
 * Serialises use of the one better-sqlite3 connection. It is synchronous and has one transaction, while
 * the domain's transactions span awaits: so while a transaction is open every other call waits its turn
 * in one queue, and a transaction holds the queue from BEGIN to COMMIT. Calls made from inside a
 * transaction's async flow (AsyncLocalStorage) run in it at once; with nothing queued a call runs at once.
 */
class Turns {
  private readonly scope = new AsyncLocalStorage<TxScope>();
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  constructor(private readonly db: Database.Database) {}

  run<T>(fn: () => T): Promise<T> {
    if (this.scope.getStore()?.open || this.waiting === 0) return attempt(fn);
    return this.enqueue(async () => fn());
  }

  tx<T>(fn: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()?.open) return fn();
    return this.enqueue(async () => {
      const scope: TxScope = { open: true };
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const out = await this.scope.run(scope, fn);
        this.db.exec("COMMIT");
        return out;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw err;
      } finally {
        scope.open = false;
      }
    });
  }

  /** Whether no call is waiting or running its turn. */
  get idle(): boolean {
    return this.waiting === 0;
  }

  /** Settles when every call queued so far has had its turn. */
  drained(): Promise<void> {
    return this.tail.then(noop);
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    this.waiting++;
    const p = this.tail.then(async () => {
      try {
        return await job();
      } finally {
        this.waiting--;
      }
    });
    this.tail = p.then(noop, noop);
    return p;
  }
}

function attempt<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}

/** The async face of a synchronous store class: each public method called in its turn. */
function inTurn<T extends object, E extends object = Record<never, never>>(
  target: T,
  turns: Turns,
  extra?: E,
): Async<T> & E {
  return new Proxy(target, {
    get(obj, prop) {
      if (extra && Object.hasOwn(extra, prop)) return Reflect.get(extra, prop);
      const value: unknown = Reflect.get(obj, prop);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => turns.run(() => value.apply(obj, args));
    },
  }) as unknown as Async<T> & E;
}

/** The embedded SQLite store. Everything SQL-specific stays under src/store. */
export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly accounts: AccountsPort;
  readonly notes: NotesPort;
  readonly vectors: VectorsPort;
  readonly records: RecordsPort;
  readonly tombstones: TombstonesPort;
  readonly auth: AuthPort;
  /** The synchronous classes, for SQLite-only tools (the bench, the migration copy, tests). */
  readonly sync: {
    accounts: Accounts;
    notes: NoteStore;
    vectors: VectorStore;
    records: Records;
    tombstones: Tombstones;
    auth: SqliteAuthStore;
  };
  private readonly turns: Turns;

  constructor(readonly db: Database.Database) {
    const turns = new Turns(db);
    this.turns = turns;
    this.sync = {
      accounts: new Accounts(db),
      notes: new NoteStore(db),
      vectors: new VectorStore(db),
      records: new Records(db),
      tombstones: new Tombstones(db),
      auth: new SqliteAuthStore(db),
    };
    this.accounts = inTurn(this.sync.accounts, turns);
    this.notes = inTurn(this.sync.notes, turns);
    this.records = inTurn(this.sync.records, turns);
    this.tombstones = inTurn(this.sync.tombstones, turns);
    const vectors = this.sync.vectors;
    this.vectors = inTurn(vectors, turns, {
      each: (model: string, visit: (id: number, vec: Float32Array) => void) =>
        turns.run(() => {
          for (const { id, vec } of vectors.all(model)) visit(id, vec);
        }),
    });
    this.auth = inTurn(this.sync.auth, turns, { tx: this.tx });
  }

  static open(path: string): SqliteStore {
    return new SqliteStore(openDatabase(path));
  }

  readonly tx = <T>(fn: () => Promise<T>): Promise<T> => this.turns.tx(fn);

  /** Closes at once when nothing is queued (so a caller that does not await it still closes it). */
  async close(): Promise<void> {
    if (!this.turns.idle) await this.turns.drained();
    this.db.close();
  }
}
