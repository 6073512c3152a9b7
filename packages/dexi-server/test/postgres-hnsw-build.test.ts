/**
 * The memory an HNSW build is given, on PGlite with pgvector: enough for its graph (pgvector builds it
 * in memory, several times faster than once it spills), the server's own setting with
 * `hnswBuildMemoryMb: 0`, and the server's own setting again when the server cannot give that much.
 * PGlite is one backend: a SET on any connection is the setting every connection (the build's too)
 * starts from, which is how these tests give the "server" a small maintenance_work_mem.
 */
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { type PgliteServer, startPglite } from "../src/bench/pglite.js";
import { hnswBuildMemoryKb, indexName } from "../src/store/postgres/pgvector.js";
import { PgStore } from "../src/store/postgres/store.js";

const MODEL = "test-512";
const DIMS = 512;
/** A graph of ~1.6 MB, past a 1 MB maintenance_work_mem. */
const VECTORS = 600;

let server: PgliteServer;
let userId: number;

function vector(i: number): Float32Array {
  const v = new Float32Array(DIMS);
  for (let d = 0; d < DIMS; d++) v[d] = Math.sin(i * 31 + d * 7);
  return v;
}

beforeAll(async () => {
  server = await startPglite();
  const store = await PgStore.open(server.url, { log: () => {} });
  try {
    userId = (await store.accounts.ensureUser("ann", 0)).id;
    await store.db.run(
      `INSERT INTO notes (uuid, user_id, title, body, source, created_ms, updated_ms)
       SELECT gen_random_uuid()::text, ?::bigint, 'note ' || i, 'body', 'note', i, i FROM generate_series(1, ?::int) AS i`,
      [userId, VECTORS],
    );
    const ids = await store.db.all<{ id: number }>("SELECT id FROM notes ORDER BY id");
    for (const { id } of ids) await store.vectors.put(id, MODEL, vector(id));
  } finally {
    await store.close();
  }
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

/** Opens a store with threshold 0 on a "server" whose maintenance_work_mem is 1 MB, and builds the index. */
async function build(options: { hnswBuildMemoryMb?: number } = {}, prepare?: (store: PgStore) => void) {
  const lines: string[] = [];
  const store = await PgStore.open(server.url, { hnswThreshold: 0, log: (l) => lines.push(l), ...options });
  try {
    await store.db.run(`DROP INDEX IF EXISTS ${indexName(MODEL, DIMS)}`);
    await store.db.run("SET maintenance_work_mem = '1MB'");
    prepare?.(store);
    const scope = { userId, teammates: [] };
    await store.vectorSearch!.nearest(scope, MODEL, vector(3), 5);
    await store.vectorSearch!.settled();
    const hits = await store.vectorSearch!.nearest(scope, MODEL, vector(3), 5);
    const valid = await store.db.get<{ valid: boolean }>(
      "SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ?",
      [indexName(MODEL, DIMS)],
    );
    // Note 3's own vector: note 3 first, with the index in place.
    expect(hits[0]?.id).toBe(3);
    return { lines, valid: valid?.valid ?? false };
  } finally {
    await store.close();
  }
}

it("estimates the graph pgvector builds in memory: the vector and ~600 bytes each, a quarter more, one 1 MB block more", () => {
  // 600 x 2,656 bytes x 1.25 = 1.9 MB: two blocks, and a third so that two never reach the setting.
  expect(hnswBuildMemoryKb(VECTORS, DIMS)).toBe(3 * 1024);
  // The bench's 100,000 notes (a quarter another user's: all are counted) of 512 dims.
  expect(hnswBuildMemoryKb(100_000, 512)).toBe(318 * 1024);
});

it("gives the build the maintenance_work_mem its graph needs, so pgvector builds it in memory", async () => {
  const r = await build();
  expect(r.valid).toBe(true);
  const mb = Math.ceil(hnswBuildMemoryKb(VECTORS, DIMS) / 1024);
  expect(r.lines[0]).toBe(
    `dexi: building the HNSW index of ${MODEL} (${VECTORS} vectors, maintenance_work_mem ${mb} MB); searches are exact until it is ready`,
  );
  expect(r.lines.filter((l) => l.includes("no longer fits"))).toEqual([]);
}, 60_000);

it("with hnswBuildMemoryMb 0 leaves the server's setting, and logs pgvector's notice that the graph spilled", async () => {
  const r = await build({ hnswBuildMemoryMb: 0 });
  expect(r.valid).toBe(true);
  expect(r.lines[0]).toBe(
    `dexi: building the HNSW index of ${MODEL} (${VECTORS} vectors); searches are exact until it is ready`,
  );
  expect(
    r.lines.some((l) =>
      /^dexi: HNSW build of test-512: hnsw graph no longer fits into maintenance_work_mem after \d+ tuples$/.test(
        l,
      ),
    ),
  ).toBe(true);
}, 60_000);

it("builds with the server's setting when the server cannot give the memory (SQLSTATE class 53)", async () => {
  const r = await build({}, (store) => {
    vi.spyOn(store.db, "session").mockImplementationOnce(async (settings) => {
      expect(settings).toEqual({ maintenance_work_mem: `${hnswBuildMemoryKb(VECTORS, DIMS)}kB` });
      // What a parallel build's shared memory gets from a full /dev/shm; the retry is the real session.
      throw Object.assign(
        new Error('could not resize shared memory segment "/PostgreSQL.1" to 3145728 bytes'),
        {
          code: "53100",
        },
      );
    });
  });
  expect(r.valid).toBe(true);
  expect(r.lines[1]).toMatch(
    /^dexi: the HNSW build of test-512 could not have 3 MB \(could not resize shared memory segment .*\); building it with the server's maintenance_work_mem$/,
  );
  expect(r.lines.at(-1)).toMatch(/^dexi: HNSW index of test-512 ready in /);
}, 60_000);
