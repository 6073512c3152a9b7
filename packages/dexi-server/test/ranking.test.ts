import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TestApp as App } from "./helpers.js";
import type { Restriction, Viewer } from "../src/domain/access.js";
import { ftsQuery } from "../src/domain/notes.js";
import { FTS_TOKENIZER, RANKING } from "../src/store/ranking.js";
import type { SqliteStore } from "../src/store/index.js";
import { connect, items, testApp, userId } from "./helpers.js";
import { STORE } from "./stores.js";

let app: App;
beforeEach(async () => {
  app = await testApp();
});
afterEach(async () => {
  await app.close();
});

const own = async (name: string): Promise<Viewer> => ({ userId: await userId(app, name), scopes: [] });

async function write(user: string, title: string, text: string, folder?: string): Promise<string> {
  const { id } = await app.notes.create(await own(user), { title, text });
  if (folder) await app.notes.file(await own(user), id, folder);
  return id;
}

/** What a caller sees: the order through search_notes, and each result's score from the store. */
async function ranking(user: string, query: string, restriction?: Restriction) {
  const s = await connect(app, user, restriction ? { restriction } : {});
  const found = await s.ok("search_notes", { query, size: 50 });
  const ids = items(found).map((i) => i.id);
  await s.close();
  const viewer: Viewer = { ...(await own(user)), ...(restriction ? { restriction } : {}) };
  const { rows } = await app.store.notes.search(
    await app.notes.access.scope(viewer),
    ftsQuery(query)!,
    50,
    0,
  );
  return { ids, total: found["total"], scores: rows.map((r) => [r.uuid, r.score]) };
}

/**
 * Many notes the caller cannot see, all holding "alpha" (never "beta"), of every length: corpus
 * statistics would make "alpha" common and "beta" rare, and lengthen the average note.
 */
async function hiddenNotes(user: string, folder?: string) {
  for (let i = 0; i < 60; i++) {
    const filler = "filler ".repeat(i * 7);
    await write(user, i % 3 === 0 ? "alpha" : "", `alpha alpha ${filler}`, folder);
  }
}

describe("a caller's search ranking depends only on notes it may see", () => {
  it("restricted: notes outside the boundary and other users' notes change neither order nor scores", async () => {
    const inside: Restriction = { folder: "Work" };
    await write("ann", "", "alpha beta beta beta", "Work");
    await write("ann", "", "alpha alpha alpha beta", "Work");
    await write("ann", "Alpha and beta", "in the title", "Work");
    await write("ann", "", `alpha beta ${"long ".repeat(300)}`, "Work");
    const before = await ranking("ann", "alpha beta", inside);
    expect(before.ids).toHaveLength(4);

    await hiddenNotes("ann", "Home");
    await hiddenNotes("bob");
    expect(await ranking("ann", "alpha beta", inside)).toEqual(before);
    expect((await ranking("bob", "alpha")).total).toBe(60);
  });

  it("unrestricted: other users' notes (and their number) change neither order nor scores", async () => {
    const team = await app.store.accounts.createTeam("crew", Date.now());
    await write("ann", "", "alpha beta beta beta");
    const same = await write("ann", "", "alpha alpha alpha beta");
    await write("ann", "beta", "alpha");
    const before = await ranking("ann", "alpha beta");
    // Alone in the database at first; then a team-mate and a stranger with many notes arrive.
    await app.store.accounts.setTeam((await own("ann")).userId, team.id);
    await app.store.accounts.setTeam((await own("bob")).userId, team.id);
    await hiddenNotes("bob");
    await hiddenNotes("eve");
    expect(await ranking("ann", "alpha beta")).toEqual(before);
    // A note shared with the team is visible, so it joins the ranking with the score of its own text.
    const shared = await write("bob", "", "alpha alpha alpha beta");
    await app.notes.share(await own("bob"), shared, true);
    const after = await ranking("ann", "alpha beta");
    const scoreOf = (r: typeof before, id: string) => r.scores.find(([x]) => x === id)?.[1];
    expect(scoreOf(after, shared)).toBe(scoreOf(before, same));
    expect(after.ids.filter((id) => id !== shared)).toEqual(before.ids);
  });

  it("scores each note by the written rule: tf saturation, length in characters, title x10", async () => {
    const id = await write("ann", "Alpha", "alpha beta");
    await write("ann", "", "beta");
    const { K1, B, TITLE_WEIGHT, TITLE_CHARS, BODY_CHARS } = RANKING;
    const sat = (tf: number, len: number, ref: number) =>
      (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / ref));
    const { scores } = await ranking("ann", "alpha");
    expect(scores).toHaveLength(1);
    expect(scores[0]![0]).toBe(id);
    expect(scores[0]![1]).toBeCloseTo(TITLE_WEIGHT * sat(1, 5, TITLE_CHARS) + sat(1, 10, BODY_CHARS), 12);
    // Stemmed and folded like the index: "Alphas" is the term "alpha".
    expect((await ranking("ann", "Alphas")).scores).toEqual(scores);
  });

  // FTS5's tokenizer is SQLite's own; PostgreSQL's index and queries name one text search configuration.
  if (STORE === "sqlite")
    it("query terms are cut by the index's own tokenizer", () => {
      const sql = (
        (app.store as SqliteStore).db
          .prepare("SELECT sql FROM sqlite_master WHERE name = 'notes_fts'")
          .get() as { sql: string }
      ).sql;
      expect(sql).toContain(`tokenize = '${FTS_TOKENIZER}'`);
    });
});
