/**
 * The PostgreSQL store answers every tool exactly as the SQLite store does: the same script of calls
 * (several users, a team, sharing, folders, tags, restricted connections, reviews, edits, deletes) runs
 * against both, and every answer must be equal (note ids aside, which are random per store).
 */
import { connectInMemory, session } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, openApp, openAppAt } from "../src/app.js";
import type { Restriction } from "../src/domain/access.js";
import { HashEmbedder } from "../src/embed/hash.js";
import { createDexiServer, DEXI_SCOPES } from "../src/mcp/server.js";
import { freshDatabase } from "./postgres-helpers.js";

const T0 = Date.parse("2026-03-02T10:00:00Z");
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Side {
  app: App;
  clock: { now: number };
  call(
    user: string,
    name: string,
    args?: Record<string, unknown>,
    restriction?: Restriction,
  ): Promise<unknown>;
  close(): Promise<void>;
}

async function side(
  open: (o: { embedder: HashEmbedder; now: () => number; log: () => void }) => Promise<App>,
) {
  const clock = { now: T0 };
  const app = await open({ embedder: new HashEmbedder(), now: () => clock.now, log: () => {} });
  const conns: { close(): Promise<void> }[] = [];
  const s: Side = {
    app,
    clock,
    async call(user, name, args = {}, restriction) {
      const id = (await app.store.accounts.ensureUser(user, T0)).id;
      const kit = createDexiServer({
        notes: app.notes,
        viewerFor: (c) => ({ userId: id, scopes: c.scopes, ...(restriction ? { restriction } : {}) }),
        log: () => {},
      });
      const conn = await connectInMemory(kit, { scopes: [...DEXI_SCOPES], clientId: user });
      conns.push(conn);
      try {
        const r = await session(conn.client).raw(name, args);
        return { isError: r.isError === true, structured: r.structuredContent ?? null };
      } finally {
        await conn.close();
      }
    },
    close: () => app.close(),
  };
  return s;
}

let sqlite: Side;
let postgres: Side;
/** The uuid each side gave the note of a title, so later calls name the same note on both. */
const ids = { sqlite: new Map<string, string>(), postgres: new Map<string, string>() };

beforeAll(async () => {
  sqlite = await side(async (o) => openApp(":memory:", o));
  const url = await freshDatabase();
  postgres = await side((o) => openAppAt(url, o));
});
afterAll(async () => {
  await sqlite?.close();
  await postgres?.close();
});

/** Runs one call on both stores (titles stand for note ids) and returns both answers, ids masked. */
async function both(
  user: string,
  name: string,
  args: Record<string, unknown> = {},
  restriction?: Restriction,
): Promise<[unknown, unknown]> {
  const out: unknown[] = [];
  for (const [key, s] of [
    ["sqlite", sqlite],
    ["postgres", postgres],
  ] as const) {
    const resolved = JSON.parse(
      JSON.stringify(args).replace(/"@note:([^"]*)"/g, (_, t: string) =>
        JSON.stringify(ids[key].get(t) ?? t),
      ),
    ) as Record<string, unknown>;
    const r = (await s.call(user, name, resolved, restriction)) as {
      structured: Record<string, unknown> | null;
    };
    const id = r.structured?.["id"];
    const title = r.structured?.["title"];
    if (name === "create_note" && typeof id === "string" && typeof title === "string")
      ids[key].set(title, id);
    out.push(JSON.parse(JSON.stringify(r).replace(UUID, "<id>")));
  }
  return [out[0], out[1]];
}

const same = async (
  user: string,
  name: string,
  args?: Record<string, unknown>,
  restriction?: Restriction,
) => {
  const [a, b] = await both(user, name, args, restriction);
  expect(b, `${name} ${JSON.stringify(args)}`).toEqual(a);
  return a as { isError: boolean; structured: Record<string, unknown> };
};

const NOTES: [user: string, title: string, text: string][] = [
  ["ann", "Garden plan", "Raised beds, tomatoes and basil together; a rain barrel by the shed. #garden"],
  ["ann", "Tomatoes", "Tomato varieties to try: cherry, plum. #garden #review"],
  ["ann", "Client call", "Spoke with @lee about the invoice. #work #client"],
  ["ann", "Café notes", "The best café in town serves running coffee. #city"],
  ["bob", "Bob's garden", "Bob plants tomatoes every spring. #garden"],
  ["bob", "Bob private", "Nothing to share here, tomatoes aside. #private"],
  ["cat", "Cat alone", "Cat writes about tomatoes and gardens too."],
];

describe("PostgreSQL and SQLite answer alike", () => {
  it("creates notes, with teams, sharing and folders", async () => {
    for (const s of [sqlite, postgres]) await s.app.accounts.joinTeam("crew", "ann");
    for (const s of [sqlite, postgres]) await s.app.accounts.joinTeam("crew", "bob");
    for (const [user, title, text] of NOTES) {
      for (const s of [sqlite, postgres]) s.clock.now += 60_000;
      const r = await same(user, "create_note", { title, text });
      expect(r.isError).toBe(false);
    }
    for (const s of [sqlite, postgres]) {
      const ann = (await s.app.store.accounts.ensureUser("ann", T0)).id;
      const bob = (await s.app.store.accounts.ensureUser("bob", T0)).id;
      const key = s === sqlite ? "sqlite" : "postgres";
      await s.app.notes.file({ userId: ann, scopes: [] }, ids[key].get("Client call")!, "Work");
      await s.app.notes.file({ userId: ann, scopes: [] }, ids[key].get("Garden plan")!, "Home");
      await s.app.notes.share({ userId: bob, scopes: [] }, ids[key].get("Bob's garden")!, true);
    }
  });

  it("searches, ranked the same, for each user and boundary", async () => {
    for (const q of [
      "tomatoes",
      "tomato",
      "garden",
      "gardens",
      "cafe",
      "café",
      "running coffee",
      "the",
      "nothing",
      "#garden",
    ]) {
      for (const user of ["ann", "bob", "cat"]) await same(user, "search_notes", { query: q });
      await same("ann", "search_notes", { query: q }, { folder: "Home" });
      await same("ann", "search_notes", { query: q }, { tag: "#garden" });
    }
    await same("ann", "search_notes", { query: "tomatoes", size: 1, page: 2 });
    // A page past the last hit still carries the total.
    const past = await same("ann", "search_notes", { query: "tomatoes", size: 2, page: 3 });
    expect([past.structured["total"], past.structured["items"]]).toEqual([3, []]);
    // Not vacuous: the answers compared hold notes, in the ranking's order.
    const found = await same("ann", "search_notes", { query: "tomatoes" });
    const titles = (found.structured["items"] as { title: string }[]).map((i) => i.title);
    expect([found.structured["total"], titles]).toEqual([3, ["Tomatoes", "Bob's garden", "Garden plan"]]);
    const folded = await same("ann", "search_notes", { query: "cafe" });
    expect(folded.structured["total"]).toBe(1);
  });

  it("lists, counts tags and folders, and reads notes the same", async () => {
    for (const user of ["ann", "bob", "cat"]) {
      await same(user, "list_notes", {});
      await same(user, "list_notes", { sort: "updated", size: 2 });
      await same(user, "list_notes", { tag: "#garden" });
      await same(user, "list_notes", { source: "note", period: "today" });
      await same(user, "list_tags", {});
      await same(user, "list_tags", { kind: "mention" });
      await same(user, "list_folders", {});
    }
    await same("ann", "list_notes", { folder: "work" });
    await same("ann", "list_notes", { folder: "unfiled" });
    await same("ann", "list_notes", { folder: "Nowhere" });
    await same("ann", "list_notes", {}, { folder: "Work", tag: "#client" });
    await same("ann", "list_folders", {}, { tag: "#garden" });
    await same("ann", "get_note", { note_id: "@note:Bob's garden" });
    await same("ann", "get_note", { note_id: "@note:Bob private" });
    await same("ann", "get_note", { note_id: "@note:Garden plan" }, { folder: "Work" });
  });

  it("finds similar notes and answers semantic queries the same", async () => {
    await same("ann", "semantic_search", { query: "tomato garden" });
    await same("bob", "semantic_search", { query: "tomato garden", size: 3 });
    await same("ann", "semantic_search", { query: "tomato garden" }, { tag: "#garden" });
    const similar = await same("ann", "find_similar", { note_id: "@note:Tomatoes" });
    expect((similar.structured["items"] as unknown[]).length).toBeGreaterThan(2);
  });

  it("edits, reviews and deletes the same", async () => {
    await same("ann", "update_note", {
      note_id: "@note:Tomatoes",
      text: "More: roma. #garden",
      mode: "append",
    });
    await same("ann", "update_note", { note_id: "@note:Bob's garden", title: "mine now" });
    await same("ann", "update_note", { note_id: "@note:Client call", text: "no tag" }, { tag: "#client" });
    const due = await same("ann", "get_due_reviews", {});
    expect(due.structured["due_count"]).toBe(1);
    await same("ann", "grade_review", { note_id: "@note:Tomatoes", grade: "good" });
    await same("ann", "grade_review", { note_id: "@note:Garden plan", grade: "good" });
    await same("ann", "get_due_reviews", {});
    await same("ann", "delete_note", { note_id: "@note:Café notes" });
    await same("ann", "delete_note", { note_id: "@note:Café notes" });
    await same("bob", "delete_note", { note_id: "@note:Garden plan" });
    await same("ann", "search_notes", { query: "tomatoes" });
    await same("ann", "list_tags", {});
  });
});
