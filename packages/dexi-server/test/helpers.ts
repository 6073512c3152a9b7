import type { Client } from "@modelcontextprotocol/client";
import { connectInMemory, type Session as KitSession, session } from "@mcpforge/toolkit/testing";
import { type App, openApp, openAppAt } from "../src/app.js";
import { main } from "../src/cli/main.js";
import type { Restriction, Viewer } from "../src/domain/access.js";
import { HashEmbedder } from "../src/embed/hash.js";
import type { Embedder } from "../src/embed/types.js";
import { SqliteStore } from "../src/store/index.js";
import { PgStore } from "../src/store/postgres/store.js";
import { createDexiServer, DEXI_SCOPES } from "../src/mcp/server.js";
import { leaseDatabase, STORE } from "./stores.js";

export const ALL_SCOPES = [...DEXI_SCOPES];

/** An app over SQLite, whose synchronous store classes (`store.sync`) tests may read directly. */
export type SqliteApp = App<SqliteStore>;
/** An app over whichever store the vitest project runs (see STORE): read it through the async port. */
export type TestApp = App;

type TestAppOptions = { embedder?: Embedder; now?: () => number; timeZone?: string };

const appOptions = (options: TestAppOptions) => ({
  embedder: options.embedder ?? new HashEmbedder(),
  log: () => {},
  ...(options.now ? { now: options.now } : {}),
  ...(options.timeZone ? { timeZone: options.timeZone } : {}),
});

/**
 * A SQLite in-memory database with the lexical hash embedder (fast); pass a real one for semantic
 * tests. For the suites about SQLite itself; the suites about behaviour use `testApp`.
 */
export function memoryApp(options: TestAppOptions = {}): SqliteApp {
  return openApp(":memory:", appOptions(options));
}

/**
 * A fresh, empty app on the store of the current vitest project: SQLite `:memory:`, or a database of
 * its own on the run's PostgreSQL server (emptied when the app closes, for the file's next app).
 */
export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  if (STORE === "sqlite") return memoryApp(options);
  const db = await leaseDatabase();
  const app = await openAppAt(db.url, appOptions(options));
  return {
    ...app,
    close: async () => {
      await app.close();
      await db.release();
    },
  };
}

/** Rows of one SQL query (no parameters) straight from the app's store, whichever it is. */
export async function storeRows<R>(app: TestApp, sql: string): Promise<R[]> {
  if (app.store instanceof SqliteStore) return app.store.db.prepare(sql).all() as R[];
  if (app.store instanceof PgStore) return app.store.db.all<R>(sql);
  throw new Error(`no SQL for a ${app.store.kind} store`);
}

/** A note owner's id, the user created on first use (as the bins do for `--user`). */
export async function userId(app: TestApp, name: string): Promise<number> {
  return (await app.store.accounts.ensureUser(name, Date.now())).id;
}

/** The kit's session (ok / fails / raw) over a real SDK client, plus `outcome` for a result's two facts. */
export interface Session extends KitSession {
  client: Client;
  close(): Promise<void>;
  /** Whether a call failed (always a boolean) and its structured content (`{}` when it has none). */
  outcome(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ isError: boolean; structured: Record<string, unknown> }>;
}

/** A real SDK client, over the in-memory transport, acting as `user` with the given grant. */
export async function connect(
  app: TestApp,
  user: string,
  options: { scopes?: string[]; restriction?: Restriction } = {},
): Promise<Session> {
  const id = await userId(app, user);
  const viewer = (scopes: readonly string[]): Viewer => ({
    userId: id,
    scopes,
    ...(options.restriction ? { restriction: options.restriction } : {}),
  });
  const kit = createDexiServer({ notes: app.notes, viewerFor: (c) => viewer(c.scopes), log: () => {} });
  const conn = await connectInMemory(kit, { scopes: options.scopes ?? ALL_SCOPES, clientId: user });
  return sessionOf(conn);
}

/** The test Session over any connected SDK client. */
export function sessionOf(conn: { client: Client; close(): Promise<void> }): Session {
  const calls = session(conn.client);
  return {
    ...calls,
    client: conn.client,
    close: conn.close,
    outcome: async (name, args = {}) => {
      const r = await calls.raw(name, args);
      return {
        isError: r.isError === true,
        structured: (r.structuredContent ?? {}) as Record<string, unknown>,
      };
    },
  };
}

export interface Item {
  id: string;
  title: string;
  snippet: string;
  tags: string[];
  source: string;
  source_url: string | null;
  created: string;
  updated: string;
  folder?: string;
  shared?: true;
  owner?: string;
  similarity?: number;
}

export const items = (r: Record<string, unknown>) => r["items"] as Item[];

/** Runs the admin CLI in-process on the database file `db`; its exit code, stdout and stderr. */
export async function runDexi(
  db: string,
  argv: string[],
  stdin = "",
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(
    ["--db", db, ...argv],
    (s) => {
      out += s;
    },
    (s) => {
      err += s;
    },
    async () => stdin,
  );
  return { code, out, err };
}

/** Opens the database file `db` for a look (and closes it, after the look's promise if it returns one). */
export function withStore<T>(db: string, fn: (s: SqliteStore) => T): T {
  const s = SqliteStore.open(db);
  let out: T;
  try {
    out = fn(s);
  } catch (err) {
    s.db.close();
    throw err;
  }
  if (out instanceof Promise) return out.finally(() => s.close()) as T;
  s.db.close();
  return out;
}
