/**
 * PGlite (PostgreSQL in WebAssembly, `@electric-sql/pglite` 0.4.6, a dev dependency) with its bundled
 * pgvector, served over the PostgreSQL wire protocol on a loopback port by `@electric-sql/pglite-socket`,
 * so the store's `pg` client talks to it unchanged. For the tests of the pgvector path and its
 * benchmark: Debian's PostgreSQL 15 has no pgvector package.
 */
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { vector } from "@electric-sql/pglite/vector";

export interface PgliteServer {
  url: string;
  stop(): Promise<void>;
}

/** A new in-memory PGlite with pgvector available (not yet created: the store's migration does that). */
export async function startPglite(): Promise<PgliteServer> {
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
