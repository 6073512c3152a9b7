import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache } from "../src/cache/index.js";
import { newMessageSlot } from "../src/cache/arrival-id.js";
import {
  bindQuery,
  cacheCanAnswer,
  compileToGmailRaw,
  compileToImap,
  compileToSql,
  listColumn,
  parseQuery,
  queryNeeds,
  splitAccounts,
} from "../src/query/index.js";

const NOW = new Date("2024-06-15T12:00:00Z");
let db: CacheDb;

/** A handful of rows written straight into the schema, so the SQL runs against the real tables. */
beforeAll(() => {
  db = openCache(":memory:");
  const folder = db.prepare("INSERT INTO folders (account, path, path_norm, role) VALUES (?, ?, ?, ?)");
  folder.run("home", "INBOX", "inbox", "inbox");
  folder.run("home", "Trash", "trash", "trash");
  folder.run("work", "[Gmail]/All Mail", "[gmail]/all mail", "all");
  const msg =
    db.prepare(`INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date, seen, flagged, size,
    has_attachment, filenames_norm, labels_norm, keywords_norm) VALUES (@id, @f, @a, @uid, @mid, @d, @seen, @fl, @size, @att, @fn, @lab, @kw)`);
  const meta = db.prepare(
    "INSERT INTO message_meta (id, message_id, from_json, subject) VALUES (@id, @mid, @from, @s)",
  );
  const fts = db.prepare(
    "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, ?, '', '', '', ?)",
  );
  // (the subjects alone, for queries of subject: terms only: src/cache/storage-migration.ts)
  const subjects = db.prepare("INSERT INTO subjects_fts (rowid, subject) VALUES (?, ?)");
  const rows = [
    {
      id: 1,
      f: 1,
      a: "home",
      mid: "<1@x>",
      d: Date.UTC(2024, 5, 14),
      from: "Ann ann@acme.com",
      s: "Invoice March",
      seen: 0,
      fl: 1,
      size: 20000,
      att: 1,
      fn: ["march.pdf"],
      lab: [],
      kw: ["$Work"],
      body: "please pay the invoice",
    },
    {
      id: 2,
      f: 1,
      a: "home",
      mid: "<2@x>",
      d: Date.UTC(2024, 0, 10),
      from: "Bob bob@corp.org",
      s: "Lunch?",
      seen: 1,
      fl: 0,
      size: 900,
      att: 0,
      fn: [],
      lab: [],
      kw: [],
      body: "running late, C++ & more",
    },
    {
      id: 3,
      f: 2,
      a: "home",
      mid: "<3@x>",
      d: Date.UTC(2024, 5, 1),
      from: "Ann ann@acme.com",
      s: "Old invoice",
      seen: 1,
      fl: 0,
      size: 500,
      att: 0,
      fn: [],
      lab: [],
      kw: [],
      body: "trash me",
    },
    {
      id: 4,
      f: 3,
      a: "work",
      mid: "<4@x>",
      d: Date.UTC(2023, 11, 31),
      from: "Cy cy@acme.com",
      s: "Quarterly report",
      seen: 0,
      fl: 0,
      size: 3_000_000,
      att: 1,
      fn: ["q4.xlsx"],
      lab: ["\\Inbox", "Finance"],
      kw: [],
      body: "numbers inside",
    },
  ];
  // uid is the row's number below; the id follows arrival time (src/cache/arrival-id.ts)
  for (const r of rows) {
    const id = newMessageSlot(db, r.d).id;
    msg.run({
      id,
      uid: r.id,
      f: r.f,
      a: r.a,
      mid: r.mid,
      d: r.d,
      seen: r.seen,
      fl: r.fl,
      size: r.size,
      att: r.att,
      fn: listColumn(r.fn),
      lab: listColumn(r.lab),
      kw: listColumn(r.kw),
    });
    meta.run({
      id,
      mid: r.mid,
      from: JSON.stringify([{ name: r.from.split(" ")[0], address: r.from.split(" ")[1] }]),
      s: r.s,
    });
    fts.run(id, r.s, r.from, r.body);
    subjects.run(id, r.s);
  }
});
afterAll(() => db.close());

const sqlIds = (q: string) => {
  const { where, params } = compileToSql(parseQuery(q), NOW);
  return (
    db.prepare(`SELECT m.uid FROM messages m WHERE ${where} ORDER BY m.uid`).all(...params) as {
      uid: number;
    }[]
  ).map((r) => r.uid);
};

describe("compileToSql", () => {
  it.each([
    ["", [1, 2, 4]],
    ["invoice", [1]],
    ["invoices", [1]], // porter stemming
    ["in:trash invoice", [3]],
    ["in:anywhere invoice", [1, 3]],
    ["from:ann", [1]],
    ["from:acme.com", [1, 4]],
    ['subject:"invoice march"', [1]],
    ['"pay the invoice"', [1]],
    ["is:unread", [1, 4]],
    ["is:starred", [1]],
    ["-is:read -from:cy", [1]],
    ["has:attachment", [1, 4]],
    ["filename:pdf", [1]],
    ["larger:1M", [4]],
    ["smaller:1K", [2]],
    ["after:2024/06/01", [1]],
    ["before:2024-01-01", [4]],
    ["newer_than:7d", [1]],
    ["older_than:1y", []],
    ["older_than:5m", [2, 4]],
    ["label:finance", [4]],
    ["label:$work", [1]],
    ["in:inbox", [1, 2, 4]],
    ["in:INBOX -label:finance", [1, 2]],
    ["account:work", [4]],
    ["{lunch quarterly} OR invoice", [1, 2, 4]],
    ["lunch OR (invoice is:read)", [2]],
    ["invoice OR is:read", [1, 2]],
    ["-(invoice OR lunch)", [4]],
    ["invoice -march", []],
    ["late -numbers", [2]],
  ])("%s", (q, expected) => {
    expect(sqlIds(q)).toEqual(expected);
  });

  it("gives an FTS bound only when the text terms are AND-ed with the rest", () => {
    const bound = (q: string) => compileToSql(parseQuery(q), NOW).ftsBound;
    const ftsIds = (expr: string) =>
      (
        db
          .prepare(
            "SELECT m.uid AS id FROM messages_fts f JOIN messages m ON m.id = f.rowid WHERE f.messages_fts MATCH ? ORDER BY m.uid",
          )
          .all(expr) as {
          id: number;
        }[]
      ).map((r) => r.id);
    for (const q of [
      "invoice is:unread",
      "from:acme.com -is:read",
      "{lunch quarterly} larger:1K",
      "in:anywhere invoice",
    ]) {
      const b = bound(q);
      expect(b).not.toBeNull();
      const within = new Set(ftsIds(b as string));
      expect(sqlIds(q).every((id) => within.has(id))).toBe(true);
    }
    expect(bound("invoice -march")).toBe('("invoice" NOT "march")');
    for (const q of ["is:unread", "lunch OR (invoice is:read)", "-invoice", "invoice OR is:read"])
      expect(bound(q)).toBeNull();
  });

  it("never puts user text into the SQL string", () => {
    const nasty = [
      `"'; DROP TABLE messages; --"`,
      "from:x'or'1'='1",
      'subject:"NEAR(a"',
      "a* OR b",
      "label:\\Inbox",
      "filename:%",
      "C++",
      "&",
      "body:x",
    ];
    for (const q of nasty.filter((n) => !n.startsWith("body:"))) {
      const { where, params } = compileToSql(parseQuery(q), NOW);
      expect(where).not.toMatch(/DROP|'or'|NEAR|%/);
      expect(() => db.prepare(`SELECT count(*) FROM messages m WHERE ${where}`).get(...params)).not.toThrow();
    }
    expect((db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n).toBe(4);
  });

  it("treats FTS operators in user words as plain words", () => {
    expect(sqlIds("NEAR")).toEqual([]);
    expect(sqlIds('"AND" OR "NOT"')).toEqual([]);
    expect(sqlIds("OR*")).toEqual([]);
    expect(sqlIds('"C++"')).toEqual([2]);
    expect(sqlIds("&")).toEqual([1, 2, 4]); // nothing to index: ignored
  });
});

describe("compileToImap", () => {
  const inbox = { path: "INBOX", role: "inbox" as const };
  const imap = (q: string, folder = inbox) => compileToImap(parseQuery(q), NOW, { folder, account: "home" });

  it("builds imapflow search objects", () => {
    expect(imap("from:ann is:unread larger:10K")?.search).toEqual({
      from: "ann",
      seen: false,
      larger: 10240,
    });
    expect(imap("is:starred OR is:answered")?.search).toEqual({
      or: [{ flagged: true }, { answered: true }],
    });
    expect(imap("-to:bob")?.search).toEqual({ not: { to: "bob" } });
    expect(imap("after:2024/01/02 before:2024-02-01")?.search).toEqual({
      since: new Date("2024-01-02T00:00:00Z"),
      before: new Date("2024-02-01T00:00:00Z"),
    });
    expect(imap("newer_than:2d")?.search).toEqual({ since: new Date("2024-06-13T12:00:00Z") });
    expect(imap("older_than:1m")?.search).toEqual({ before: new Date("2024-05-15T12:00:00Z") });
    expect(imap("label:$Work")?.search).toEqual({ keyword: "$Work" });
    expect(imap("hello")?.search).toEqual({
      or: [
        { subject: "hello" },
        { from: "hello" },
        { to: "hello" },
        { cc: "hello" },
        { bcc: "hello" },
        { body: "hello" },
      ],
    });
    expect(imap("")?.search).toEqual({ all: true });
  });

  it("keeps clashing keys apart so AND stays AND", () => {
    expect(imap("from:a from:b from:c")?.search).toEqual({
      or: [{ from: "a" }],
      not: { not: { or: [{ from: "b" }], not: { not: { from: "c" } } } },
    });
  });

  it("decides in:/account: per folder and skips Trash/Junk unless named", () => {
    expect(imap("in:archive")).toBeNull();
    expect(imap("account:work")).toBeNull();
    expect(imap("in:inbox is:read")?.search).toEqual({ seen: true });
    expect(imap("x", { path: "Trash", role: "trash" as never })).toBeNull();
    expect(imap("in:trash x", { path: "Trash", role: "trash" as never })?.exact).toBe(true);
  });

  it("widens terms IMAP cannot express and says so", () => {
    const p = imap("has:attachment from:ann");
    expect(p).toMatchObject({ exact: false, search: { from: "ann" } });
    expect(imap("-filename:pdf")).toMatchObject({ exact: false, search: { all: true } });
    expect(imap("from:ann")?.exact).toBe(true);
  });
});

describe("compileToGmailRaw", () => {
  it.each([
    ["from:ann is:starred", "from:ann is:starred"],
    ["a b OR c", "a {b c}"],
    ["{a b} -c", "{a b} -c"],
    ['subject:"big news" has:attachment filename:pdf', 'subject:"big news" has:attachment filename:pdf'],
    ["after:2024-01-02 larger:10K newer_than:3d", "after:2024/01/02 larger:10240 newer_than:3d"],
    ["in:inbox label:Finance -(is:read is:draft)", "in:inbox label:Finance -(is:read is:draft)"],
  ])("%s -> %s", (q, raw) => {
    expect(compileToGmailRaw(parseQuery(q))).toBe(raw);
  });

  it("needs account: bound first", () => {
    expect(() => compileToGmailRaw(parseQuery("account:x a"))).toThrow(/bind account/);
    expect(compileToGmailRaw(bindQuery(parseQuery("account:x a"), { account: "x" }))).toBe("a");
    expect(compileToGmailRaw(bindQuery(parseQuery("account:x a"), { account: "y" }))).toBeNull();
  });
});

describe("accounts and coverage", () => {
  it("splits account: terms per account", () => {
    const { perAccount, named } = splitAccounts(parseQuery("invoice account:Home"), ["home", "work"]);
    expect(named).toEqual(["Home"]);
    expect([...perAccount.keys()]).toEqual(["home"]);
    expect(perAccount.get("home")).toMatchObject({ kind: "text", value: "invoice" });
    const mixed = splitAccounts(parseQuery("account:home OR from:x"), ["home", "work"]);
    expect(mixed.perAccount.get("home")).toEqual({ kind: "all" });
    expect(mixed.perAccount.get("work")).toMatchObject({ kind: "address", value: "x" });
    expect([...splitAccounts(parseQuery("-account:home"), ["home", "work"]).perAccount.keys()]).toEqual([
      "work",
    ]);
    expect([...splitAccounts(parseQuery("x"), ["home", "work"], ["work"]).perAccount.keys()]).toEqual([
      "work",
    ]);
  });

  it("knows which queries need bodies", () => {
    expect(queryNeeds(parseQuery("from:a is:unread filename:x"))).toEqual({
      bodies: false,
      structure: true,
      labels: false,
    });
    expect(queryNeeds(parseQuery("-hello"))).toMatchObject({ bodies: true });
    expect(cacheCanAnswer(parseQuery("hello"), { headersComplete: true, bodiesComplete: false })).toBe(false);
    expect(
      cacheCanAnswer(parseQuery("subject:hello"), { headersComplete: true, bodiesComplete: false }),
    ).toBe(true);
    expect(cacheCanAnswer(parseQuery(""), { headersComplete: false, bodiesComplete: true })).toBe(false);
  });
});

describe("compiler fuzz", () => {
  const rng = (seed: number) => () => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const parts = [
    "(",
    ")",
    "{",
    "}",
    '"',
    "-",
    " ",
    " OR ",
    "from:",
    "subject:",
    "in:",
    "label:",
    "is:read",
    "has:attachment",
    "filename:",
    "larger:1K",
    "after:2024/01/01",
    "newer_than:3d",
    "account:home",
    "a",
    "ü",
    "*",
    "NEAR",
    "'",
    "%",
    "x",
  ];
  it("every query that parses compiles to SQL that runs, to IMAP and to X-GM-RAW", () => {
    let parsed = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const r = rng(seed);
      let q = "";
      for (let i = 0, n = Math.floor(r() * 12); i < n; i++) q += parts[Math.floor(r() * parts.length)];
      let ast: ReturnType<typeof parseQuery>;
      try {
        ast = parseQuery(q);
      } catch {
        continue;
      }
      parsed++;
      const { where, params } = compileToSql(ast, NOW);
      expect(
        () => db.prepare(`SELECT count(*) FROM messages m WHERE ${where}`).get(...params),
        q,
      ).not.toThrow();
      expect(
        () => compileToImap(ast, NOW, { folder: { path: "INBOX", role: "inbox" }, account: "home" }),
        q,
      ).not.toThrow();
      expect(() => compileToGmailRaw(bindQuery(ast, { account: "home" })), q).not.toThrow();
    }
    expect(parsed).toBeGreaterThan(300);
  });
});
