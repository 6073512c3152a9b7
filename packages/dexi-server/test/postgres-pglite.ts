/**
 * The two PostgreSQL engines Dexi's vector search is tested on: PGlite with its bundled pgvector
 * (src/bench/pglite.ts), and the throwaway Debian PostgreSQL 15 of the postgres project, which has no
 * pgvector (the in-process path).
 */
import { type PgliteServer, startPglite } from "../src/bench/pglite.js";
import { freshDatabase } from "./postgres-helpers.js";

export type Database = PgliteServer;

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
