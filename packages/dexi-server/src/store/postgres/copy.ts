/**
 * `dexi migrate --from <sqlite file> --to <postgres url>`: copies every row of a SQLite store into an
 * empty PostgreSQL store in one transaction, ids as they are, then compares each table's count on both
 * sides and the vectors' bytes (an md5 over all of them in note order), and rolls back if any differs.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { openDatabase } from "../db.js";
import { Pg } from "./db.js";
import { migratePostgres } from "./migrations.js";
import { fillVectorColumn } from "./pgvector.js";

/** Parents before children, so every reference holds as rows arrive. */
const TABLES = [
  "teams",
  "users",
  "folders",
  "notes",
  "note_tags",
  "bookmarks",
  "emails",
  "feeds",
  "feed_articles",
  "review_cards",
  "embeddings",
  "config",
  "import_tombstones",
  "auth_passwords",
  "oauth_clients",
  "oauth_grants",
  "oauth_codes",
  "oauth_tokens",
] as const;
/** Tables whose ids come from an identity: it continues after the copied ids. */
const IDENTITIES = ["teams", "users", "folders", "notes", "feeds", "oauth_grants"] as const;
const BATCH = 500;

export type CopyReport = Record<(typeof TABLES)[number], number> & { vectorsMd5: string };

type Row = Record<string, unknown>;

export async function copySqliteToPostgres(from: string, to: string): Promise<CopyReport> {
  if (!existsSync(from)) throw new Error(`no such SQLite database: ${from}`);
  const src = openDatabase(from);
  const db = new Pg(to);
  try {
    await migratePostgres(db.pool);
    return await db.tx(async () => {
      const present = await db.get<{ n: number }>(
        "SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM notes) + (SELECT count(*) FROM oauth_clients) AS n",
      );
      if (present!.n > 0)
        throw new Error(`${describe(to)} already holds data; migrate into an empty database`);
      const report = {} as CopyReport;
      let pgvector = false;
      for (const table of TABLES) {
        const all = await copyColumns(db, table);
        // pgvector's copy of a vector is made from the copied bytes below, not read from SQLite.
        const columns = table === "embeddings" ? all.filter((c) => c !== "v") : all;
        if (columns.length < all.length) pgvector = true;
        const rows = src.prepare(`SELECT ${columns.join(", ")} FROM ${table}`).all() as Row[];
        for (let i = 0; i < rows.length; i += BATCH)
          await insert(db, table, columns, rows.slice(i, i + BATCH));
        const there = (await db.get<{ c: number }>(`SELECT count(*) AS c FROM ${table}`))!.c;
        if (there !== rows.length)
          throw new Error(
            `${table}: ${rows.length} rows in ${from} but ${there} copied; nothing was changed`,
          );
        report[table] = rows.length;
      }
      for (const table of IDENTITIES) {
        await db.run(
          `SELECT setval(pg_get_serial_sequence('${table}', 'id'), coalesce(max(id), 0) + 1, false) FROM ${table}`,
        );
      }
      if (pgvector) {
        await fillVectorColumn(db);
        const left = (await db.get<{ c: number }>("SELECT count(*) AS c FROM embeddings WHERE v IS NULL"))!.c;
        if (left > 0)
          throw new Error(`${left} vectors could not be given their pgvector copy; nothing was changed`);
      }
      const mine = createHash("md5");
      for (const r of src.prepare("SELECT vec FROM embeddings ORDER BY note_id").iterate() as Iterable<{
        vec: Buffer;
      }>)
        mine.update(r.vec);
      const expected = mine.digest("hex");
      const theirs = (await db.get<{ md5: string | null }>(
        "SELECT md5(coalesce(string_agg(vec, ''::bytea ORDER BY note_id), ''::bytea)) AS md5 FROM embeddings",
      ))!.md5;
      if (theirs !== expected)
        throw new Error("the copied vectors differ from the source's; nothing was changed");
      report.vectorsMd5 = expected;
      return report;
    });
  } finally {
    src.close();
    await db.close();
  }
}

/** The target's own (not generated) columns of a table. */
async function copyColumns(db: Pg, table: string): Promise<string[]> {
  const rows = await db.all<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => r.column_name);
}

async function insert(db: Pg, table: string, columns: string[], rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const tuple = `(${columns.map(() => "?").join(", ")})`;
  await db.run(
    `INSERT INTO ${table} (${columns.join(", ")}) OVERRIDING SYSTEM VALUE VALUES ${rows.map(() => tuple).join(", ")}`,
    rows.flatMap((r) => columns.map((c) => r[c] ?? null)),
  );
}

function describe(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}
