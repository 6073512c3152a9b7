import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { inject } from "vitest";
import { isPostgresUrl, SqliteStore, type Store } from "../src/store/index.js";
import { numbered } from "../src/store/postgres/db.js";
import { PgStore } from "../src/store/postgres/store.js";
import "./postgres-helpers.js";

/**
 * The store the suites run on: the vitest project ("sqlite" or "postgres", see vitest.config.ts) sets
 * DEXI_TEST_STORE, and the same tests run once on each.
 */
export const STORE: "sqlite" | "postgres" =
  process.env["DEXI_TEST_STORE"] === "postgres" ? "postgres" : "sqlite";

let made = 0;

/**
 * A new database on the run's PostgreSQL server, migrated (a copy of the run's template), and a way to
 * drop it (connections and all).
 */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `dexi_${process.pid}_${Date.now().toString(36)}_${made++}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: inject("postgresUrl") });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name} TEMPLATE ${inject("postgresTemplate")}`);
  const url = new URL(inject("postgresUrl"));
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

interface Spare {
  url: string;
  /** The meta rows the migrations wrote, put back when the database is emptied for its next app. */
  meta: { key: string; value: string }[];
}
const spares: Spare[] = [];

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A migrated, empty database for one app, given back (emptied) when the app is done: a copy of the
 * template costs most of a second on two busy cores, emptying one a few milliseconds. Apps open at the
 * same time get databases of their own.
 */
export async function leaseDatabase(): Promise<{ url: string; release(): Promise<void> }> {
  const spare =
    spares.pop() ??
    (await (async () => {
      const { url } = await freshDatabase();
      const meta = await withClient(url, async (c) => (await c.query("SELECT key, value FROM meta")).rows);
      return { url, meta };
    })());
  return {
    url: spare.url,
    release: async () => {
      await withClient(spare.url, async (c) => {
        const tables = (
          await c.query<{ t: string }>(
            "SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('dexi_schema', 'meta')",
          )
        ).rows.map((r) => r.t);
        await c.query(`TRUNCATE ${tables.join(", ")} RESTART IDENTITY CASCADE`);
        await c.query("DELETE FROM meta");
        for (const m of spare.meta)
          await c.query("INSERT INTO meta (key, value) VALUES ($1, $2)", [m.key, m.value]);
      });
      spares.push(spare);
    },
  };
}

/**
 * Where a test's bins and admin commands keep their data (`--db`): a new SQLite file in `dir`, or a new
 * PostgreSQL database (left for the run's server to take away when it stops).
 */
export async function freshLocation(dir: string): Promise<string> {
  if (STORE === "sqlite") return join(dir, `dexi-${made++}.db`);
  return (await freshDatabase()).url;
}

/** Plain SQL (`?` placeholders) over a store a test, a bin or a killed process left behind. */
export interface StoreInspector {
  all<R>(sql: string, ...params: unknown[]): Promise<R[]>;
  /** SQLite's integrity_check; "ok" on PostgreSQL, which has no such whole-database check. */
  integrity(): Promise<string>;
  close(): Promise<void>;
}

export async function inspectStore(location: string): Promise<StoreInspector> {
  if (STORE === "sqlite") {
    const db = new Database(location);
    return {
      all: async <R>(sql: string, ...params: unknown[]) => {
        const stmt = db.prepare(sql);
        if (stmt.reader) return stmt.all(...params) as R[];
        stmt.run(...params);
        return [];
      },
      integrity: async () => db.pragma("integrity_check", { simple: true }) as string,
      close: async () => void db.close(),
    };
  }
  // BIGINT counts and ids as numbers, as better-sqlite3 returns them.
  const types = {
    getTypeParser: ((oid: number, format?: "text" | "binary") =>
      oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format ?? "text")) as never,
  };
  const client = new pg.Client({ connectionString: location, types });
  await client.connect();
  return {
    all: async <R>(sql: string, ...params: unknown[]) =>
      (await client.query(numbered(sql), params)).rows as R[],
    integrity: async () => "ok",
    close: () => client.end(),
  };
}

/** One SQL query over the store at `location`, opened and closed around it. */
export async function query<R>(location: string, sql: string, ...params: unknown[]): Promise<R[]> {
  const s = await inspectStore(location);
  try {
    return await s.all<R>(sql, ...params);
  } finally {
    await s.close();
  }
}

/** The async store port over `location` (a SQLite file or a postgres:// URL), as the bins open it. */
export function openStore(location: string): Promise<Store> {
  return isPostgresUrl(location) ? PgStore.open(location) : Promise.resolve(SqliteStore.open(location));
}

/** `fn` over the store at `location`, opened and closed around it. */
export async function withStoreAt<T>(location: string, fn: (s: Store) => Promise<T>): Promise<T> {
  const s = await openStore(location);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}
