import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TestApp as App } from "./helpers.js";
import { type ManualClock, manualClock } from "@mcpforge/toolkit/testing";
import { connect, items, type Session, testApp, userId } from "./helpers.js";

let app: App;
let s: Session;
let t: ManualClock;

beforeEach(async () => {
  t = manualClock();
  app = await testApp({ now: t.now });
  s = await connect(app, "ann");
});
afterEach(async () => {
  await s.close();
  await app.close();
});

const ITEM_KEYS = ["created", "id", "snippet", "source", "source_url", "tags", "title", "updated"];
const FULL_KEYS = ["created", "id", "source", "source_url", "tags", "text", "title", "updated"];

describe("create_note", () => {
  it("returns the full shape with text, tags parsed from the text, and no conditional keys", async () => {
    const n = await s.ok("create_note", {
      title: "Transformers",
      text: "Self-attention #ML with @Vaswani and #papers",
    });
    expect(Object.keys(n).sort()).toEqual(FULL_KEYS);
    expect(n).toMatchObject({
      title: "Transformers",
      text: "Self-attention #ML with @Vaswani and #papers",
      tags: ["#ml", "@vaswani", "#papers"],
      source: "note",
      source_url: null,
      created: "2026-03-10T12:00:00+00:00",
      updated: "2026-03-10T12:00:00+00:00",
    });
    expect(n["id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("defaults title and text to empty strings", async () => {
    const n = await s.ok("create_note", {});
    expect(n).toMatchObject({ title: "", text: "", tags: [] });
  });

  it("rejects a title over 500 characters and creates nothing", async () => {
    const e = await s.fails("create_note", { title: "x".repeat(501) });
    expect(e.reason).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain('"title" must be at most 500 characters');
    expect((await s.ok("list_notes", {}))["total"]).toBe(0);
  });

  it("refuses U+0000 in a title or text (create and update) and keeps nothing of it", async () => {
    for (const [field, args] of [
      ["title", { title: "a\u0000b" }],
      ["text", { text: "x #t\u0000" }],
    ] as const) {
      expect(await s.fails("create_note", args)).toMatchObject({
        reason: "INVALID_ARGUMENT",
        message: `The ${field} holds the character U+0000 (NUL), which a note cannot keep`,
      });
    }
    expect((await s.ok("list_notes", {}))["total"]).toBe(0);
    const n = await s.ok("create_note", { title: "kept", text: "as is" });
    expect((await s.fails("update_note", { note_id: n["id"], text: "\u0000", mode: "append" })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    expect(await s.ok("get_note", { note_id: n["id"] })).toMatchObject({ title: "kept", text: "as is" });
    // A filter holding it matches nothing, as any unknown tag or folder.
    expect(await s.ok("list_notes", { tag: "#t\u0000" })).toEqual({ items: [], total: 0, page: 1 });
    expect((await s.fails("list_notes", { folder: "W\u0000" })).reason).toBe("NOT_FOUND");
  });

  it("at the plan's cap gives the limit message and creates nothing", async () => {
    await app.store.accounts.updateSettings(await userId(app, "ann"), { plan: "free", noteCap: 2 });
    await s.ok("create_note", { text: "one" });
    await s.ok("create_note", { text: "two" });
    const e = await s.fails("create_note", { text: "three" });
    expect(e.reason).toBe("LIMIT_REACHED");
    expect(e.message).toBe(
      "Note limit reached: the free plan allows 2 notes. Delete notes or upgrade the plan to create more.",
    );
    expect((await s.ok("list_notes", {}))["total"]).toBe(2);
    expect((await s.ok("search_notes", { query: "three" }))["total"]).toBe(0);
  });

  it("a cap set without a plan, or of one note, reads as English", async () => {
    const ann = await userId(app, "ann");
    await app.store.accounts.updateSettings(ann, { noteCap: 1 });
    await s.ok("create_note", { text: "one" });
    expect((await s.fails("create_note", { text: "two" })).message).toBe(
      "Note limit reached: this account allows 1 note. Delete notes or upgrade the plan to create more.",
    );
    await app.store.accounts.updateSettings(ann, { plan: "free" });
    expect((await s.fails("create_note", { text: "two" })).message).toBe(
      "Note limit reached: the free plan allows 1 note. Delete notes or upgrade the plan to create more.",
    );
  });

  it("at the cap, a restricted connection is told neither the plan nor the cap", async () => {
    // The cap counts the whole account, which such a connection does not see (restriction-leaks).
    await app.store.accounts.updateSettings(await userId(app, "ann"), { plan: "free", noteCap: 2 });
    await s.ok("create_note", { text: "one" });
    const work = await connect(app, "ann", { restriction: { folder: "Work" } });
    try {
      await work.ok("create_note", { text: "two" });
      expect(await work.fails("create_note", { text: "three" })).toMatchObject({
        reason: "LIMIT_REACHED",
        message:
          "Note limit reached: this account holds as many notes as its plan allows. Delete notes or upgrade the plan to create more.",
      });
      expect((await s.ok("list_notes", {}))["total"]).toBe(2);
    } finally {
      await work.close();
    }
  });
});

describe("get_note", () => {
  it("errors with Note not found for an unknown id, and INVALID_ARGUMENT for a non-UUID", async () => {
    expect(await s.fails("get_note", { note_id: randomUUID() })).toMatchObject({
      reason: "NOT_FOUND",
      message: "Note not found",
    });
    expect((await s.fails("get_note", { note_id: "nope" })).reason).toBe("INVALID_ARGUMENT");
  });

  it("returns the whole body, however long", async () => {
    const text = "word ".repeat(5000);
    const n = await s.ok("create_note", { title: "long", text });
    expect((await s.ok("get_note", { note_id: n["id"] }))["text"]).toBe(text);
  });
});

describe("update_note", () => {
  it("replaces, appends, keeps what is omitted, and re-parses tags", async () => {
    const n = await s.ok("create_note", { title: "T", text: "first #a" });
    t.advance(60_000);
    const r = await s.ok("update_note", { note_id: n["id"], text: "second #b" });
    expect(r).toMatchObject({
      title: "T",
      text: "second #b",
      tags: ["#b"],
      updated: "2026-03-10T12:01:00+00:00",
    });
    expect(r["created"]).toBe("2026-03-10T12:00:00+00:00");
    const a = await s.ok("update_note", { note_id: n["id"], text: "more @bob", mode: "append" });
    expect(a).toMatchObject({ text: "second #b\n\nmore @bob", tags: ["#b", "@bob"] });
    const ti = await s.ok("update_note", { note_id: n["id"], title: "New title" });
    expect(ti).toMatchObject({ title: "New title", text: "second #b\n\nmore @bob" });
    expect((await s.ok("search_notes", { query: "first" }))["total"]).toBe(0);
    expect((await s.ok("search_notes", { query: "second" }))["total"]).toBe(1);
  });

  it("says Nothing to update when neither title nor text is given", async () => {
    const n = await s.ok("create_note", { text: "x" });
    expect(await s.fails("update_note", { note_id: n["id"] })).toMatchObject({
      reason: "NOTHING_TO_UPDATE",
      message: "Nothing to update",
    });
    expect((await s.fails("update_note", { note_id: n["id"], mode: "append" })).message).toBe(
      "Nothing to update",
    );
  });

  it("gives Note not found for an unknown id (before checking the arguments' content)", async () => {
    expect((await s.fails("update_note", { note_id: randomUUID(), text: "x" })).message).toBe(
      "Note not found",
    );
    expect((await s.fails("update_note", { note_id: randomUUID(), mode: "sideways" })).reason).toBe(
      "INVALID_ARGUMENT",
    );
  });
});

describe("delete_note", () => {
  it("deletes, returns {deleted, id, title}, and removes the bookmark record", async () => {
    const n = await s.ok("create_note", { title: "Gone", text: "bye" });
    const row = (await app.store.notes.byUuid(n["id"] as string))!;
    await app.store.records.addBookmark(row.id, "https://example.org", null);
    expect((await app.store.records.countFor(row.id)).bookmarks).toBe(1);
    expect(await s.ok("delete_note", { note_id: n["id"] })).toEqual({
      deleted: true,
      id: n["id"],
      title: "Gone",
    });
    expect(await app.store.records.countFor(row.id)).toEqual({ bookmarks: 0, emails: 0, feed_articles: 0 });
    expect((await s.fails("get_note", { note_id: n["id"] })).message).toBe("Note not found");
    expect((await s.fails("delete_note", { note_id: n["id"] })).message).toBe("Note not found");
  });
});

describe("search_notes", () => {
  it("ranks title matches above body matches and pages with total", async () => {
    await s.ok("create_note", { title: "Groceries", text: "buy pasta and garlic" });
    await s.ok("create_note", { title: "Pasta", text: "a recipe" });
    for (let i = 0; i < 12; i++) await s.ok("create_note", { title: `n${i}`, text: `filler pasta ${i}` });
    const r = await s.ok("search_notes", { query: "pasta", size: 5 });
    expect(r["total"]).toBe(14);
    expect(r["page"]).toBe(1);
    expect(items(r)[0]!.title).toBe("Pasta");
    expect(items(r)).toHaveLength(5);
    const p3 = await s.ok("search_notes", { query: "pasta", size: 5, page: 3 });
    expect(items(p3)).toHaveLength(4);
    // A page past the last hit is empty and still carries the total (PostgreSQL answers both at once).
    const past = await s.ok("search_notes", { query: "pasta", page: 99 });
    expect([items(past), past["total"]]).toEqual([[], 14]);
  });

  it("folds diacritics both ways and drops no stop word", async () => {
    const cafe = await s.ok("create_note", { title: "Café notes", text: "the best of the town" });
    await s.ok("create_note", { title: "Cafe list", text: "naïve résumé" });
    expect(items(await s.ok("search_notes", { query: "café" })).map((i) => i.title)).toEqual([
      "Cafe list",
      "Café notes",
    ]);
    expect((await s.ok("search_notes", { query: "CAFE" }))["total"]).toBe(2);
    expect((await s.ok("search_notes", { query: "naive resume" }))["total"]).toBe(1);
    expect(items(await s.ok("search_notes", { query: "the of" })).map((i) => i.id)).toEqual([cafe["id"]]);
  });

  it("stems, needs every word, and treats any text as a query, never a syntax error", async () => {
    await s.ok("create_note", { title: "Running log", text: "ran 10 km in the rain" });
    expect((await s.ok("search_notes", { query: "runs" }))["total"]).toBe(1);
    expect((await s.ok("search_notes", { query: "running snow" }))["total"]).toBe(0);
    for (const q of [
      "-",
      '"',
      "NEAR(a b)",
      "rain*",
      "rain OR",
      "AND",
      "(",
      "title:rain",
      "💥",
      "^rain",
      "rain -km",
    ]) {
      const r = await s.outcome("search_notes", { query: q });
      expect(r.isError, q).toBe(false);
    }
    expect((await s.ok("search_notes", { query: "rain -km" }))["total"]).toBe(1);
    expect((await s.ok("search_notes", { query: "title:rain" }))["total"]).toBe(0);
  });

  it("ranks the same whether the reader is the database's only user (fast path) or not", async () => {
    for (let i = 0; i < 15; i++)
      await s.ok("create_note", {
        title: i % 4 === 0 ? "pasta" : `n${i}`,
        text: `pasta ${"x ".repeat(i)}`,
      });
    const alone = await s.ok("search_notes", { query: "pasta", size: 50 });
    const semAlone = await s.ok("semantic_search", { query: "pasta", size: 50 });
    await userId(app, "zed");
    expect(await s.ok("search_notes", { query: "pasta", size: 50 })).toEqual(alone);
    expect(await s.ok("semantic_search", { query: "pasta", size: 50 })).toEqual(semAlone);
    expect(await s.ok("search_notes", { query: "pasta", size: 4, page: 2 })).toEqual({
      items: items(alone).slice(4, 8),
      total: 15,
      page: 2,
    });
  });

  it("enforces the tools' bounds (lengths, sizes, grades)", async () => {
    expect((await s.fails("search_notes", { query: "" })).reason).toBe("INVALID_ARGUMENT");
    expect((await s.fails("search_notes", { query: "x".repeat(201) })).reason).toBe("INVALID_ARGUMENT");
    expect((await s.fails("search_notes", { query: "x", size: 51 })).reason).toBe("INVALID_ARGUMENT");
    expect((await s.fails("search_notes", { query: "x", page: 0 })).reason).toBe("INVALID_ARGUMENT");
    expect((await s.outcome("search_notes", { query: "x".repeat(200), size: 50 })).isError).toBe(false);
  });
});

describe("the note item", () => {
  it("cuts the snippet at 300 characters with … and leaves a 300-character body whole", async () => {
    const exact = "é".repeat(300);
    await s.ok("create_note", { title: "exact", text: exact });
    await s.ok("create_note", { title: "long", text: `${"a".repeat(300)}b` });
    const r = items(await s.ok("list_notes", {}));
    expect(r.find((i) => i.title === "exact")!.snippet).toBe(exact);
    expect(r.find((i) => i.title === "long")!.snippet).toBe(`${"a".repeat(300)}…`);
    for (const i of r) expect(Object.keys(i).sort()).toEqual(ITEM_KEYS);
  });

  it("carries folder only on filed notes", async () => {
    const n = await s.ok("create_note", { title: "filed" });
    await app.notes.file({ userId: await userId(app, "ann"), scopes: [] }, n["id"] as string, "Work");
    const r = items(await s.ok("list_notes", {}));
    expect(r[0]).toMatchObject({ title: "filed", folder: "Work" });
  });
});

describe("semantic_search and find_similar", () => {
  it("return similarity in 0..1, best first, and find_similar never returns the note itself", async () => {
    const a = await s.ok("create_note", { title: "garlic pasta", text: "pasta garlic olive oil" });
    await s.ok("create_note", { title: "pasta bake", text: "pasta cheese oven" });
    await s.ok("create_note", { title: "tax return", text: "forms and receipts" });
    const r = items(await s.ok("semantic_search", { query: "garlic pasta", size: 3 }));
    expect(r).toHaveLength(3);
    expect(r[0]!.title).toBe("garlic pasta");
    for (const i of r) {
      expect(i.similarity).toBeGreaterThanOrEqual(0);
      expect(i.similarity).toBeLessThanOrEqual(1);
    }
    expect(r.map((i) => i.similarity)).toEqual([...r.map((i) => i.similarity)].sort((x, y) => y! - x!));
    const sim = items(await s.ok("find_similar", { note_id: a["id"], size: 50 }));
    expect(sim.map((i) => i.id)).not.toContain(a["id"]);
    expect(sim).toHaveLength(2);
    expect(sim[0]!.title).toBe("pasta bake");
    expect((await s.fails("find_similar", { note_id: randomUUID() })).message).toBe("Note not found");
    expect((await s.fails("semantic_search", { query: "x".repeat(501) })).reason).toBe("INVALID_ARGUMENT");
  });

  it("finds a note by meaning as soon as create_note and update_note return", async () => {
    const n = await s.ok("create_note", { title: "zebra", text: "striped" });
    expect(items(await s.ok("semantic_search", { query: "zebra", size: 1 }))[0]!.id).toBe(n["id"]);
    await s.ok("update_note", { note_id: n["id"], title: "okapi", text: "forest giraffe" });
    await s.ok("create_note", { title: "zebra crossing", text: "road" });
    const r = items(await s.ok("semantic_search", { query: "okapi forest giraffe", size: 1 }));
    expect(r[0]!.id).toBe(n["id"]);
  });
});

describe("list_notes", () => {
  it("sorts newest first by created or updated and filters by source", async () => {
    const first = await s.ok("create_note", { title: "first" });
    t.advance(1000);
    await s.ok("create_note", { title: "second" });
    t.advance(1000);
    await s.ok("update_note", { note_id: first["id"], text: "touched" });
    expect(items(await s.ok("list_notes", {})).map((i) => i.title)).toEqual(["second", "first"]);
    expect(items(await s.ok("list_notes", { sort: "updated" })).map((i) => i.title)).toEqual([
      "first",
      "second",
    ]);
    expect((await s.ok("list_notes", { source: "bookmark" }))["total"]).toBe(0);
    expect((await s.ok("list_notes", { source: "note" }))["total"]).toBe(2);
    expect((await s.fails("list_notes", { source: "tweet" })).reason).toBe("INVALID_ARGUMENT");
  });

  it("filters by #hashtag, @mention or a bare word matching either, case-insensitively", async () => {
    await s.ok("create_note", { title: "h", text: "#Rust" });
    await s.ok("create_note", { title: "m", text: "@rust" });
    await s.ok("create_note", { title: "none", text: "rust" });
    const titles = async (tag: string) =>
      items(await s.ok("list_notes", { tag }))
        .map((i) => i.title)
        .sort();
    expect(await titles("#rust")).toEqual(["h"]);
    expect(await titles("@RUST")).toEqual(["m"]);
    expect(await titles("Rust")).toEqual(["h", "m"]);
    expect(await titles("#go")).toEqual([]);
  });

  it("takes folder names case-insensitively, 'unfiled', and errors on unknown folders", async () => {
    const v = { userId: await userId(app, "ann"), scopes: [] };
    const a = await s.ok("create_note", { title: "a" });
    await s.ok("create_note", { title: "b" });
    await app.notes.file(v, a["id"] as string, "Projects");
    expect(items(await s.ok("list_notes", { folder: "pROJECTS" })).map((i) => i.title)).toEqual(["a"]);
    expect(items(await s.ok("list_notes", { folder: "unfiled" })).map((i) => i.title)).toEqual(["b"]);
    expect(await s.fails("list_notes", { folder: "Nope" })).toMatchObject({
      reason: "NOT_FOUND",
      message: "Folder not found: Nope",
    });
  });

  it("computes periods in the user's time zone", async () => {
    await app.store.accounts.updateSettings(await userId(app, "ann"), { timeZone: "America/New_York" });
    // 2026-03-10 03:00 UTC is 23:00 on March 9 in New York.
    t.set(Date.parse("2026-03-10T03:00:00Z"));
    await s.ok("create_note", { title: "late on the 9th" });
    t.set(Date.parse("2026-03-10T05:00:00Z"));
    await s.ok("create_note", { title: "early on the 10th" });
    t.set(Date.parse("2026-03-10T20:00:00Z"));
    const titles = async (period: string) => items(await s.ok("list_notes", { period })).map((i) => i.title);
    expect(await titles("today")).toEqual(["early on the 10th"]);
    expect(await titles("yesterday")).toEqual(["late on the 9th"]);
    expect(await titles("week")).toEqual(["early on the 10th", "late on the 9th"]);
    t.set(Date.parse("2026-03-17T03:59:00Z")); // 23:59 on March 16 local: the 10th is 6 days back
    expect(await titles("week")).toEqual(["early on the 10th"]);
  });

  it("uses the server's zone (--time-zone), else the machine's, for a user who set none", async () => {
    const titlesToday = async (a: App) => {
      const session = await connect(a, "ann");
      await session.ok("create_note", { title: "at 23:30 UTC on the 9th" });
      // 10:00 UTC on the 10th: the note is from "today" in Tokyo (08:30 on the 10th), not in UTC.
      t.set(Date.parse("2026-03-10T10:00:00Z"));
      const got = items(await session.ok("list_notes", { period: "today" })).map((i) => i.title);
      await session.close();
      return got;
    };
    t.set(Date.parse("2026-03-09T23:30:00Z"));
    const tokyo = await testApp({ now: t.now, timeZone: "Asia/Tokyo" });
    expect(await titlesToday(tokyo)).toEqual(["at 23:30 UTC on the 9th"]);
    // The user's own setting wins over the server's zone.
    await tokyo.store.accounts.updateSettings(await userId(tokyo, "ann"), { timeZone: "UTC" });
    const own = await connect(tokyo, "ann");
    expect(items(await own.ok("list_notes", { period: "today" }))).toEqual([]);
    await own.close();
    await tokyo.close();

    const before = process.env["TZ"];
    process.env["TZ"] = "Asia/Tokyo";
    try {
      t.set(Date.parse("2026-03-09T23:30:00Z"));
      const machine = await testApp({ now: t.now });
      expect(machine.notes.timeZone).toBe("Asia/Tokyo");
      expect(await titlesToday(machine)).toEqual(["at 23:30 UTC on the 9th"]);
      await machine.close();
    } finally {
      if (before === undefined) delete process.env["TZ"];
      else process.env["TZ"] = before;
    }
  });

  it("starts a day where DST skips its midnight at the first instant of that date", async () => {
    await app.store.accounts.updateSettings(await userId(app, "ann"), { timeZone: "America/Sao_Paulo" });
    // 2018-11-04 in São Paulo: 00:00 did not exist (clocks went from 23:59:59 on the 3rd to 01:00).
    t.set(Date.parse("2018-11-04T02:30:00Z")); // 23:30 on the 3rd, local
    await s.ok("create_note", { title: "late on the 3rd" });
    t.set(Date.parse("2018-11-04T03:00:00Z")); // 01:00 on the 4th, local: the day's first instant
    await s.ok("create_note", { title: "first minute of the 4th" });
    t.set(Date.parse("2018-11-04T15:00:00Z"));
    const titles = async (period: string) => items(await s.ok("list_notes", { period })).map((i) => i.title);
    expect(await titles("today")).toEqual(["first minute of the 4th"]);
    t.set(Date.parse("2018-11-05T15:00:00Z"));
    expect(await titles("yesterday")).toEqual(["first minute of the 4th"]);
  });
});

describe("list_tags and list_folders", () => {
  it("counts tags most used first, by kind, within the limit", async () => {
    await s.ok("create_note", { text: "#b #a @x" });
    await s.ok("create_note", { text: "#b @x @y" });
    await s.ok("create_note", { text: "#c #b" });
    expect(await s.ok("list_tags", {})).toEqual({
      tags: [
        { tag: "#b", count: 3 },
        { tag: "#a", count: 1 },
        { tag: "#c", count: 1 },
      ],
    });
    expect(await s.ok("list_tags", { kind: "mention", limit: 1 })).toEqual({
      tags: [{ tag: "@x", count: 2 }],
    });
    expect((await s.fails("list_tags", { limit: 201 })).reason).toBe("INVALID_ARGUMENT");
  });

  it("lists folders with counts (empty ones too) and unfiled_count", async () => {
    const v = { userId: await userId(app, "ann"), scopes: [] };
    const a = await s.ok("create_note", { title: "a" });
    const b = await s.ok("create_note", { title: "b" });
    await s.ok("create_note", { title: "c" });
    await app.notes.file(v, a["id"] as string, "Work");
    await app.notes.file(v, b["id"] as string, "work");
    await app.store.accounts.ensureFolder(v.userId, "Empty");
    expect(await s.ok("list_folders", {})).toEqual({
      folders: [
        { name: "Empty", note_count: 0 },
        { name: "Work", note_count: 2 },
      ],
      unfiled_count: 1,
    });
  });
});

describe("review", () => {
  it("enrols notes with a deck tag, schedules by SM-2, and refuses notes not in review", async () => {
    const card = await s.ok("create_note", { title: "ser vs estar", text: "ser = permanent #review" });
    const plain = await s.ok("create_note", { title: "plain", text: "no deck tag" });
    const due = await s.ok("get_due_reviews", {});
    expect(due).toEqual({
      items: [
        {
          id: card["id"],
          title: "ser vs estar",
          text: "ser = permanent #review",
          due_at: "2026-03-10T12:00:00+00:00",
          interval_days: 0,
          repetitions: 0,
          is_new: true,
        },
      ],
      due_count: 1,
    });
    const again = await s.ok("grade_review", { note_id: card["id"], grade: 1 });
    expect(again).toEqual({
      id: card["id"],
      grade: 1,
      due_at: "2026-03-10T12:10:00+00:00",
      interval_days: 0,
      ease_factor: 2.5,
      repetitions: 0,
    });
    expect((await s.ok("get_due_reviews", {}))["due_count"]).toBe(0);
    t.advance(10 * 60_000);
    const back = items(await s.ok("get_due_reviews", {}))[0] as unknown as { is_new: boolean };
    expect(back.is_new).toBe(false);
    const good = await s.ok("grade_review", { note_id: card["id"], grade: 3 });
    expect(good).toMatchObject({
      interval_days: 1,
      repetitions: 1,
      ease_factor: 2.5,
      due_at: "2026-03-11T12:10:00+00:00",
    });
    expect(await s.fails("grade_review", { note_id: plain["id"], grade: 3 })).toMatchObject({
      reason: "NOT_IN_REVIEW",
      message: "Note is not in review",
    });
    expect((await s.fails("grade_review", { note_id: randomUUID(), grade: 3 })).message).toBe(
      "Note not found",
    );
    expect((await s.fails("grade_review", { note_id: card["id"], grade: 5 })).reason).toBe(
      "INVALID_ARGUMENT",
    );
    // Removing the deck tag drops the card.
    await s.ok("update_note", { note_id: card["id"], text: "no longer" });
    expect((await s.fails("grade_review", { note_id: card["id"], grade: 3 })).message).toBe(
      "Note is not in review",
    );
  });

  it("uses the user's deck tags and re-syncs when they change", async () => {
    const v = { userId: await userId(app, "ann"), scopes: [] };
    await s.ok("create_note", { text: "#flashcards one" });
    expect((await s.ok("get_due_reviews", {}))["due_count"]).toBe(0);
    await app.store.accounts.updateSettings(v.userId, { reviewTags: ["#flashcards"] });
    expect(await app.notes.syncDeck(v.userId)).toEqual({ enrolled: 1, dropped: 0 });
    expect((await s.ok("get_due_reviews", {}))["due_count"]).toBe(1);
  });
});

describe("scopes", () => {
  it("read tools and get_due_reviews need notes:read; writes and grade_review need notes:write", async () => {
    const n = await s.ok("create_note", { text: "#review x" });
    const ro = await connect(app, "ann", { scopes: ["notes:read"] });
    const wo = await connect(app, "ann", { scopes: ["notes:write"] });
    const id = n["id"];
    const reads: [string, Record<string, unknown>][] = [
      ["search_notes", { query: "x" }],
      ["semantic_search", { query: "x" }],
      ["list_notes", {}],
      ["get_note", { note_id: id }],
      ["find_similar", { note_id: id }],
      ["list_tags", {}],
      ["list_folders", {}],
      ["get_due_reviews", {}],
    ];
    const writes: [string, Record<string, unknown>][] = [
      ["create_note", { text: "y" }],
      ["update_note", { note_id: id, text: "#review z" }],
      ["grade_review", { note_id: id, grade: 3 }],
      ["delete_note", { note_id: id }],
    ];
    for (const [name, args] of reads) {
      expect((await ro.outcome(name, args)).isError, name).toBe(false);
      expect((await wo.fails(name, args)).reason, name).toBe("INSUFFICIENT_SCOPE");
    }
    for (const [name, args] of writes) {
      expect((await ro.fails(name, args)).reason, name).toBe("INSUFFICIENT_SCOPE");
      expect((await wo.outcome(name, args)).isError, name).toBe(false);
    }
    await ro.close();
    await wo.close();
  });
});
