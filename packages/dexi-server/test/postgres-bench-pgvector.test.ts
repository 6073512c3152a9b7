/** The pgvector benchmark function the benchmark run calls, at a tiny size: it loads, builds HNSW and times every row. */
import { expect, it } from "vitest";
import { benchPgvector } from "../src/bench/pgvector.js";

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
