/**
 * The two PostgreSQL engines Dexi's vector search is tested on: PGlite (PostgreSQL 17 in WebAssembly)
 * with its bundled pgvector, served over the wire protocol on a loopback port so the store's `pg` client
 * talks to it unchanged; and the throwaway Debian PostgreSQL 15 of the postgres project, which has no
 * pgvector (the in-process path).
 */
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { vector } from "@electric-sql/pglite/vector";
import { freshDatabase } from "./postgres-helpers.js";

export interface Database {
  url: string;
  stop(): Promise<void>;
}

/** A new in-memory PGlite with pgvector available (not yet created: the store's migration does that). */
export async function startPglite(): Promise<Database> {
  const db = await PGlite.create({ extensions: { vector } });
  // Each store's pool opens up to 10 connections; the server runs their queries one at a time and
  // keeps a transaction's queries together.
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 64 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

export interface VectorEngine {
  name: string;
  /** What `dexi status` and the start-up log say for it without an HNSW threshold. */
  vectors: string;
  pgvector: boolean;
  start(): Promise<Database>;
}

/** Both engines, for `describe.each`: the same test bodies run on each. */
export const VECTOR_ENGINES: readonly VectorEngine[] = [
  { name: "PGlite with pgvector", vectors: "pgvector exact", pgvector: true, start: startPglite },
  {
    name: "PostgreSQL 15 without pgvector",
    vectors: "in-process",
    pgvector: false,
    start: async () => ({ url: await freshDatabase(), stop: async () => {} }),
  },
];
