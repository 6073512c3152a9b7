// searchCache over rows written straight into the schema: several accounts, Trash, threads, and
// enough rows that every page plan (look-up-and-sort, walk-the-date-index, and counting and paging
// in one statement for a word AND-ed with a filter) is exercised.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CacheDb,
  CursorError,
  compactFts,
  ftsNeedsMerge,
  openCache,
  searchCache,
  textFromSource,
} from "../src/cache/index.js";
import { parseQuery } from "../src/query/index.js";
import { newMessageSlot } from "../src/cache/arrival-id.js";

let db: CacheDb;
const N = 600;

beforeAll(() => {
  db = openCache(":memory:");
  const folder = db.prepare("INSERT INTO folders (account, path, path_norm, role) VALUES (?, ?, ?, ?)");
  folder.run("home", "INBOX", "inbox", "inbox"); // 1
  folder.run("home", "Trash", "trash", "trash"); // 2
  folder.run("work", "INBOX", "inbox", "inbox"); // 3
  const msg = db.prepare(
    "INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date, seen) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const meta = db.prepare("INSERT INTO message_meta (id, message_id, subject) VALUES (?, ?, ?)");
  const fts = db.prepare(
    "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, '', '', '', '', ?)",
  );
  db.transaction(() => {
    for (let i = 1; i <= N; i++) {
      const f = i % 10 === 0 ? 2 : i % 3 === 0 ? 3 : 1;
      const account = f === 3 ? "work" : "home";
      // Dates are not in id order, and some collide, so the id tie-break matters
      const date = 1_700_000_000_000 + ((i * 7919) % N) * 1000 - (i % 4 === 0 ? 1000 : 0);
      // (uid is the row's number; the id follows arrival time: src/cache/arrival-id.ts)
      const id = newMessageSlot(db, date).id;
      msg.run(id, f, account, i, `t${i % 50}`, date, i % 2);
      meta.run(id, `<${i}@x>`, `subject ${i}`);
      fts.run(id, `subject ${i}`, i % 5 === 0 ? "common rare" : "common");
    }
  })();
});
afterAll(() => db.close());

const order = (q: string, o: Parameters<typeof searchCache>[2] = {}) => {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const r = searchCache(db, parseQuery(q), { ...o, limit: 7, cursor });
    out.push(...r.rows.map((x) => x.message_id ?? ""));
    cursor = r.next_cursor;
  } while (cursor);
  return out;
};

/** The expected order computed independently from the rows. */
const expected = (where: string) =>
  (
    db
      .prepare(
        `SELECT x.message_id FROM messages m JOIN message_meta x ON x.id = m.id WHERE ${where} ORDER BY m.internal_date DESC, m.id DESC`,
      )
      .all() as { message_id: string }[]
  ).map((r) => r.message_id);

describe("searchCache", () => {
  it("pages every match once, newest first, with both plans", () => {
    // "common" matches ~all rows and "rare" a fifth (date-index walk), the four subjects a few
    // (look-up and sort); a word with a filter is counted and paged in one statement
    expect(order("common")).toEqual(expected("m.folder_id <> 2"));
    expect(order("rare")).toEqual(expected("m.folder_id <> 2 AND m.uid % 5 = 0"));
    expect(order('{"subject 15" "subject 25" "subject 35" "subject 45"}')).toEqual(
      expected("m.uid IN (15, 25, 35, 45)"),
    );
    expect(order("common is:unread")).toEqual(expected("m.folder_id <> 2 AND m.seen = 0"));
    expect(order("rare is:read")).toEqual(expected("m.folder_id <> 2 AND m.uid % 5 = 0 AND m.seen = 1"));
  });

  it("counts per account and filters by accounts", () => {
    const all = searchCache(db, parseQuery("common"));
    expect(all.account_counts).toEqual({
      home: expected("m.folder_id = 1").length,
      work: expected("m.folder_id = 3").length,
    });
    expect(all.count).toBe(expected("m.folder_id <> 2").length);
    const work = searchCache(db, parseQuery("common"), { accounts: ["work"] });
    expect(work.account_counts).toEqual({ work: expected("m.folder_id = 3").length });
    expect(work.rows.every((r) => r.account === "work")).toBe(true);
    expect(searchCache(db, parseQuery("common account:work")).count).toBe(work.count);
    const unread = searchCache(db, parseQuery("common is:unread"));
    expect(unread.account_counts).toEqual({
      home: expected("m.folder_id = 1 AND m.seen = 0").length,
      work: expected("m.folder_id = 3 AND m.seen = 0").length,
    });
    expect(searchCache(db, parseQuery("common is:unread"), { countOnly: true }).count).toBe(unread.count);
  });

  it("leaves Trash out unless in: names it", () => {
    expect(searchCache(db, parseQuery("in:trash")).count).toBe(N / 10);
    expect(searchCache(db, parseQuery("in:anywhere")).count).toBe(N);
    expect(searchCache(db, parseQuery("")).count).toBe(N - N / 10);
  });

  it("collapses threads to their newest match and pages them", () => {
    const r = searchCache(db, parseQuery("rare"), { threads: true, limit: 200 });
    const threads = db
      .prepare(
        "SELECT count(DISTINCT account || thread_key) AS n FROM messages WHERE folder_id <> 2 AND uid % 5 = 0",
      )
      .get() as { n: number };
    expect(r.count).toBe(threads.n);
    expect(r.rows.length).toBe(threads.n);
    expect(new Set(r.rows.map((x) => `${x.account}/${x.thread_key}`)).size).toBe(r.rows.length);
    expect(r.rows.reduce((s, x) => s + (x.thread_count ?? 0), 0)).toBe(
      searchCache(db, parseQuery("rare")).count,
    );
    expect(order("rare", { threads: true })).toEqual(r.rows.map((x) => x.message_id));
  });

  it("refuses cursors of other searches and bounds limit", () => {
    const r = searchCache(db, parseQuery("common"), { limit: 2 });
    expect(() =>
      searchCache(db, parseQuery("common"), { cursor: r.next_cursor, accounts: ["work"] }),
    ).toThrow(CursorError);
    expect(() =>
      searchCache(db, parseQuery("common"), {
        cursor: Buffer.from('{"v":2,"h":"x","d":1,"i":1}').toString("base64url"),
      }),
    ).toThrow(/different search/);
    // A cursor from before ids followed arrival time names rows by their old ids
    const old = JSON.parse(Buffer.from(r.next_cursor as string, "base64url").toString("utf8"));
    expect(old.v).toBe(2);
    expect(() =>
      searchCache(db, parseQuery("common"), {
        cursor: Buffer.from(JSON.stringify({ ...old, v: 1 })).toString("base64url"),
      }),
    ).toThrow(/before the cache was upgraded/);
    expect(searchCache(db, parseQuery("common"), { limit: 1000 }).rows.length).toBe(200);
    expect(searchCache(db, parseQuery("common"), { limit: 0 }).rows.length).toBe(1);
  });
});

describe("body text", () => {
  const msg = (headers: string, body: string) =>
    Buffer.from(`From: a@b.c\r\nSubject: s${headers ? `\r\n${headers}` : ""}\r\n\r\n${body}`, "utf8");

  it("reads plain 7bit/8bit UTF-8 bodies directly and everything else through mailparser", async () => {
    expect(await textFromSource(msg("Content-Type: text/plain; charset=utf-8", "Grüße aus Köln\r\n"))).toBe(
      "Grüße aus Köln\r\n",
    );
    expect(await textFromSource(msg("", "no content type at all\r\n"))).toBe("no content type at all\r\n");
    const b64 = Buffer.from("decoded from base64").toString("base64");
    expect(
      (
        await textFromSource(msg("Content-Type: text/plain\r\nContent-Transfer-Encoding: base64", b64))
      ).trim(),
    ).toBe("decoded from base64");
    const latin1 = Buffer.concat([
      Buffer.from("From: a@b.c\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\n"),
      Buffer.from([0x47, 0x72, 0xfc, 0xdf, 0x65]),
    ]);
    expect((await textFromSource(latin1)).trim()).toBe("Grüße");
  });

  it("turns HTML-only mail with an attachment into text", async () => {
    const raw = msg(
      'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"',
      '--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>The <b>quarterly</b> report</p>\r\n--b\r\nContent-Type: text/csv; name="r.csv"\r\nContent-Disposition: attachment; filename="r.csv"\r\n\r\na,b\r\n--b--\r\n',
    );
    expect(await textFromSource(raw)).toMatch(/The quarterly report/);
  });
});

describe("compactFts", () => {
  it("merges a fragmented FTS index into one segment and keeps every row findable", async () => {
    const fdb = openCache(":memory:");
    const fts = fdb.prepare(
      "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, '', '', '', '', '')",
    );
    const segments = () =>
      (fdb.prepare("SELECT count(DISTINCT segid) AS n FROM messages_fts_idx").get() as { n: number }).n;
    const found = () =>
      (
        fdb.prepare("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'word'").get() as {
          n: number;
        }
      ).n;
    // Each transaction adds a segment; a deleted row leaves a tombstone
    for (let i = 1; i <= 12; i++) fdb.transaction(() => fts.run(i, `word ${i}`))();
    fdb.prepare("DELETE FROM messages_fts WHERE rowid = 12").run();
    expect(ftsNeedsMerge(fdb)).toBe(true);
    expect(await compactFts(fdb)).toBe(true);
    expect(segments()).toBe(1);
    expect(found()).toBe(11);
    expect(await compactFts(fdb)).toBe(false);
    fdb.close();
  });
});
