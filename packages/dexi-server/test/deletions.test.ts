import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openAppAt } from "../src/app.js";
import { TOMBSTONE_DAYS } from "../src/domain/importing.js";
import { HashEmbedder } from "../src/embed/hash.js";
import { MIGRATIONS } from "../src/store/migrations.js";
import { SqliteStore } from "../src/store/index.js";
import { connect, runDexi } from "./helpers.js";
import { freshLocation, query as storeQuery, STORE } from "./stores.js";

// Bulk embedding runs in worker threads (dist/embed/worker.js: build first) with the instant hash model.
process.env["DEXI_EMBEDDINGS"] = "hash";
const FIX = fileURLToPath(new URL("./fixtures/", import.meta.url));
let dir: string;
let db: string;
let n = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dexi-del-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(async () => {
  n++;
  db = await freshLocation(dir);
});

const dexi = (...argv: string[]) => runDexi(db, argv);

/** SQL over the test's store (a SQLite file is opened as the bins open it: migrated). */
async function query<T>(sql: string, ...params: unknown[]): Promise<T[]> {
  if (STORE === "postgres") return storeQuery<T>(db, sql, ...params);
  const s = SqliteStore.open(db);
  try {
    const stmt = s.db.prepare(sql);
    if (stmt.reader) return stmt.all(...params) as T[];
    stmt.run(...params);
    return [];
  } finally {
    s.db.close();
  }
}
const titles = async () =>
  (await query<{ title: string }>("SELECT title FROM notes ORDER BY title")).map((r) => r.title);

/** Deletes notes by title through the delete_note tool, as an assistant would. */
async function deleteNotes(...wanted: string[]): Promise<void> {
  const app = await openAppAt(db, { embedder: new HashEmbedder(), log: () => {} });
  const s = await connect(app, "local");
  try {
    for (const title of wanted) {
      const [row] = await query<{ uuid: string }>("SELECT uuid FROM notes WHERE title = ?", title);
      expect(row, title).toBeDefined();
      expect(await s.ok("delete_note", { note_id: row!.uuid })).toMatchObject({ deleted: true, title });
    }
  } finally {
    await s.close();
    await app.close();
  }
}

describe("an imported note deleted in dexi stays deleted", () => {
  it("for vault notes, bookmarks, emails and feed files; --restore-deleted brings them back", async () => {
    const vault = join(dir, `vault-${n}`);
    cpSync(join(FIX, "vault"), vault, { recursive: true });
    const sources = [vault, join(FIX, "bookmarks.html"), join(FIX, "archive.mbox"), join(FIX, "feed.xml")];
    for (const src of sources) expect((await dexi("import", src)).code).toBe(0);
    const all = await titles();
    await deleteNotes("Welcome", "Loose link", "First in mbox", "Second post");
    for (const src of sources) await dexi("import", src);
    expect(await titles()).toEqual(
      all.filter((t) => !["Welcome", "Loose link", "First in mbox", "Second post"].includes(t)),
    );
    const again = await dexi("import", join(FIX, "bookmarks.html"));
    expect(again.out).toMatch(
      /^bookmarks: 0 created, 0 updated, 3 already imported, 1 deleted in dexi \(not imported again; --restore-deleted brings them back\) in/,
    );
    // Edited at the source since: still deleted (the deletion is of the item, not of one version).
    writeFileSync(join(vault, "Welcome.md"), "# Welcome\n\nA new version.\n");
    expect((await dexi("import", vault)).out).toMatch(
      /^markdown: 0 created, 0 updated, 3 already imported, 1 deleted/,
    );

    const back = await dexi("import", vault, "--restore-deleted");
    expect(back.out).toMatch(/^markdown: 1 created, 0 updated, 3 already imported in/);
    expect(
      (await query<{ body: string }>("SELECT body FROM notes WHERE title = 'Welcome'"))[0]?.body,
    ).toContain("A new version.");
    expect(await query("SELECT content_key FROM import_tombstones WHERE content_key LIKE 'md:%'")).toEqual(
      [],
    );
    // Once restored, it is an ordinary imported note again.
    expect((await dexi("import", vault)).out).toMatch(
      /^markdown: 0 created, 0 updated, 4 already imported in/,
    );
  });

  it("remembers a deletion for TOMBSTONE_DAYS, then forgets it", async () => {
    await dexi("import", join(FIX, "bookmarks.html"));
    await deleteNotes("Loose link");
    const daysAgo = (d: number) => Date.now() - d * 86_400_000;
    const age = (ms: number) => query("UPDATE import_tombstones SET deleted_ms = ?", ms);
    await age(daysAgo(TOMBSTONE_DAYS - 1));
    expect((await dexi("import", join(FIX, "bookmarks.html"))).out).toMatch(/1 deleted in dexi/);
    await age(daysAgo(TOMBSTONE_DAYS + 1));
    expect((await dexi("import", join(FIX, "bookmarks.html"))).out).toMatch(
      /^bookmarks: 1 created, 0 updated, 3/,
    );
    expect(await query("SELECT * FROM import_tombstones")).toEqual([]);
  });

  it("a vault note pruned because its file is gone comes back with its file (prune remembers nothing)", async () => {
    const vault = join(dir, `vault-${n}`);
    cpSync(join(FIX, "vault"), vault, { recursive: true });
    await dexi("import", vault);
    const welcome = readFileSync(join(vault, "Welcome.md"));
    rmSync(join(vault, "Welcome.md"));
    expect((await dexi("import", vault, "--prune")).out).toMatch(/1 removed/);
    writeFileSync(join(vault, "Welcome.md"), welcome);
    expect((await dexi("import", vault)).out).toMatch(/^markdown: 1 created/);
  });

  it("notes written in dexi leave nothing behind when deleted", async () => {
    const app = await openAppAt(db, { embedder: new HashEmbedder(), log: () => {} });
    const s = await connect(app, "local");
    const note = await s.ok("create_note", { title: "mine", text: "x" });
    await s.ok("delete_note", { note_id: note["id"] });
    await s.close();
    await app.close();
    expect(await query("SELECT * FROM import_tombstones")).toEqual([]);
  });
});

describe("feed articles are keyed per feed", () => {
  let server: Server;
  let base: string;
  const feed = (name: string, items: string) =>
    `<?xml version="1.0"?><rss version="2.0"><channel><title>${name}</title>${items}</channel></rss>`;
  const item = (guid: string, title: string) =>
    `<item><guid isPermaLink="false">${guid}</guid><title>${title}</title><description>${title} text</description></item>`;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const body =
        req.url === "/a.xml"
          ? feed("A", item("1", "A one") + item("2", "A two"))
          : req.url === "/b.xml"
            ? feed("B", item("1", "B one"))
            : undefined;
      if (body) res.writeHead(200, { "content-type": "application/rss+xml" }).end(body);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("two subscriptions reusing guid 1 keep two articles; a deleted one is not polled back", async () => {
    await dexi("feeds", "add", `${base}/a.xml`);
    await dexi("feeds", "add", `${base}/b.xml`);
    expect((await dexi("feeds", "poll")).out).toBe(
      `${base}/a.xml: 2 new, 0 updated, 0 already seen\n${base}/b.xml: 1 new, 0 updated, 0 already seen\n`,
    );
    expect(await titles()).toEqual(["A one", "A two", "B one"]);
    await deleteNotes("A one");
    expect((await dexi("feeds", "poll")).out).toBe(
      `${base}/a.xml: 0 new, 0 updated, 1 already seen, 1 deleted in dexi (not imported again; --restore-deleted brings them back)\n` +
        `${base}/b.xml: 0 new, 0 updated, 1 already seen\n`,
    );
    expect(await titles()).toEqual(["A two", "B one"]);
    expect((await dexi("feeds", "poll", "--restore-deleted")).out).toContain(`${base}/a.xml: 1 new`);
    expect(await titles()).toEqual(["A one", "A two", "B one"]);
  });

  it("two feed files reusing guid 1 keep two articles", async () => {
    const a = join(dir, `a-${n}.xml`);
    const b = join(dir, `b-${n}.xml`);
    writeFileSync(a, feed("A", item("1", "A one")));
    writeFileSync(b, feed("B", item("1", "B one")));
    expect((await dexi("import", a)).out).toMatch(/^feed: 1 created/);
    expect((await dexi("import", b)).out).toMatch(/^feed: 1 created/);
    expect((await dexi("import", a)).out).toMatch(/^feed: 0 created, 0 updated, 1 already imported/);
    expect(await titles()).toEqual(["A one", "B one"]);
  });

  // About the SQLite file's own migrations (PostgreSQL's start at the per-feed keys).
  if (STORE === "sqlite")
    it("a database from before (migration 4): polled articles move to per-feed keys, file articles on their next import", async () => {
      const old = new Database(db);
      for (const m of MIGRATIONS.slice(0, 3)) old.exec(m);
      old.pragma("user_version = 3");
      old.exec(`
      INSERT INTO users (id, name, created_ms) VALUES (1, 'local', 0);
      INSERT INTO feeds (id, user_id, url) VALUES (7, 1, '${base}/a.xml');
      INSERT INTO notes (id, uuid, user_id, title, body, source, content_key, import_hash, created_ms, updated_ms)
        VALUES (1, 'u1', 1, 'A one', 'A one text', 'feed', 'feed:1', NULL, 0, 0),
               (2, 'u2', 1, 'File one', 'File one text', 'feed', 'feed:f1', NULL, 0, 0);
      INSERT INTO feed_articles (note_id, feed_id, guid) VALUES (1, 7, '1'), (2, NULL, 'f1');`);
      old.close();
      expect(await query("SELECT id, content_key FROM notes ORDER BY id")).toEqual([
        { id: 1, content_key: "feed#7:1" },
        { id: 2, content_key: "feed:f1" },
      ]);
      expect((await dexi("feeds", "poll")).out).toBe(`${base}/a.xml: 1 new, 0 updated, 1 already seen\n`);
      const file = join(dir, `f-${n}.xml`);
      writeFileSync(file, feed("F", item("f1", "File one")));
      expect((await dexi("import", file)).out).toMatch(/^feed: 0 created, 0 updated, 1 already imported/);
      expect(await query("SELECT content_key FROM notes WHERE id = 2")).toEqual([
        { content_key: `feedfile:${file}:f1` },
      ]);
    });
});
