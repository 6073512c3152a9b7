/**
 * The PostgreSQL store's own schema: versioned migrations applied once (also by instances starting
 * together), a newer database refused, and the rules the SQLite schema holds held here too.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migratePostgres, PG_MIGRATIONS } from "../src/store/postgres/migrations.js";
import { lexemeQuery } from "../src/store/postgres/notes.js";
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

  it("keeps each user's note counts through every kind of write (migration 5)", async () => {
    // The counters must always equal a count of the notes themselves.
    const rowsOf = async (sql: string) =>
      (await pool.query(sql)).rows.map((r) => ({
        user_id: Number(r.user_id),
        folder_key: Number(r.folder_key),
        source: r.source as string,
        shared: Number(r.shared),
        n: Number(r.n),
      }));
    const counted = () =>
      rowsOf(
        `SELECT user_id, folder_key, source, shared, n FROM note_counts WHERE n <> 0
         ORDER BY user_id, folder_key, source, shared`,
      );
    const truth = () =>
      rowsOf(
        `SELECT user_id, coalesce(folder_id, 0) AS folder_key, source, shared, count(*) AS n FROM notes
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
      );
    const check = async (step: string) => expect(await counted(), step).toEqual(await truth());
    const ann = await user("ann");
    const bob = await user("bob");
    const folder = async (u: number, name: string) =>
      Number(
        (
          await one<{ id: string }>(
            "INSERT INTO folders (user_id, name, name_key) VALUES ($1, $2, lower($2)) RETURNING id",
            [u, name],
          )
        ).id,
      );
    const f1 = await folder(ann, "F1");
    const f2 = await folder(ann, "F2");
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await note(i % 3 === 0 ? bob : ann, `t${i}`, "b"));
    await check("inserted one by one");
    expect((await counted()).length).toBeGreaterThan(0);
    await pool.query(
      `INSERT INTO notes (uuid, user_id, folder_id, title, body, source, created_ms, updated_ms)
       SELECT gen_random_uuid()::text, $1, $2, 'x', 'y', s, 0, 0
       FROM unnest(ARRAY['note', 'email', 'feed', 'email']) AS s`,
      [ann, f1],
    );
    await check("inserted by one statement");
    await pool.query("UPDATE notes SET folder_id = $1 WHERE id = ANY($2::bigint[])", [f2, ids.slice(1, 6)]);
    await pool.query("UPDATE notes SET shared = 1 WHERE id = ANY($1::bigint[])", [ids.slice(0, 4)]);
    await pool.query("UPDATE notes SET source = 'bookmark', title = 'z' WHERE id = $1", [ids[7]]);
    await pool.query("UPDATE notes SET body = 'text only' WHERE user_id = $1", [ann]);
    await check("updated");
    await pool.query("DELETE FROM folders WHERE id = $1", [f2]); // its notes' folder becomes NULL
    await check("a folder deleted");
    await pool.query("DELETE FROM notes WHERE id = ANY($1::bigint[])", [ids.slice(8)]);
    await check("notes deleted");
    await pool.query("DELETE FROM users WHERE id = $1", [bob]); // his notes go with him
    await check("a user deleted");
    await pool.query("TRUNCATE notes CASCADE");
    expect(await counted()).toEqual([]);
    await note(ann, "again", "b");
    await check("after TRUNCATE");
  });

  it("counts a term's occurrences per field with ts_rank_cd exactly as the unnested positions do", async () => {
    const u = await user("ann");
    const many = Array.from({ length: 300 }, () => "garden").join(" "); // past the 256 positions kept
    await note(u, "Garden gardens gardening", `the garden of a gardener, runs and running ${many}`);
    await note(u, "Café", "café cafe CAFÉ naïve o'clock it's x-ray e-mail 3.5 v2 ß æ \\back'slash");
    await note(u, "", "");
    const rows = (
      await pool.query(
        `SELECT n.id, 'title_tsv' AS field, x.lexeme, array_length(x.positions, 1) AS unnested
         FROM notes n, unnest(n.title_tsv) x
         UNION ALL
         SELECT n.id, 'body_tsv', x.lexeme, array_length(x.positions, 1) FROM notes n, unnest(n.body_tsv) x`,
      )
    ).rows as { id: string; field: string; lexeme: string; unnested: number }[];
    expect(rows.length).toBeGreaterThan(15);
    for (const r of rows) {
      const { ranked } = await one<{ ranked: number }>(
        `SELECT ts_rank_cd('{1,1,1,1}'::float4[], ${r.field}, $1::tsquery)::float8 AS ranked FROM notes WHERE id = $2`,
        [lexemeQuery(r.lexeme), r.id],
      );
      expect(ranked, `${r.field} ${r.lexeme}`).toBe(r.unnested);
    }
    // The 301 occurrences are capped at what a tsvector keeps of one lexeme's positions, alike.
    const garden = Math.max(...rows.filter((r) => r.lexeme === "garden").map((r) => r.unnested));
    expect(garden).toBeGreaterThan(200);
    expect(garden).toBeLessThan(301);
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
