/**
 * What the suites (run on both stores, see vitest.config.ts) cannot state as one expected value: that
 * semantic_search and find_similar rank alike on SQLite and on PostgreSQL, vectors read from either
 * store (several users, a team, sharing, folders, a boundary), every answer equal note ids aside.
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

describe("PostgreSQL and SQLite rank by meaning alike", () => {
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

  it("finds similar notes and answers semantic queries the same", async () => {
    await same("ann", "semantic_search", { query: "tomato garden" });
    await same("bob", "semantic_search", { query: "tomato garden", size: 3 });
    await same("ann", "semantic_search", { query: "tomato garden" }, { tag: "#garden" });
    const similar = await same("ann", "find_similar", { note_id: "@note:Tomatoes" });
    expect((similar.structured["items"] as unknown[]).length).toBeGreaterThan(2);
  });
});
