/**
 * The PostgreSQL store's own schema: versioned migrations applied once (also by instances starting
 * together), a newer database refused, and the rules the SQLite schema holds held here too.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migratePostgres, PG_MIGRATIONS } from "../src/store/postgres/migrations.js";
import { freshDatabase } from "./postgres-helpers.js";

let url: string;
let pool: pg.Pool;
beforeEach(async () => {
  url = await freshDatabase();
  pool = new pg.Pool({ connectionString: url });
});
afterEach(async () => {
  await pool.end();
});

const one = async <T>(sql: string, params: unknown[] = []): Promise<T> =>
  (await pool.query(sql, params)).rows[0] as T;

describe("the PostgreSQL store's migrations", () => {
  it("migrate a fresh database to the last version once, also with instances starting together", async () => {
    const others = [new pg.Pool({ connectionString: url }), new pg.Pool({ connectionString: url })];
    try {
      const reached = await Promise.all([pool, ...others].map((p) => migratePostgres(p)));
      expect(reached).toEqual([PG_MIGRATIONS.length, PG_MIGRATIONS.length, PG_MIGRATIONS.length]);
      const rows = (await pool.query("SELECT version FROM dexi_schema ORDER BY version")).rows;
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
      expect(await migratePostgres(pool)).toBe(PG_MIGRATIONS.length);
    } finally {
      for (const p of others) await p.end();
    }
  });

  it("refuse a database from a newer dexi", async () => {
    await migratePostgres(pool);
    await pool.query("INSERT INTO dexi_schema (version) VALUES ($1)", [PG_MIGRATIONS.length + 1]);
    await expect(migratePostgres(pool)).rejects.toThrow(
      `This database has schema version ${PG_MIGRATIONS.length + 1}, newer than this dexi (${PG_MIGRATIONS.length}); upgrade dexi`,
    );
  });
});

describe("the PostgreSQL schema", () => {
  beforeEach(async () => {
    await migratePostgres(pool);
  });

  const note = async (userId: number, title: string, body: string): Promise<number> =>
    Number(
      (
        await one<{ id: string }>(
          `INSERT INTO notes (uuid, user_id, title, body, source, created_ms, updated_ms)
           VALUES (gen_random_uuid()::text, $1, $2, $3, 'note', 0, 0) RETURNING id`,
          [userId, title, body],
        )
      ).id,
    );
  const user = async (name: string): Promise<number> =>
    Number(
      (await one<{ id: string }>("INSERT INTO users (name, created_ms) VALUES ($1, 0) RETURNING id", [name]))
        .id,
    );

  it("folds user names as SQLite's NOCASE does: ASCII letters only", async () => {
    await user("Ann");
    await expect(user("ANN")).rejects.toThrow(/users_name/);
    await user("Äda");
    await user("äda"); // NOCASE leaves non-ASCII letters as they are
    expect(Number((await one<{ c: string }>("SELECT count(*) AS c FROM users")).c)).toBe(3);
  });

  it("deletes a note's tags, card, vector and source record with it", async () => {
    const u = await user("ann");
    const n = await note(u, "t", "b");
    await pool.query("INSERT INTO note_tags (note_id, tag, kind, pos) VALUES ($1, '#a', 'hashtag', 0)", [n]);
    await pool.query("INSERT INTO review_cards (note_id, due_ms) VALUES ($1, 0)", [n]);
    await pool.query("INSERT INTO embeddings (note_id, model, vec) VALUES ($1, 'm', '\\x00000000')", [n]);
    await pool.query("INSERT INTO bookmarks (note_id, url) VALUES ($1, 'https://example.com')", [n]);
    await pool.query("DELETE FROM notes WHERE id = $1", [n]);
    for (const table of ["note_tags", "review_cards", "embeddings", "bookmarks"]) {
      expect(Number((await one<{ c: string }>(`SELECT count(*) AS c FROM ${table}`)).c), table).toBe(0);
    }
  });

  it("moves vectors_version on every vector change", async () => {
    const version = async () =>
      (await one<{ value: string }>("SELECT value FROM meta WHERE key = 'vectors_version'")).value;
    const n = await note(await user("ann"), "t", "b");
    expect(await version()).toBe("0");
    await pool.query("INSERT INTO embeddings (note_id, model, vec) VALUES ($1, 'm', '\\x00000000')", [n]);
    await pool.query("UPDATE embeddings SET vec = '\\x00000080' WHERE note_id = $1", [n]);
    await pool.query("DELETE FROM embeddings WHERE note_id = $1", [n]);
    expect(await version()).toBe("3");
  });

  it("moves vectors_version once per statement that changes vectors, however many rows it writes", async () => {
    const version = async () =>
      (await one<{ value: string }>("SELECT value FROM meta WHERE key = 'vectors_version'")).value;
    const u = await user("ann");
    const ids: number[] = [];
    for (let i = 0; i < 300; i++) ids.push(await note(u, `t${i}`, "b"));
    // One bump per row would make a long copy's every bump walk all the earlier ones (quadratic).
    await pool.query(
      "INSERT INTO embeddings (note_id, model, vec) SELECT id, 'm', '\\x00000000' FROM unnest($1::bigint[]) AS id",
      [ids],
    );
    expect(await version()).toBe("1");
    await pool.query(
      "INSERT INTO embeddings (note_id, model, vec) SELECT id, 'm', '\\x00000080' FROM unnest($1::bigint[]) AS id ON CONFLICT (note_id) DO UPDATE SET vec = excluded.vec",
      [ids.slice(0, 2)],
    );
    expect(await version()).toBe("2");
    await pool.query("DELETE FROM embeddings WHERE note_id = -1");
    await pool.query(
      "INSERT INTO embeddings (note_id, model, vec) SELECT id, 'm', '\\x00' FROM notes WHERE id < 0",
    );
    expect(await version()).toBe("2");
    await pool.query("DELETE FROM notes WHERE user_id = $1", [u]);
    expect(Number(await version())).toBeGreaterThan(2);
  });

  it("counts a folder's notes with a tag from indexes alone", async () => {
    const u = await user("ann");
    const folder = Number(
      (
        await one<{ id: string }>(
          "INSERT INTO folders (user_id, name, name_key) VALUES ($1, 'F', 'f') RETURNING id",
          [u],
        )
      ).id,
    );
    for (let i = 0; i < 20; i++) {
      const n = await note(u, `t${i}`, "b");
      await pool.query("UPDATE notes SET folder_id = $1 WHERE id = $2", [folder, n]);
      await pool.query("INSERT INTO note_tags (note_id, tag, kind, pos) VALUES ($1, '#a', 'hashtag', 0)", [
        n,
      ]);
    }
    await pool.query("VACUUM ANALYZE notes");
    await pool.query("VACUUM ANALYZE note_tags");
    const client = await pool.connect();
    try {
      // A table this small is read whole; the planner is told not to, to see what the indexes allow.
      await client.query("SET enable_seqscan = off");
      await client.query("SET enable_bitmapscan = off");
      const plan = (
        await client.query(
          `EXPLAIN SELECT count(*) FROM notes n WHERE n.user_id = $1 AND n.folder_id = $2
           AND EXISTS (SELECT 1 FROM note_tags ft WHERE ft.note_id = n.id AND ft.tag = ANY($3::text[]))`,
          [u, folder, ["#a"]],
        )
      ).rows
        .map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index Only Scan using \w+ on notes n/);
      expect(plan).not.toMatch(/Index Scan using \w+ on notes n/);
    } finally {
      client.release();
    }
  });

  it("indexes title (weight A) and body (weight B), stemmed and with diacritics folded", async () => {
    const u = await user("ann");
    const n = await note(u, "Running café", "a garden of tomatoes");
    const hit = async (q: string) =>
      (await pool.query("SELECT id FROM notes WHERE fts @@ plainto_tsquery('dexi', $1)", [q])).rows.map((r) =>
        Number(r.id),
      );
    expect(await hit("run")).toEqual([n]);
    expect(await hit("cafe")).toEqual([n]);
    expect(await hit("tomato")).toEqual([n]);
    expect(await hit("potato")).toEqual([]);
    // No stop words are dropped, as FTS5 drops none: "of" is found like any word.
    expect(await hit("of")).toEqual([n]);
    const weights = await one<{ title: string; body: string }>(
      `SELECT (SELECT string_agg(DISTINCT w, '') FROM unnest(fts) AS x, unnest(x.weights) AS w
                WHERE x.lexeme = 'run') AS title,
              (SELECT string_agg(DISTINCT w, '') FROM unnest(fts) AS x, unnest(x.weights) AS w
                WHERE x.lexeme = 'garden') AS body
       FROM notes WHERE id = $1`,
      [n],
    );
    expect(weights).toEqual({ title: "A", body: "B" });
  });
});
