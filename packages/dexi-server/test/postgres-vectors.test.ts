/**
 * semantic_search and find_similar on PostgreSQL, with pgvector (PGlite) and without it (Debian's
 * PostgreSQL 15, scored in process): the same test bodies on both. The database is made by `dexi
 * migrate` from a SQLite file (ids and uuids kept), so every answer can be compared with SQLite's
 * in-process answer to the same call: same notes, same order (ties by id), same similarities.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, openApp, openAppAt } from "../src/app.js";
import type { Viewer } from "../src/domain/access.js";
import { HashEmbedder } from "../src/embed/hash.js";
import { UseEmbedder } from "../src/embed/use.js";
import { vectorsInUse } from "../src/store/index.js";
import { PGVECTOR_SETUP } from "../src/store/postgres/migrations.js";
import type { PgStore } from "../src/store/postgres/store.js";
import { runDexi } from "./helpers.js";
import { type Database, VECTOR_ENGINES } from "./postgres-pglite.js";

const BIN = fileURLToPath(new URL("../dist/bin/dexi-mcp.js", import.meta.url));
const T0 = Date.parse("2026-03-02T10:00:00Z");

/** Ann's notes: title, text, folder. */
const ANN: [string, string, string | null][] = [
  ["Roadmap Q3", "roadmap planning for the third quarter #work", "Work"],
  ["Roadmap review", "review the roadmap with the team #work", "Work"],
  ["Hiring plan", "roadmap for hiring two engineers #work", "Work"],
  ["Standup", "standup about the roadmap and the release", "Work"],
  ["Garden", "tomatoes and basil in the garden", "Home"],
  // The same text: the same vector, a tie that must break by id (the older note first).
  ["Garden", "tomatoes and basil in the garden", "Home"],
  ["Cookies", "buy roadmap planning cookies #work", null],
  ["Trip", "flight to lisbon on friday", null],
];
/** Bob's notes nearest the queries, none shared: a reader who is not Bob must never see them. */
const BOB_PRIVATE = 40;
const QUERIES = ["roadmap planning", "tomatoes basil garden", "flight lisbon", "team roadmap"];

type Users = { ann: number; bob: number };
const as =
  (who: keyof Users, restriction?: Viewer["restriction"]) =>
  (u: Users): Viewer => ({
    userId: u[who],
    scopes: [],
    ...(restriction ? { restriction } : {}),
  });
const VIEWS: [string, (u: Users) => Viewer][] = [
  ["ann", as("ann")],
  ["ann in folder Work", as("ann", { folder: "Work" })],
  ["ann with tag #work", as("ann", { tag: "#work" })],
  ["ann in Work with #work", as("ann", { folder: "Work", tag: "#work" })],
  ["ann in folder Home", as("ann", { folder: "Home" })],
  ["bob", as("bob")],
];

/** Meaning without shared words, with the real USE model: each query's note must come first. */
const MEANING: [string, string, string, string][] = [
  [
    "nn",
    "How neural networks learn",
    "Backpropagation computes gradients and gradient descent updates each weight.",
    "machine learning",
  ],
  [
    "pasta",
    "Weeknight pasta",
    "Boil spaghetti, fry garlic and chilli in olive oil, toss with parsley.",
    "dinner recipe with noodles",
  ],
  [
    "run",
    "Marathon training",
    "Long run of 24 km at an easy pace, two interval sessions this week.",
    "running a race",
  ],
  [
    "tax",
    "Tax return checklist",
    "Collect payslips, receipts for deductions and the pension statement.",
    "paying the government at year end",
  ],
  ["vet", "Vet visit", "The cat had her vaccinations; next check-up in a year.", "my pet's health"],
  [
    "piano",
    "Piano practice",
    "Scales for ten minutes, then the Chopin nocturne with a metronome.",
    "playing a musical instrument",
  ],
];
/** One model for both engines (it has no close; loading it once saves seconds). */
const use = new UseEmbedder();

const opts = () => ({ embedder: new HashEmbedder(), now: () => T0, log: () => {} });

let dir: string;
let file: string;
const uuids = new Map<string, string>();
let users: Users = { ann: 0, bob: 0 };

/** A SQLite database with Ann's and Bob's notes and vectors, migrated into each engine below. */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dexi-vectors-"));
  file = join(dir, "d.db");
  const app = openApp(file, opts());
  try {
    users = {
      ann: (await app.accounts.ensureUser("ann")).id,
      bob: (await app.accounts.ensureUser("bob")).id,
    };
    await app.accounts.joinTeam("crew", "ann");
    await app.accounts.joinTeam("crew", "bob");
    const a = { userId: users.ann, scopes: [] };
    for (const [title, text, folder] of ANN) {
      const n = await app.notes.create(a, { title, text });
      if (folder) await app.notes.file(a, n.id, folder);
      uuids.set(uuids.has(title) ? `${title} (2)` : title, n.id);
    }
    const b = { userId: users.bob, scopes: [] };
    for (let i = 0; i < BOB_PRIVATE; i++) {
      const n = await app.notes.create(b, {
        title: `Bob roadmap ${i}`,
        text: `roadmap planning team roadmap ${i}`,
      });
      uuids.set(n.title, n.id);
    }
    const shared = await app.notes.create(b, {
      title: "Team roadmap",
      text: "the team roadmap for everyone",
    });
    await app.notes.share(b, shared.id, true);
    uuids.set("Team roadmap", shared.id);
  } finally {
    await app.close();
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** dexi-mcp's stderr up to its line about vectors (it then serves stdio until stopped), or all of it if it exits. */
function startupLines(
  url: string,
  env: Record<string, string>,
): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [BIN, "--db", url], {
    env: { ...process.env, DEXI_EMBEDDINGS: "hash", ...env },
    stdio: ["pipe", "ignore", "pipe"],
  });
  return new Promise((resolve) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (/dexi: vectors: .*\n/.test(err)) {
        child.kill();
        resolve({ code: null, err });
      }
    });
    child.once("exit", (code) => resolve({ code, err }));
  });
}

/** The same call on the SQLite file (in process) as the reference. */
async function onSqlite<T>(fn: (app: App) => Promise<T>): Promise<T> {
  const app = openApp(file, opts());
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

it("dexi status on a SQLite file: the store and in-process vectors", async () => {
  const r = await runDexi(file, ["status"]);
  expect(r.code, r.err).toBe(0);
  expect(r.out).toBe(
    `store: sqlite ${file}\nvectors: in-process\nembeddings: use-lite-512, 0 notes embedded, ${ANN.length + BOB_PRIVATE + 1} waiting\n`,
  );
});

describe.each(VECTOR_ENGINES)("$name", (engine) => {
  let db: Database;
  let app: App;

  beforeAll(async () => {
    db = await engine.start();
    const r = await runDexi(file, ["migrate", "--from", file, "--to", db.url]);
    expect(r.code, r.err).toBe(0);
    app = await openAppAt(db.url, { ...opts(), hnswThreshold: undefined });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await db?.stop();
  });

  it("says which vector search it uses, on start-up and in dexi status", async () => {
    expect(vectorsInUse(app.store)).toBe(engine.vectors);
    expect((await runDexi(db.url, ["settings", "--embeddings", "hash"])).code).toBe(0);
    const r = await runDexi(db.url, ["status"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`\nvectors: ${engine.vectors}\n`);
    expect(r.out).toContain(
      `embeddings: hash-512, ${ANN.length + BOB_PRIVATE + 1} notes embedded, 0 waiting`,
    );
  });

  it("names the vector search on dexi-mcp's start-up, with and without an HNSW threshold", async () => {
    const plain = await startupLines(db.url, { DEXI_HNSW_THRESHOLD: "" });
    expect(plain.err).toMatch(new RegExp(`^dexi: store postgresql .*\ndexi: vectors: ${engine.vectors}\n$`));
    const hnsw = await startupLines(db.url, { DEXI_HNSW_THRESHOLD: "5000" });
    expect(hnsw.err).toContain(
      `dexi: vectors: ${engine.pgvector ? "pgvector hnsw (threshold 5000)" : "in-process"}\n`,
    );
    const bad = await startupLines(db.url, { DEXI_HNSW_THRESHOLD: "lots" });
    expect(bad).toEqual({
      code: 2,
      err: 'dexi-mcp: DEXI_HNSW_THRESHOLD takes a number of vectors (a whole number from 0); got "lots"\n',
    });
    const badMemory = await startupLines(db.url, { DEXI_HNSW_BUILD_MEMORY: "1GB" });
    expect(badMemory).toEqual({
      code: 2,
      err: 'dexi-mcp: DEXI_HNSW_BUILD_MEMORY takes a size in MB (a whole number from 0); got "1GB"\n',
    });
  }, 60_000);

  it.each(VIEWS)("semantic_search as %s: SQLite's order and similarities", async (_, view) => {
    const viewer = view(users);
    for (const q of QUERIES) {
      const expected = await onSqlite((s) => s.notes.semantic(viewer, q, 50));
      expect(await app.notes.semantic(viewer, q, 50), q).toEqual(expected);
      const few = await onSqlite((s) => s.notes.semantic(viewer, q, 3));
      expect(await app.notes.semantic(viewer, q, 3), q).toEqual(few);
    }
  });

  it.each(VIEWS.slice(0, 5))("find_similar as %s: SQLite's order, never the note itself", async (_, view) => {
    const viewer = view(users);
    for (const title of ["Roadmap Q3", "Garden", "Cookies"]) {
      const id = uuids.get(title)!;
      const expected = await onSqlite((s) => s.notes.similar(viewer, id, 50).catch((e: Error) => e.message));
      const got = await app.notes.similar(viewer, id, 50).catch((e: Error) => e.message);
      expect(got, title).toEqual(expected);
      if (typeof got !== "string") expect(got.items.map((i) => i.id)).not.toContain(id);
    }
  });

  it("gives a reader its full size of visible notes when the nearest ones are another user's", async () => {
    // Bob's forty private roadmap notes are the nearest to the query; Ann sees none of them.
    const bob = await app.notes.semantic({ userId: users.bob, scopes: [] }, "roadmap planning team", 5);
    expect(bob.items.every((i) => i.title.startsWith("Bob roadmap"))).toBe(true);
    const r = await app.notes.semantic({ userId: users.ann, scopes: [] }, "roadmap planning team", 5);
    expect(r.items).toHaveLength(5);
    expect(r.items.filter((i) => i.title.startsWith("Bob roadmap"))).toEqual([]);
    expect(r.items.find((i) => i.title === "Team roadmap")).toMatchObject({ shared: true, owner: "bob" });
    // Inside a boundary: every visible note, and nothing outside it.
    const work = await app.notes.semantic(
      { userId: users.ann, scopes: [], restriction: { folder: "Work", tag: "#work" } },
      "roadmap planning team",
      5,
    );
    expect(work.items.map((i) => i.title).sort()).toEqual(["Hiring plan", "Roadmap Q3", "Roadmap review"]);
    const similar = await app.notes.similar(
      { userId: users.ann, scopes: [], restriction: { tag: "#work" } },
      uuids.get("Cookies")!,
      10,
    );
    expect(similar.items.map((i) => i.title).sort()).toEqual(["Hiring plan", "Roadmap Q3", "Roadmap review"]);
  });

  it("breaks a tie of equal vectors by note id, as the in-process index does", async () => {
    const r = await app.notes.semantic({ userId: users.ann, scopes: [] }, "tomatoes basil garden", 2);
    expect(r.items.map((i) => i.id)).toEqual([uuids.get("Garden"), uuids.get("Garden (2)")]);
    expect(r.items[0]!.similarity).toBe(r.items[1]!.similarity);
  });

  it("refuses find_similar of a note outside the boundary as not found", async () => {
    const inWork = { userId: users.ann, scopes: [], restriction: { folder: "Work" } };
    await expect(app.notes.similar(inWork, uuids.get("Garden")!, 5)).rejects.toThrow("Note not found");
    await expect(
      app.notes.similar({ userId: users.ann, scopes: [] }, uuids.get("Bob roadmap 1")!, 5),
    ).rejects.toThrow("Note not found");
  });

  it("searches a note written after the migration at once, its new text after an edit, nothing once deleted", async () => {
    const a = { userId: users.ann, scopes: [] };
    const made = await app.notes.create(a, { title: "Kiwi", text: "kiwi mango papaya smoothie" });
    expect((await app.notes.semantic(a, "kiwi mango papaya", 1)).items[0]!.id).toBe(made.id);
    await app.notes.update(a, { note_id: made.id, text: "quince marmalade recipe", mode: "replace" });
    expect((await app.notes.semantic(a, "quince marmalade", 1)).items[0]!.id).toBe(made.id);
    const r = await app.notes.similar(a, made.id, 3);
    expect(r.items.map((i) => i.id)).not.toContain(made.id);
    await app.notes.delete(a, made.id);
    expect((await app.notes.semantic(a, "quince marmalade", 50)).items.map((i) => i.id)).not.toContain(
      made.id,
    );
  });

  it("keeps every migrated vector bit for bit in its pgvector column, or has none without pgvector", async () => {
    const store = app.store as PgStore;
    const column = await store.db.get(
      "SELECT 1 FROM information_schema.columns WHERE table_name = 'embeddings' AND column_name = 'v'",
    );
    expect(column !== undefined).toBe(engine.pgvector);
    const version = async () => (await store.vectors.version()) as string;
    const before = await version();
    await store.db.run(
      "UPDATE embeddings SET vec = vec WHERE note_id = (SELECT min(note_id) FROM embeddings)",
    );
    const moved = await version();
    // A vector changed (as far as anyone knows): other instances' in-process indexes must reload.
    expect(Number(moved)).toBe(Number(before) + 1);
    if (!engine.pgvector) return;
    // Giving rows their pgvector copy changes no vector: the counter stays.
    await store.db.run("UPDATE embeddings SET v = v");
    expect(await version()).toBe(moved);
    const rows = await store.db.all<{ id: number; v: string | null }>(
      "SELECT note_id AS id, v::text AS v FROM embeddings ORDER BY note_id",
    );
    expect(rows.length).toBeGreaterThan(ANN.length + BOB_PRIVATE);
    for (const r of rows) {
      expect(r.v, `note ${r.id}`).not.toBeNull();
      const back = Float32Array.from(JSON.parse(r.v!) as number[]);
      expect(back).toEqual(await store.vectors.get(r.id, "hash-512"));
    }
  });

  it("with an HNSW threshold: builds the index once a model reaches it and searches through it, full size inside a boundary", async () => {
    const hnsw = await openAppAt(db.url, { ...opts(), hnswThreshold: 10 });
    try {
      const store = hnsw.store as PgStore;
      expect(vectorsInUse(store)).toBe(engine.pgvector ? "pgvector hnsw (threshold 10)" : "in-process");
      const inWork = { userId: users.ann, scopes: [], restriction: { folder: "Work", tag: "#work" } };
      const exact = await app.notes.semantic(inWork, "roadmap planning team", 5);
      // The first search finds the model above the threshold and starts the build (exact meanwhile).
      expect(await hnsw.notes.semantic(inWork, "roadmap planning team", 5)).toEqual(exact);
      await store.vectorSearch?.settled();
      const index = await store.db.get<{ valid: boolean }>(
        `SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
         WHERE c.relname LIKE 'embeddings_hnsw_%'`,
      );
      expect(index?.valid ?? false).toBe(engine.pgvector);
      // PGlite is one backend: flushing its pending statistics makes this count the searches so far.
      const scans = async () => {
        await store.db.get("SELECT pg_stat_force_next_flush()");
        const row = await store.db.get<{ n: number }>(
          "SELECT coalesce(sum(idx_scan), 0)::int AS n FROM pg_stat_user_indexes WHERE indexrelname LIKE 'embeddings_hnsw_%'",
        );
        return row!.n;
      };
      const before = await scans();
      // Through the index now: Bob's forty nearer notes are filtered inside the scan, Ann gets all three.
      expect(await hnsw.notes.semantic(inWork, "roadmap planning team", 5)).toEqual(exact);
      expect((await scans()) > before).toBe(engine.pgvector);
      // Unrestricted, Ann's five nearest visible notes; an approximate index may pick another note of
      // an equal score, so the similarities are compared, and every note must be Ann's or shared.
      const a = { userId: users.ann, scopes: [] };
      const r = (await hnsw.notes.semantic(a, "roadmap planning team", 5)).items;
      const e = (await app.notes.semantic(a, "roadmap planning team", 5)).items;
      expect(r.map((i) => i.similarity)).toEqual(e.map((i) => i.similarity));
      expect(r.filter((i) => i.title.startsWith("Bob roadmap"))).toEqual([]);
    } finally {
      await hnsw.close();
    }
  });

  it("ranks by meaning with the real USE model, inside a folder boundary too", async () => {
    const meaning = await openAppAt(db.url, { embedder: use, log: () => {}, hnswThreshold: undefined });
    try {
      const cy = { userId: (await meaning.accounts.ensureUser("cy")).id, scopes: [] };
      const ids = new Map<string, string>();
      for (const [key, title, text] of MEANING) {
        const n = await meaning.notes.create(cy, { title, text });
        if (key === "pasta" || key === "piano") await meaning.notes.file(cy, n.id, "Home");
        ids.set(key, n.id);
      }
      for (const [key, , , query] of MEANING) {
        const r = (await meaning.notes.semantic(cy, query, 3)).items;
        expect(r[0]!.id, query).toBe(ids.get(key));
        expect(r[0]!.similarity!).toBeGreaterThan(r[1]!.similarity!);
      }
      // Held to folder Home, a search finds only its two notes, the piano note first.
      const home = { ...cy, restriction: { folder: "Home" } };
      const r = (await meaning.notes.semantic(home, "playing a musical instrument", 5)).items;
      expect(r.map((i) => i.id)).toEqual([ids.get("piano"), ids.get("pasta")]);
      const twin = await meaning.notes.create(cy, {
        title: "Training deep nets",
        text: "Each layer's weights are adjusted by gradients flowing backwards from the loss.",
      });
      const similar = (await meaning.notes.similar(cy, twin.id, 3)).items;
      expect(similar[0]!.id).toBe(ids.get("nn"));
      expect(similar.map((i) => i.id)).not.toContain(twin.id);
    } finally {
      await meaning.close();
    }
  }, 120_000);

  it("takes up pgvector at the next start when it appears after the migration ran; a no-op without it", async () => {
    const store = app.store as PgStore;
    if (engine.pgvector) {
      // As if migration 3 had run on a server without pgvector: no extension, no column.
      await store.db.run("ALTER TABLE embeddings DROP COLUMN v");
      await store.db.run("DROP EXTENSION vector");
    } else await store.db.run(PGVECTOR_SETUP);
    const again = await openAppAt(db.url, { ...opts(), hnswThreshold: undefined });
    try {
      expect(vectorsInUse(again.store)).toBe(engine.vectors);
      const unfilled = await (again.store as PgStore).db
        .get<{ c: number }>("SELECT count(*) AS c FROM embeddings WHERE v IS NULL")
        .catch((e: Error) => e.message);
      expect(unfilled).toEqual(engine.pgvector ? { c: 0 } : 'column "v" does not exist');
      const a = { userId: users.ann, scopes: [] };
      const expected = await onSqlite((s) => s.notes.semantic(a, "roadmap planning", 10));
      expect(await again.notes.semantic(a, "roadmap planning", 10)).toEqual(expected);
    } finally {
      await again.close();
    }
  });
});
