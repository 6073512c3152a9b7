/**
 * The kit's PostgreSQL helpers on a real PostgreSQL 15: a transaction commits or rolls back as a
 * whole, a connection the server killed mid-transaction is destroyed instead of pooled again, and
 * migrations run once however many instances start together, refusing a newer database.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePg, type PgMigrations, pgSchemaVersion, pgTransaction } from "../src/postgres.js";
import { type PostgresServer, startPostgres } from "../src/testing/postgres.js";

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

async function freshPool(max = 4): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: await server.createDatabase(), max });
  pool.on("error", () => undefined);
  return pool;
}

const count = async (pool: pg.Pool) => Number((await pool.query("SELECT count(*) AS n FROM t")).rows[0].n);

describe("pgTransaction", () => {
  it("commits what the function wrote when it resolves, and nothing when it throws", async () => {
    const pool = await freshPool();
    try {
      await pool.query("CREATE TABLE t (x int)");
      expect(
        await pgTransaction<pg.PoolClient, string>(pool, async (c) => {
          await c.query("INSERT INTO t VALUES (1), (2)");
          return "done";
        }),
      ).toBe("done");
      expect(await count(pool)).toBe(2);
      await expect(
        pgTransaction<pg.PoolClient, void>(pool, async (c) => {
          await c.query("INSERT INTO t VALUES (3)");
          throw new Error("the caller's failure");
        }),
      ).rejects.toThrow("the caller's failure");
      // A failing statement: its error comes back, and the earlier row of the transaction is gone
      await expect(
        pgTransaction<pg.PoolClient, void>(pool, async (c) => {
          await c.query("INSERT INTO t VALUES (4)");
          await c.query("INSERT INTO t VALUES ('not a number')");
        }),
      ).rejects.toThrow(/invalid input syntax/);
      expect(await count(pool)).toBe(2);
      expect(pool.totalCount).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
  });

  it("destroys a connection the server ended mid-transaction, so the pool's next caller gets a live one", async () => {
    const pool = await freshPool(1);
    try {
      await pool.query("CREATE TABLE t (x int)");
      const killer = await freshPool(1);
      let victimPid = 0;
      await expect(
        pgTransaction<pg.PoolClient, void>(pool, async (c) => {
          victimPid = Number((await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
          await c.query("INSERT INTO t VALUES (1)");
          // Another session ends this one: the next statement and the ROLLBACK both fail
          await killer.query("SELECT pg_terminate_backend($1)", [victimPid]);
          await c.query("INSERT INTO t VALUES (2)");
        }),
      ).rejects.toThrow(/terminat|connection/i);
      await killer.end();
      // A pool of one: had the dead connection gone back, this would fail on it
      const pid = Number((await pool.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
      expect(pid).not.toBe(victimPid);
      expect(await count(pool)).toBe(0);
    } finally {
      await pool.end();
    }
  });
});

describe("migratePg", () => {
  const migrations = (list: string[]): PgMigrations => ({
    table: "kit_schema",
    lock: 42_4242,
    migrations: list,
    newer: (current, known) => `at ${current}, this program knows ${known}`,
  });

  it("applies each migration once, even with instances starting at once, then refuses a newer database", async () => {
    const url = await server.createDatabase();
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 2 }));
    try {
      const m = migrations([
        "CREATE TABLE t (x int)",
        "INSERT INTO t VALUES (1)",
        "ALTER TABLE t ADD COLUMN y int",
      ]);
      expect(await Promise.all(pools.map((p) => migratePg(p, m)))).toEqual([3, 3, 3, 3]);
      const [first] = pools as [pg.Pool];
      expect(await count(first)).toBe(1);
      expect(await pgSchemaVersion(first, "kit_schema")).toBe(3);
      await expect(migratePg(first, migrations(["CREATE TABLE t (x int)"]))).rejects.toThrow(
        "at 3, this program knows 1",
      );
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it("a failing migration leaves the versions before it applied and its own not, and says why", async () => {
    const pool = await freshPool();
    try {
      const m = migrations([
        "CREATE TABLE t (x int)",
        "INSERT INTO t VALUES (1)",
        "SELECT no_such_function()",
      ]);
      await expect(migratePg(pool, m)).rejects.toThrow(/no_such_function/);
      expect(await pgSchemaVersion(pool, "kit_schema")).toBe(2);
      expect(await count(pool)).toBe(1);
      // The lock was let go: a fixed list carries on from version 2
      m.migrations = ["CREATE TABLE t (x int)", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"];
      expect(await migratePg(pool, m)).toBe(3);
      expect(await count(pool)).toBe(2);
    } finally {
      await pool.end();
    }
  });
});
