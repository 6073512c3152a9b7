/** The pgvector benchmark function the benchmark run calls, at a tiny size: it loads, builds HNSW and times every row. */
import pg from "pg";
import { expect, it } from "vitest";
import { startPglite } from "../src/bench/pglite.js";
import { benchPgvector, vectorBinary } from "../src/bench/pgvector.js";
import { vectorLiteral } from "../src/store/postgres/pgvector.js";

it("times semantic_search on PGlite, exact and through HNSW, unrestricted and in a folder", async () => {
  const lines: string[] = [];
  const r = await benchPgvector({ notes: 400, dims: 16, queries: 3, log: (l) => lines.push(l) });
  expect(r).toMatchObject({ notes: 400, dims: 16 });
  expect(r.rows.map((x) => x.name)).toEqual([
    "semantic_search, pgvector exact, unrestricted",
    "semantic_search, pgvector exact, folder Work",
    "semantic_search, pgvector hnsw, unrestricted",
    "semantic_search, pgvector hnsw, folder Work",
  ]);
  for (const x of r.rows) expect(x.p95).toBeGreaterThanOrEqual(x.p50);
  expect(r.rows.every((x) => x.p50 > 0)).toBe(true);
  expect(r.hnswBuildMs).toBeGreaterThan(0);
  expect(lines.some((l) => l.includes("HNSW index of bench-random ready"))).toBe(true);
}, 120_000);

it("loads vectors in binary with the very bits the store's text literal gives", async () => {
  const server = await startPglite();
  const client = new pg.Client({ connectionString: server.url });
  try {
    await client.connect();
    await client.query("CREATE EXTENSION vector");
    const vecs = [
      new Float32Array([0.1, -0.2, 1 / 3, -0, 1e-45, -3.4028234663852886e38, 7.006492321624085e-46]),
      new Float32Array(Array.from({ length: 512 }, (_, i) => Math.sin(i) / 7)),
    ];
    for (const v of vecs) {
      // pgvector prints each float32 as its shortest round-trip decimal, -0 included: equal text, equal bits.
      const { rows } = await client.query<{ binary: string; literal: string }>(
        "SELECT $1::vector::text AS binary, $2::vector::text AS literal",
        [vectorBinary(v), vectorLiteral(v)],
      );
      expect(rows[0]!.binary).toBe(rows[0]!.literal);
      expect(rows[0]!.binary.split(",")).toHaveLength(v.length);
    }
  } finally {
    await client.end();
    await server.stop();
  }
}, 60_000);
