import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { machineTimeZone } from "../src/domain/time.js";
import type { Store } from "../src/store/index.js";
import { runDexi } from "./helpers.js";
import { freshLocation, openStore, query } from "./stores.js";

// Bulk embedding runs in worker threads (dist/embed/worker.js: build first) with the instant hash model.
process.env["DEXI_EMBEDDINGS"] = "hash";
const FIX = fileURLToPath(new URL("./fixtures/", import.meta.url));
let dir: string;
let db: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dexi-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
beforeEach(async () => {
  n++;
  db = await freshLocation(dir);
});

const dexi = (...argv: string[]) => runDexi(db, argv);

/** SQL over the test's store, and its async port for a look (opened and closed around each). */
const sql = <T>(text: string, ...params: unknown[]) => query<T>(db, text, ...params);
async function withStore<T>(fn: (s: Store) => Promise<T>): Promise<T> {
  const s = await openStore(db);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

type Row = {
  title: string;
  body: string;
  source: string;
  source_url: string | null;
  folder: string | null;
  created_ms: number;
  tags: string | null;
};
const rows = () =>
  sql<Row>(
    `SELECT n.title, n.body, n.source, n.source_url, f.name AS folder, n.created_ms,
     (SELECT string_agg(tag, ' ' ORDER BY pos) FROM note_tags t WHERE t.note_id = n.id) AS tags
     FROM notes n LEFT JOIN folders f ON f.id = n.folder_id ORDER BY n.title`,
  );

describe("dexi import", () => {
  it("imports an Obsidian vault: front matter, folders from paths, tags; twice creates nothing new", async () => {
    const r = await dexi("import", join(FIX, "vault"));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^markdown: 4 created, 0 updated, 0 already imported/);
    expect(r.err).toContain("imported 4/4");
    const all = await rows();
    expect(all.map((x) => [x.title, x.folder])).toEqual([
      ["2025-11-04", "Journal"],
      ["Alpha kickoff meeting", "Projects/Alpha"],
      ["Welcome", null],
      ["broken-front-matter", "Journal"],
    ]);
    const kickoff = all.find((x) => x.title === "Alpha kickoff meeting")!;
    expect(kickoff.tags).toBe("@maria #planning #alpha");
    expect(kickoff.created_ms).toBe(Date.parse("2025-11-03T09:30:00Z"));
    expect(all.find((x) => x.title === "2025-11-04")!.tags).toBe("#running #review #journal");
    expect(all.find((x) => x.title === "broken-front-matter")!.body).toContain("Body survives");
    expect(await withStore((s) => s.vectors.models())).toEqual([{ model: "hash-512", count: 4 }]);
    expect((await sql<{ c: number }>("SELECT count(*) AS c FROM review_cards"))[0]!.c).toBe(1);
    const again = await dexi("import", join(FIX, "vault"));
    expect(again.out).toMatch(/^markdown: 0 created, 0 updated, 4 already imported/);
    expect(await rows()).toHaveLength(4);
  });

  it("re-imports an edited file into its note, but never overwrites a note edited in dexi", async () => {
    const vault = join(dir, `vault-${n}`);
    cpSync(join(FIX, "vault"), vault, { recursive: true });
    expect((await dexi("import", vault)).out).toMatch(/^markdown: 4 created, 0 updated, 0 already imported/);
    const note = async (title: string) =>
      (
        await sql<{
          id: number;
          uuid: string;
          body: string;
          updated_ms: number;
          folder: string | null;
          tags: string;
          vectors: number;
        }>(
          `SELECT n.id, n.uuid, n.body, n.updated_ms, f.name AS folder,
           (SELECT string_agg(tag, ' ' ORDER BY pos) FROM note_tags t WHERE t.note_id = n.id) AS tags,
           (SELECT count(*) FROM embeddings e WHERE e.note_id = n.id) AS vectors
           FROM notes n LEFT JOIN folders f ON f.id = n.folder_id WHERE n.title = ?`,
          title,
        )
      )[0]!;
    const welcome = await note("Welcome");
    // Edited in the vault only: the note follows the file, tags re-parsed, vector and identity kept.
    writeFileSync(join(vault, "Welcome.md"), "# Welcome\n\nNow about #gardening with @grace.\n");
    // Edited in dexi only: the file did not change, so the import leaves the note alone.
    const kickoff = await note("Alpha kickoff meeting");
    await withStore((s) =>
      s.notes.update(kickoff.id, {
        title: "Alpha kickoff meeting",
        body: "my own words",
        updatedMs: 1,
        tags: [],
      }),
    );
    // Edited in both: dexi's version is kept and the import says so.
    const journal = await note("2025-11-04");
    await withStore((s) =>
      s.notes.update(journal.id, { title: "2025-11-04", body: "dexi edit", updatedMs: 1, tags: [] }),
    );
    writeFileSync(join(vault, "Journal", "2025-11-04.md"), "vault edit\n");

    const r = await dexi("import", "--verbose", vault);
    expect(r.out).toMatch(
      /^markdown: 0 created, 1 updated, 2 already imported, 1 kept as edited in dexi \(their source changed too\)/m,
    );
    expect(r.out).toContain(`updated ${welcome.uuid} md:`);
    expect(r.err).toContain(`kept note ${journal.uuid} as edited in dexi`);
    const after = await note("Welcome");
    expect(after).toMatchObject({ id: welcome.id, uuid: welcome.uuid, folder: null, vectors: 1 });
    expect(after.body).toContain("Now about #gardening with @grace.");
    expect(after.body).not.toContain("#ideas");
    expect(after.tags.split(" ").sort()).toEqual(["#gardening", "@grace"]);
    expect(after.updated_ms).toBeGreaterThan(welcome.updated_ms);
    expect((await note("Alpha kickoff meeting")).body).toBe("my own words");
    expect((await note("2025-11-04")).body).toBe("dexi edit");
    expect(await rows()).toHaveLength(4);
    // Once imported, the updated note is unchanged on the next run.
    expect((await dexi("import", vault)).out).toMatch(
      /^markdown: 0 created, 0 updated, 3 already imported, 1 kept/,
    );
    // Notes imported before import hashes were kept: a changed source counts as a conflict, never an
    // overwrite; an unchanged one is recognised and hashed.
    await sql("UPDATE notes SET import_hash = NULL");
    writeFileSync(join(vault, "Welcome.md"), "# Welcome\n\nThird version.\n");
    expect((await dexi("import", vault)).out).toMatch(
      /^markdown: 0 created, 0 updated, 1 already imported, 3 kept/,
    );
    expect((await note("Welcome")).body).toContain("#gardening");
    expect((await sql("SELECT count(*) AS c FROM notes WHERE import_hash IS NOT NULL"))[0]).toEqual({ c: 1 });
  });

  it("with --prune removes notes whose files are gone, unless edited in dexi, and never on an empty vault", async () => {
    const vault = join(dir, `prune-${n}`);
    cpSync(join(FIX, "vault"), vault, { recursive: true });
    expect((await dexi("import", vault)).out).toMatch(/^markdown: 4 created/);
    const uuidOf = async (title: string) =>
      (await sql<{ uuid: string }>("SELECT uuid FROM notes WHERE title = ?", title))[0]!.uuid;
    const journal = await uuidOf("2025-11-04");
    await sql("UPDATE notes SET body = 'edited in dexi' WHERE uuid = ?", journal);
    rmSync(join(vault, "Welcome.md"));
    rmSync(join(vault, "Journal", "2025-11-04.md"));
    // Without --prune nothing goes.
    expect((await dexi("import", vault)).out).toMatch(
      /^markdown: 0 created, 0 updated, 2 already imported in/,
    );
    expect(await rows()).toHaveLength(4);

    const r = await dexi("import", vault, "--prune");
    expect(r.out).toMatch(
      /^markdown: 0 created, 0 updated, 2 already imported, 1 removed \(their files are gone\), 1 kept as edited in dexi \(their files are gone\) in/,
    );
    expect(r.err).toContain(`kept note ${journal} as edited in dexi; its source is gone`);
    expect((await rows()).map((x) => x.title)).toEqual([
      "2025-11-04",
      "Alpha kickoff meeting",
      "broken-front-matter",
    ]);

    // An emptied (or unmounted) vault removes nothing; --prune is for folders of Markdown only.
    const empty = join(dir, `empty-${n}`);
    cpSync(join(FIX, "vault"), empty, { recursive: true });
    for (const f of ["Welcome.md", "Journal", "Projects"]) rmSync(join(empty, f), { recursive: true });
    const none = await dexi("import", empty, "--prune", "--kind", "markdown");
    expect([none.code, none.err]).toEqual([2, `dexi: --prune found no Markdown files under ${empty}\n`]);
    expect((await dexi("import", join(FIX, "bookmarks.html"), "--prune")).code).toBe(2);
    expect(await rows()).toHaveLength(3);
  });

  it("drops U+0000 from an imported file's text, whichever the store; a second import finds it unchanged", async () => {
    const vault = join(dir, `nul-${n}`);
    mkdirSync(vault);
    writeFileSync(join(vault, "Odd.md"), "# Odd\u0000 one\n\nA byte\u0000 of nothing #kept\n");
    expect((await dexi("import", vault)).out).toMatch(/^markdown: 1 created, 0 updated, 0 already imported/);
    expect((await rows()).map((x) => [x.title, x.body, x.tags])).toEqual([
      ["Odd", "# Odd one\n\nA byte of nothing #kept", "#kept"],
    ]);
    expect((await dexi("import", vault)).out).toMatch(/^markdown: 0 created, 0 updated, 1 already imported/);
  });

  it("imports browser bookmarks with source_url, folders, tags and descriptions", async () => {
    const r = await dexi("import", join(FIX, "bookmarks.html"));
    expect(r.out).toMatch(/^bookmarks: 4 created/);
    const all = await rows();
    expect(all.map((x) => [x.title, x.source, x.source_url, x.folder])).toEqual([
      ["Attention Is All You Need", "bookmark", "https://arxiv.org/abs/1706.03762", "Bookmarks bar"],
      ["Back in the bar", "bookmark", "https://example.org/back", "Bookmarks bar"],
      ["Garlic pasta <quick>", "bookmark", "https://example.com/pasta?a=1&b=2", "Cooking"],
      ["Loose link", "bookmark", "https://example.net/loose", null],
    ]);
    const paper = all[0]!;
    expect(paper.body).toBe("The transformer paper & its self-attention.\n\n#ml #papers");
    expect(paper.created_ms).toBe(1700000100_000);
    expect((await sql<{ c: number }>("SELECT count(*) AS c FROM bookmarks"))[0]!.c).toBe(4);
    expect((await dexi("import", join(FIX, "bookmarks.html"))).out).toMatch(
      /^bookmarks: 0 created, 0 updated, 4 already imported/,
    );
  });

  it("leaves out a stranger's message the parser refuses, names it, and imports the rest", async () => {
    const head = (subject: string, type: string) =>
      `From sender@example.net Mon Dec  7 10:00:00 2026\nFrom: sender@example.net\nSubject: ${subject}\nMessage-ID: <${subject.replace(/\W/g, "")}@x>\nContent-Type: ${type}\n\n`;
    const mbox = join(dir, `hostile-${n}.mbox`);
    writeFileSync(
      mbox,
      [
        `${head("Many parts", 'multipart/mixed; boundary="b"')}${"--b\n\nx\n".repeat(1_500)}--b--\n`,
        `${head("Deep page", "text/html")}${"<div>".repeat(20_000)}deep words\n`,
        `${head("Plain one", "text/plain")}Hello.\n`,
      ].join("\n"),
    );
    const r = await dexi("import", mbox);
    expect(r.out).toMatch(/^mbox: 2 created, .*1 unreadable \(left out, named above\)/);
    expect(r.err).toContain(`left out, unreadable: message 1 of ${mbox}: Max allowed child nodes exceeded`);
    expect(r.code).toBe(0);
    expect((await rows()).map((x) => x.title)).toEqual(["Deep page", "Plain one"]);
  });

  it("imports .eml files and mbox archives as emails", async () => {
    expect((await dexi("import", join(FIX, "mail"))).out).toMatch(/^email: 2 created/);
    expect((await dexi("import", join(FIX, "archive.mbox"))).out).toMatch(/^mbox: 2 created/);
    const all = await rows();
    expect(all.map((x) => [x.title, x.source])).toEqual([
      ["Budget for Q3", "email"],
      ["First in mbox", "email"],
      ["Newsletter", "email"],
      ["Second in mbox", "email"],
    ]);
    expect(all[0]!.tags).toBe("#finance");
    expect(all[1]!.body).toBe("Line one\nFrom the escaped line");
    expect(all[2]!.body).toContain("Only an HTML body here.");
    const emails = await sql("SELECT message_id, from_addr FROM emails ORDER BY message_id");
    expect(emails).toContainEqual({
      message_id: "<budget-q3@example.org>",
      from_addr: '"Ann Example" <ann@example.org>',
    });
    expect((await dexi("import", join(FIX, "archive.mbox"))).out).toMatch(
      /^mbox: 0 created, 0 updated, 2 already imported/,
    );
    expect((await dexi("import", join(FIX, "mail", "plain.eml"))).out).toMatch(
      /^email: 0 created, 0 updated, 1 already imported/,
    );
  });

  it("imports RSS and Atom files as feed articles with text from HTML", async () => {
    expect((await dexi("import", join(FIX, "feed.xml"))).out).toMatch(/^feed: 2 created/);
    expect((await dexi("import", join(FIX, "atom.xml"))).out).toMatch(/^feed: 1 created/);
    const all = await rows();
    expect(all.map((x) => [x.title, x.source, x.source_url])).toEqual([
      ["Atom entry one", "feed", "https://atom.example.com/one"],
      ["Second post", "feed", "https://blog.example.com/second"],
      ["Vector search in SQLite", "feed", "https://blog.example.com/vectors"],
    ]);
    expect(all[2]!.body).toBe("A loop over a Float32Array beats an index at 100k rows.");
    expect(all[1]!.body).toBe("Full content & more.");
  });

  it("stops at the plan's note cap and says so", async () => {
    await dexi("settings", "--plan", "free", "--note-cap", "3");
    const r = await dexi("import", join(FIX, "vault"));
    expect(r.code).toBe(5);
    expect(r.out).toMatch(/3 created, 0 updated, 0 already imported, 1 over the plan's note cap/);
    expect(await rows()).toHaveLength(3);
  });

  it("imports without vectors on --no-embed, and reindex fills them in", async () => {
    expect((await dexi("import", join(FIX, "vault"), "--no-embed")).out).toMatch(/4 without vectors/);
    expect(await withStore((s) => s.vectors.countMissing("hash-512"))).toBe(4);
    const r = await dexi("reindex");
    expect(r.out).toMatch(/^reindex: 4 notes embedded with hash-512/);
    expect(await withStore((s) => s.vectors.countMissing("hash-512"))).toBe(0);
    expect((await dexi("reindex", "--force")).out).toMatch(/^reindex: 4 notes embedded/);
  });
});

describe("dexi reindex after a model change", () => {
  it("re-embeds every note with the newly configured provider", async () => {
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        const { input } = JSON.parse(body) as { input: string[] };
        const data = input.map((t, index) => ({ index, embedding: [t.length % 7, 1, 2] }));
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      await dexi("import", join(FIX, "vault"));
      expect(await withStore((s) => s.vectors.models())).toEqual([{ model: "hash-512", count: 4 }]);
      const port = (server.address() as AddressInfo).port;
      process.env["DEXI_EMBEDDINGS"] = "openai";
      process.env["DEXI_EMBEDDINGS_URL"] = `http://127.0.0.1:${port}/v1`;
      process.env["DEXI_EMBEDDINGS_MODEL"] = "tiny";
      const r = await dexi("reindex");
      expect(r.out).toBe("reindex: 4 notes embedded with openai:tiny (replacing 4 from hash-512)\n");
      expect(await withStore((s) => s.vectors.models())).toEqual([{ model: "openai:tiny", count: 4 }]);
      expect((await dexi("reindex")).out).toBe("reindex: 0 notes embedded with openai:tiny\n");
    } finally {
      process.env["DEXI_EMBEDDINGS"] = "hash";
      delete process.env["DEXI_EMBEDDINGS_URL"];
      delete process.env["DEXI_EMBEDDINGS_MODEL"];
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe("dexi feeds", () => {
  let server: Server;
  let url: string;
  let extra = "";
  let endlessSent = 0;
  beforeAll(async () => {
    const { readFileSync } = await import("node:fs");
    const base = readFileSync(join(FIX, "feed.xml"), "utf8");
    server = createServer((req, res) => {
      if (req.url === "/feed.xml") {
        res
          .writeHead(200, { "content-type": "application/rss+xml" })
          .end(base.replace("</channel>", `${extra}</channel>`));
      } else if (req.url === "/endless.xml") {
        // A hostile feed: items as fast as the connection takes them, until it is closed
        res.writeHead(200, { "content-type": "application/rss+xml" });
        res.write("<rss><channel><title>Endless</title>");
        const item = "<item><title>x</title><guid>x</guid></item>".repeat(1000);
        const more = () => {
          while (!res.destroyed && res.write(item)) endlessSent += item.length;
          if (!res.destroyed) res.once("drain", more);
        };
        more();
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.xml`;
  });
  afterAll(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );

  it("subscribes, polls once for new articles, and never duplicates", async () => {
    expect((await dexi("feeds", "add", url)).out).toContain(`subscribed to ${url}`);
    expect((await dexi("feeds", "add", url)).out).toContain("already subscribed");
    expect((await dexi("feeds", "poll")).out).toBe(`${url}: 2 new, 0 updated, 0 already seen\n`);
    expect((await dexi("feeds", "poll")).out).toBe(`${url}: 0 new, 0 updated, 2 already seen\n`);
    extra =
      "<item><title>Third</title><link>https://blog.example.com/3</link><guid>p3</guid><description>new!</description></item>";
    expect((await dexi("feeds", "poll")).out).toBe(`${url}: 1 new, 0 updated, 2 already seen\n`);
    expect((await dexi("feeds", "list")).out).toMatch(new RegExp(`^${url}\\tExample Blog\\tlast polled 20`));
    const arts = await sql<{ guid: string; feed_id: number }>(
      "SELECT guid, feed_id FROM feed_articles ORDER BY guid",
    );
    expect(arts.map((a) => a.guid)).toEqual([
      "https://blog.example.com/?p=1",
      "https://blog.example.com/second",
      "p3",
    ]);
    expect(arts.every((a) => a.feed_id === 1)).toBe(true);
    await dexi("feeds", "add", `${url}-missing`);
    const bad = await dexi("feeds", "poll");
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(`${url}-missing: failed: HTTP 404`);
  });

  it("gives up on a feed past 10 MiB without reading the rest, and polls the others", async () => {
    const endless = url.replace("/feed.xml", "/endless.xml");
    await dexi("feeds", "add", url);
    await dexi("feeds", "add", endless);
    const r = await dexi("feeds", "poll");
    expect(r.code).toBe(1);
    expect(r.out).toContain(`${endless}: failed: the feed is larger than 10485760 bytes\n`);
    expect(r.out).toMatch(new RegExp(`^${url.replaceAll(".", "\\.")}: \\d+ new, `, "m"));
    // (it hung up at the bound: what the sockets held besides, not the 20 s until the timeout)
    expect(endlessSent).toBeLessThan(256 * 1024 * 1024);
  });
});

describe("dexi settings, users, teams, share", () => {
  it("shows and changes settings; validates the time zone and cap; re-syncs the review deck", async () => {
    const shown = await dexi("settings");
    expect(shown.out).toContain(
      `time zone: not set (dexi-mcp uses its --time-zone, else this machine's: ${machineTimeZone()})\nreview deck tags: #review\n`,
    );
    expect(shown.out).toContain("note cap: none (0 notes)");
    expect((await dexi("settings", "--time-zone", "Mars/Olympus")).code).toBe(2);
    expect((await dexi("settings", "--note-cap", "-1")).code).toBe(2);
    await dexi("import", join(FIX, "vault"));
    const r = await dexi("settings", "--time-zone", "Europe/Berlin", "--review-tags", "planning, #ideas");
    expect(r.out).toContain("review deck updated: 2 notes enrolled, 1 dropped");
    expect(r.out).toContain("time zone: Europe/Berlin\nreview deck tags: #planning #ideas\n");
    expect((await dexi("settings", "--time-zone", "asia/tokyo")).out).toContain("time zone: Asia/Tokyo\n");
    expect((await dexi("settings", "--time-zone", "none")).out).toContain("time zone: not set");
    expect(await withStore(async (s) => (await s.accounts.settings(1)).timeZone)).toBeNull();
    // Deck tags are normalised and checked by the tag parser like any tag a person gives.
    const deck = await dexi("settings", "--review-tags", "#Cards, ÉTÉ,#cards");
    expect(deck.out).toContain("review deck tags: #cards #été\n");
    const bad = await dexi("settings", "--review-tags", "#cards,#c++");
    expect([bad.code, bad.err]).toEqual([
      2,
      'dexi: --review-tags: "#c++" is not one tag: Dexi reads it as #c (a hashtag ends at "+")\n',
    ]);
    expect((await dexi("settings")).out).toContain("review deck tags: #cards #été\n");
    expect((await dexi("settings", "--embeddings", "bert")).code).toBe(2);
    expect(
      (
        await dexi(
          "settings",
          "--embeddings",
          "openai",
          "--embeddings-url",
          "http://127.0.0.1:1/v1",
          "--embeddings-model",
          "x",
        )
      ).out,
    ).toContain("embeddings: provider=openai url=http://127.0.0.1:1/v1 model=x");
  });

  it("manages users and teams and shares notes", async () => {
    expect((await dexi("users", "add", "bob", "--team", "crew")).out).toBe("added user bob to team crew\n");
    expect((await dexi("users", "add", "bob")).code).toBe(2);
    expect((await dexi("teams", "join", "crew", "ann")).out).toBe("ann joined crew\n");
    expect((await dexi("teams")).out).toBe("crew\tann, bob\n");
    await dexi("--user", "ann", "import", join(FIX, "vault", "Welcome.md"));
    const id = (await sql<{ uuid: string }>("SELECT uuid FROM notes"))[0]!.uuid;
    expect((await dexi("--user", "bob", "share", id)).out).toBe("");
    expect((await dexi("--user", "ann", "share", id)).out).toBe(`shared "Welcome" (${id})\n`);
    expect(await withStore(async (s) => (await s.notes.byUuid(id))!.shared)).toBe(1);
    expect((await dexi("--user", "ann", "share", id, "--off")).out).toContain("unshared");
    expect((await dexi("users")).out).toMatch(
      /^ann\tteam=crew\tnotes=1\tplan=unlimited\nbob\tteam=crew\tnotes=0/,
    );
    expect((await dexi("teams", "leave", "bob")).out).toBe("bob left their team\n");
    expect((await dexi("bogus")).code).toBe(2);
  });

  it("moves an own note between folders, never someone else's", async () => {
    await dexi("import", join(FIX, "vault"));
    const note = async (title: string) =>
      (
        await sql<{ uuid: string; folder: string | null }>(
          "SELECT n.uuid, f.name AS folder FROM notes n LEFT JOIN folders f ON f.id = n.folder_id WHERE n.title = ?",
          title,
        )
      )[0]!;
    const { uuid } = await note("Welcome");
    expect((await dexi("move", uuid, "--folder", "Archive")).out).toBe(
      `moved "Welcome" (${uuid}) into Archive\n`,
    );
    expect((await note("Welcome")).folder).toBe("Archive");
    // An existing folder is matched case-insensitively, not duplicated.
    expect((await dexi("move", uuid, "--folder", "journal")).out).toContain("into Journal");
    expect(await withStore(async (s) => (await s.accounts.folders(1)).map((f) => f.name))).toEqual([
      "Archive",
      "Journal",
      "Projects/Alpha",
    ]);
    expect((await dexi("move", uuid, "--unfiled")).out).toBe(`moved "Welcome" (${uuid}) out of its folder\n`);
    expect((await note("Welcome")).folder).toBeNull();

    const bad = await dexi("move", uuid, "--folder", "Unfiled");
    expect([bad.code, bad.err]).toEqual([2, 'dexi: "unfiled" is not a folder name; use --unfiled\n']);
    expect((await dexi("move", uuid, "--folder", "X", "--unfiled")).code).toBe(2);
    expect((await dexi("move", uuid)).code).toBe(2);
    const unknown = await dexi("move", "00000000-0000-4000-8000-000000000000", "--unfiled");
    // NOT_FOUND's exit code in the reasons table.
    expect([unknown.code, unknown.err]).toEqual([3, "dexi: Note not found\n"]);
    const other = await dexi("--user", "eve", "move", uuid, "--folder", "Mine");
    expect([other.code, other.err]).toEqual([3, "dexi: Note not found\n"]);
    expect((await note("Welcome")).folder).toBeNull();
  });
});
