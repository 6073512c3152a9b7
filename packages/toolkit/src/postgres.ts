/**
 * The two things every server with a PostgreSQL store does the same way: a transaction on a pooled
 * connection, and the numbered migrations applied under an advisory lock. Typed structurally (what
 * node-postgres's `Pool` and `PoolClient` offer), so the kit itself needs no PostgreSQL driver.
 */

/** A pooled connection, as node-postgres's `PoolClient`. */
export interface PgConnection {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /** Back to the pool; `true` destroys it instead (it is broken). */
  release(destroy?: boolean): void;
  on(event: "error", listener: (err: Error) => void): unknown;
  off(event: "error", listener: (err: Error) => void): unknown;
}

/** A pool, as node-postgres's `Pool`. */
export interface PgPool<C extends PgConnection = PgConnection> {
  connect(): Promise<C>;
}

/**
 * Marks `broken` when the connection fails while it is checked out. node-postgres reports that as
 * an `error` event on the client (the pool listens only while a connection is idle): unheard, it
 * would end the process, as a server restart between two statements of a transaction did.
 * Returns what takes the listener off again.
 */
function watchBroken(client: PgConnection, broken: { is: boolean }): () => void {
  const onError = () => {
    broken.is = true;
  };
  client.on("error", onError);
  return () => client.off("error", onError);
}

/**
 * BEGIN, `fn`, COMMIT on `client`; on any failure ROLLBACK and the failure rethrown. Returns (or
 * throws) with `broken` set when the ROLLBACK itself failed: the connection is gone, and must not go
 * back to a pool.
 */
async function inTransaction<T>(
  client: PgConnection,
  fn: () => Promise<T>,
  broken: { is: boolean },
): Promise<T> {
  try {
    await client.query("BEGIN");
    const out = await fn();
    await client.query("COMMIT");
    return out;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch {
      broken.is = true;
    }
    throw err;
  }
}

/**
 * Runs `fn` in a transaction on a connection of its own from `pool`: committed when `fn` resolves,
 * rolled back when it (or the COMMIT) fails. A connection whose ROLLBACK failed is destroyed rather
 * than handed to the pool's next caller.
 */
export async function pgTransaction<C extends PgConnection, T>(
  pool: PgPool<C>,
  fn: (client: C) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  const broken = { is: false };
  const unwatch = watchBroken(client, broken);
  try {
    return await inTransaction(client, () => fn(client), broken);
  } finally {
    unwatch();
    client.release(broken.is);
  }
}

export interface PgMigrations {
  /** The table recording each version applied (created when missing). */
  table: string;
  /** The advisory lock key that makes instances starting at once migrate one after another. */
  lock: number;
  /** The migrations in order: version N is `migrations[N - 1]`. */
  migrations: readonly string[];
  /** The error message for a database at a version newer than `migrations` knows. */
  newer(current: number, known: number): string;
}

/** The schema version a database is at (0: never migrated), creating the version table if missing. */
export async function pgSchemaVersion(db: Pick<PgConnection, "query">, table: string): Promise<number> {
  await db.query(`CREATE TABLE IF NOT EXISTS ${table} (version INTEGER NOT NULL)`);
  const { rows } = await db.query(`SELECT max(version) AS version FROM ${table}`);
  return (rows[0] as { version: number | null } | undefined)?.version ?? 0;
}

/**
 * Applies the migrations the database has not seen yet, each in its own transaction with its
 * version row, under the advisory lock (held by this session, so one connection does it all);
 * refuses a database written by a newer program. Returns the version reached. A failure is the
 * migration's own error, whatever happens to the connection after it.
 */
export async function migratePg(pool: PgPool, m: PgMigrations): Promise<number> {
  const client = await pool.connect();
  const broken = { is: false };
  const unwatch = watchBroken(client, broken);
  try {
    await client.query("SELECT pg_advisory_lock($1)", [m.lock]);
    try {
      const current = await pgSchemaVersion(client, m.table);
      if (current > m.migrations.length) throw new Error(m.newer(current, m.migrations.length));
      for (let v = current; v < m.migrations.length; v++) {
        await inTransaction(
          client,
          async () => {
            await client.query(m.migrations[v] as string);
            await client.query(`INSERT INTO ${m.table} (version) VALUES ($1)`, [v + 1]);
          },
          broken,
        );
      }
      return m.migrations.length;
    } finally {
      // (a broken connection's session and its lock are gone with it)
      if (!broken.is)
        await client.query("SELECT pg_advisory_unlock($1)", [m.lock]).catch(() => {
          broken.is = true;
        });
    }
  } finally {
    unwatch();
    client.release(broken.is);
  }
}
