import { AsyncLocalStorage } from "node:async_hooks";
import { pgTransaction } from "@mcpforge/toolkit";
import pg from "pg";

/**
 * One key for every write transaction of this store: they run one at a time across all instances, as
 * SQLite's BEGIN IMMEDIATE makes them run in one file, so a read-then-write (the note cap, a code's
 * first use) sees no other writer in between. The number is arbitrary; it only has to be Dexi's own.
 */
const WRITE_LOCK = 4_211_730_516;

interface TxScope {
  client: pg.PoolClient;
  open: boolean;
}

/** BIGINT (ids, milliseconds, counts) as a JS number: every value Dexi stores fits one exactly. */
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format ?? "text")) as never,
};

/**
 * Whether a value holds U+0000, which PostgreSQL text cannot: no stored name, key or id holds it, so a
 * lookup by such a value finds nothing (the SQLite store's answer) without asking the server, which
 * would refuse the query.
 */
export function holdsNul(value: string): boolean {
  return value.includes("\u0000");
}

/** Rewrites `?` placeholders (the SQLite store's) as `$1..$n`; Dexi's SQL has no `?` inside literals. */
export function numbered(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

/**
 * A pool of connections; a transaction holds one connection for its whole async flow
 * (AsyncLocalStorage), so every call from inside it runs on that connection.
 */
export class Pg {
  readonly pool: pg.Pool;
  private readonly scope = new AsyncLocalStorage<TxScope>();

  constructor(url: string) {
    this.pool = new pg.Pool({ connectionString: url, max: 10, types });
    // An idle connection the server dropped must not take the process down.
    this.pool.on("error", () => undefined);
  }

  /** Rows of a query written with `?` placeholders. */
  async all<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    const tx = this.scope.getStore();
    const db = tx?.open ? tx.client : this.pool;
    return (await db.query(numbered(sql), params as unknown[])).rows as R[];
  }

  async get<R>(sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
    return (await this.all<R>(sql, params))[0];
  }

  /** Runs a statement; returns how many rows it changed. */
  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    const tx = this.scope.getStore();
    const db = tx?.open ? tx.client : this.pool;
    return (await db.query(numbered(sql), params as unknown[])).rowCount ?? 0;
  }

  async tx<T>(fn: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()?.open) return fn(); // part of the enclosing transaction
    return this.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [WRITE_LOCK]);
    }, fn);
  }

  /**
   * Runs `fn` in a read transaction with `settings` applied to it alone (SET LOCAL, e.g. pgvector's
   * `hnsw.ef_search`), without the write lock; inside an open transaction it joins that one.
   */
  async read<T>(settings: Record<string, string>, fn: () => Promise<T>): Promise<T> {
    const apply = async (client: pg.PoolClient) => {
      for (const [k, v] of Object.entries(settings))
        await client.query("SELECT set_config($1, $2, true)", [k, v]);
    };
    const open = this.scope.getStore();
    if (open?.open) {
      await apply(open.client);
      return fn();
    }
    return this.transaction(apply, fn);
  }

  /**
   * Runs `fn`'s statements on one connection of their own, outside any transaction (CREATE INDEX
   * CONCURRENTLY cannot run in one), with `settings` for that session and the server's notices handed
   * to `onNotice`. The connection is closed afterwards rather than returned to the pool, so no other
   * query ever runs with those settings.
   */
  async session<T>(
    settings: Record<string, string>,
    fn: (run: (sql: string, params?: readonly unknown[]) => Promise<number>) => Promise<T>,
    onNotice?: (message: string) => void,
  ): Promise<T> {
    const client = await this.pool.connect();
    const notice = (m: { message?: string | undefined }) => onNotice?.(m.message ?? "");
    client.on("notice", notice);
    // A connection lost between two statements is an `error` event (unheard, it would end the
    // process); the statement in flight reports it, and the connection is closed below anyway
    const lost = () => undefined;
    client.on("error", lost);
    try {
      for (const [k, v] of Object.entries(settings))
        await client.query("SELECT set_config($1, $2, false)", [k, v]);
      return await fn(
        async (sql, params = []) => (await client.query(numbered(sql), params as unknown[])).rowCount ?? 0,
      );
    } finally {
      client.off("notice", notice);
      client.off("error", lost);
      client.release(true);
    }
  }

  /** One connection from BEGIN (then `start`) to COMMIT, every call of `fn`'s async flow on it. */
  private transaction<T>(start: (client: pg.PoolClient) => Promise<void>, fn: () => Promise<T>): Promise<T> {
    return pgTransaction<pg.PoolClient, T>(this.pool, async (client) => {
      const tx: TxScope = { client, open: true };
      try {
        await start(client);
        return await this.scope.run(tx, fn);
      } finally {
        // (what `fn` left running goes to the pool, not to a connection about to commit)
        tx.open = false;
      }
    });
  }

  private closing: Promise<void> | undefined;

  close(): Promise<void> {
    this.closing ??= this.pool.end();
    return this.closing;
  }
}
