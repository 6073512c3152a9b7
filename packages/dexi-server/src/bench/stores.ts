/**
 * The store column of the benchmark: the same tool calls, in process (`KitServer.callTool`, schema
 * validation and result shaping included, no transport), on the SQLite file and on a throwaway
 * PostgreSQL 15 holding the same notes, copied over by `dexi migrate`'s own code.
 */
import { startPostgres } from "@mcpforge/toolkit/testing";
import { NotesService } from "../domain/notes.js";
import type { Embedder } from "../embed/types.js";
import { createDexiServer, DEXI_SCOPES } from "../mcp/server.js";
import { copySqliteToPostgres } from "../store/postgres/copy.js";
import { PgStore } from "../store/postgres/store.js";
import type { Store } from "../store/index.js";
import { time } from "./measure.js";

export type Call = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** Tool calls through a kit server over `store`, as the bench user with every scope. */
export function callerOver(store: Store, embedder: Embedder, userId: number, log: (s: string) => void): Call {
  const notes = new NotesService({ store, embedder, log });
  const kit = createDexiServer({ notes, viewerFor: (c) => ({ userId, scopes: c.scopes }) });
  const caller = { scopes: [...DEXI_SCOPES] };
  return async (name, args) => {
    const r = await kit.callTool(name, args, caller);
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
    return r.structuredContent as Record<string, unknown>;
  };
}

export interface Probe {
  name: string;
  /** A p50 the PostgreSQL column is held to, in ms. */
  target?: number;
  runs: number;
  tool: string;
  args: (i: number) => Record<string, unknown>;
}

export const QUERIES = [
  "garden",
  "pasta recipe",
  "neural network",
  "budget",
  "vector search",
  "marathon",
  "time work",
  "spanish language",
];

export const PROBES: Probe[] = [
  {
    name: "search_notes (1-2 words)",
    target: 5,
    runs: 200,
    tool: "search_notes",
    args: (i) => ({ query: QUERIES[i % QUERIES.length]! }),
  },
  {
    name: "list_notes (newest)",
    target: 5,
    runs: 200,
    tool: "list_notes",
    args: (i) => ({ page: 1 + (i % 5) }),
  },
  {
    name: "list_notes (folder + tag)",
    target: 5,
    runs: 200,
    tool: "list_notes",
    args: (i) => ({ folder: `folder ${i % 20}`, tag: `t${i % 50}` }),
  },
  {
    name: "semantic_search (in-process vectors)",
    runs: 50,
    tool: "semantic_search",
    args: (i) => ({ query: `${QUERIES[i % QUERIES.length]} ideas ${i}` }),
  },
];

export interface Column {
  samples: Map<string, number[]>;
  /** The first semantic_search: the vector cache loaded from the store (the model is already loaded). */
  coldSemanticMs: number;
}

/** Every probe on one store, each after one untimed call. */
export async function measureColumn(call: Call): Promise<Column> {
  const t = performance.now();
  await call("semantic_search", { query: "warm up the vector cache" });
  const coldSemanticMs = performance.now() - t;
  const samples = new Map<string, number[]>();
  for (const p of PROBES) {
    await call(p.tool, p.args(p.runs));
    samples.set(p.name, await time(p.runs, (i) => call(p.tool, p.args(i))));
  }
  return { samples, coldSemanticMs };
}

export interface BenchPostgres {
  /** The database the notes were copied into. */
  url: string;
  store: PgStore;
  loadSecs: number;
  stop(): Promise<void>;
}

/**
 * A throwaway PostgreSQL 15 (the kit's `startPostgres()`: fsync off, as for tests) with the SQLite
 * file's every row copied in by `copySqliteToPostgres` (what `dexi migrate` runs), then VACUUM ANALYZE,
 * as a DBA would after a bulk load: the planner knows the table sizes before the first query, and the
 * visibility map is set, so index-only scans are index-only from the start rather than once
 * autovacuum gets to the table (which otherwise happens at some moment during the measurements).
 */
export async function loadPostgres(sqlitePath: string): Promise<BenchPostgres> {
  const server = await startPostgres({ settings: { shared_buffers: "256MB" } });
  try {
    const url = await server.createDatabase("dexi_bench");
    const t = performance.now();
    await copySqliteToPostgres(sqlitePath, url);
    const store = await PgStore.open(url);
    await store.db.run("VACUUM ANALYZE");
    const loadSecs = (performance.now() - t) / 1000;
    return {
      url,
      store,
      loadSecs,
      stop: async () => {
        await store.close();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}
