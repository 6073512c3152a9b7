import { randomUUID } from "node:crypto";
import { seededRandom } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp as App } from "./helpers.js";
import type { Restriction } from "../src/domain/access.js";
import { connectHttp } from "@mcpforge/toolkit/testing";
import { connect, type Item, items, type Session, sessionOf, testApp, userId } from "./helpers.js";
import { type HttpRestricted, restrictedOverHttp } from "./oauth-helpers.js";

/**
 * Differential check of the restriction rules: on generated data, every read tool under a restriction
 * must answer exactly what the unrestricted connection answers, filtered to the boundary.
 */

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
const TAGS = ["#t1", "#t2", "#t3", "@m1", "@m2", "#review"];
const FOLDERS = ["Alpha", "beta", "Gamma", null];
const QUERIES = ["alpha", "bravo charlie", "delta", "echo foxtrot golf", "hotel", "india juliet", "t1"];
const RESTRICTIONS: Restriction[] = [
  { folder: "alpha" },
  { tag: "#t1" },
  { tag: "@m1" },
  { tag: "t2" },
  { folder: "BETA", tag: "@m2" },
  { folder: "Missing" },
  { folder: "gamma", tag: "#review" },
];

let app: App;
let ann: Session;
let all: (Item & { text?: string })[];
let http: HttpRestricted;

beforeAll(async () => {
  app = await testApp();
  ann = await connect(app, "ann");
  const bob = await connect(app, "bob");
  const team = await app.store.accounts.createTeam("crew", Date.now());
  await app.store.accounts.setTeam(await userId(app, "ann"), team.id);
  await app.store.accounts.setTeam(await userId(app, "bob"), team.id);
  // Seed 7 draws notes whose hash embeddings tie exactly, so the tie-break of both vector paths is checked.
  const r = seededRandom(7);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  for (let i = 0; i < 44; i++) {
    const words = Array.from({ length: 3 + Math.floor(r() * 6) }, () => pick(WORDS));
    const tags = TAGS.filter(() => r() < 0.3);
    const n = await ann.ok("create_note", {
      title: `${pick(WORDS)} ${i}`,
      text: `${words.join(" ")} ${tags.join(" ")}`,
    });
    const folder = pick(FOLDERS);
    if (folder)
      await app.notes.file({ userId: await userId(app, "ann"), scopes: [] }, n["id"] as string, folder);
  }
  for (let i = 0; i < 6; i++) {
    const n = await bob.ok("create_note", {
      title: `bob ${i}`,
      text: `${pick(WORDS)} ${pick(WORDS)} #t1 @m1 @m2`,
    });
    if (i % 2 === 0)
      await app.notes.share({ userId: await userId(app, "bob"), scopes: [] }, n["id"] as string, true);
  }
  await bob.close();
  all = items(await ann.ok("list_notes", { size: 50 }));
  expect(all).toHaveLength(47);
  http = await restrictedOverHttp(app);
});

afterAll(async () => {
  await http.close();
  await ann.close();
  await app.close();
});

function inBoundary(item: Item, r: Restriction): boolean {
  if (item.shared) return false;
  if (r.folder && item.folder?.toLowerCase() !== r.folder.toLowerCase()) return false;
  if (r.tag) {
    const tag = r.tag.startsWith("#") || r.tag.startsWith("@") ? r.tag : `#${r.tag}`;
    if (!item.tags.includes(tag.toLowerCase())) return false;
  }
  return true;
}

async function pages(
  s: Session,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ items: Item[]; total: number }> {
  const first = await s.ok(tool, { ...args, size: 50 });
  return { items: items(first), total: first["total"] as number };
}

/**
 * In memory, the restriction is the connection's; over HTTP it is an OAuth grant's, carried by the
 * bearer token of a consent to exactly that folder and tag (2026-07-28 era, so each call stands alone).
 */
const TRANSPORTS = ["in-memory", "http"] as const;

describe.each(TRANSPORTS.flatMap((t) => RESTRICTIONS.map((r) => [t, r] as const)))(
  "%s, restricted to %o",
  (transport, restriction) => {
    let rs: Session;
    const inside = (xs: Item[]) => xs.filter((i) => inBoundary(i, restriction));

    beforeAll(async () => {
      rs =
        transport === "in-memory"
          ? await connect(app, "ann", { restriction })
          : sessionOf(
              await connectHttp(http.mcpUrl, await http.tokenFor("ann", restriction), { era: "modern" }),
            );
      // The generated data must exercise the boundary: something inside (unless the folder is missing) and outside.
      if (restriction.folder !== "Missing") expect(inside(all).length).toBeGreaterThan(0);
      expect(inside(all).length).toBeLessThan(all.length);
    });
    afterAll(async () => rs.close());

    it("list_notes (with each filter) is the unrestricted list filtered", async () => {
      for (const args of [
        {},
        { sort: "updated" },
        { tag: "t2" },
        { tag: "@m1" },
        { source: "note" },
        { period: "week" },
      ]) {
        const full = await pages(ann, "list_notes", args);
        const mine = await pages(rs, "list_notes", args);
        expect(mine.items, JSON.stringify(args)).toEqual(inside(full.items));
        expect(mine.total).toBe(inside(full.items).length);
      }
    });

    it("search_notes is the unrestricted ranking filtered", async () => {
      for (const query of QUERIES) {
        const full = await pages(ann, "search_notes", { query });
        const mine = await pages(rs, "search_notes", { query });
        expect(mine.items, query).toEqual(inside(full.items));
        expect(mine.total).toBe(inside(full.items).length);
      }
    });

    it("semantic_search and find_similar are the unrestricted rankings filtered", async () => {
      for (const query of QUERIES) {
        const full = items(await ann.ok("semantic_search", { query, size: 50 }));
        expect(items(await rs.ok("semantic_search", { query, size: 50 })), query).toEqual(inside(full));
      }
      for (const note of inside(all)) {
        const full = items(await ann.ok("find_similar", { note_id: note.id, size: 50 }));
        expect(items(await rs.ok("find_similar", { note_id: note.id, size: 50 }))).toEqual(inside(full));
      }
    });

    it("get_note answers in-boundary ids as unrestricted, and others exactly as a random id", async () => {
      const random = await rs.outcome("get_note", { note_id: randomUUID() });
      for (const note of all) {
        const got = await rs.outcome("get_note", { note_id: note.id });
        if (inBoundary(note, restriction))
          expect(got).toEqual(await ann.outcome("get_note", { note_id: note.id }));
        else expect(got).toEqual(random);
      }
    });

    it("list_tags and list_folders count only in-boundary notes", async () => {
      const kept = inside(all);
      for (const kind of ["hashtag", "mention"] as const) {
        const counts = new Map<string, number>();
        for (const n of kept)
          for (const t of n.tags)
            if ((t[0] === "#") === (kind === "hashtag")) counts.set(t, (counts.get(t) ?? 0) + 1);
        const expected = [...counts]
          .map(([tag, count]) => ({ tag, count }))
          .sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : 1));
        expect((await rs.ok("list_tags", { kind, limit: 200 }))["tags"], kind).toEqual(expected);
      }
      const folders = await rs.ok("list_folders", {});
      const byFolder = new Map<string, number>();
      for (const n of kept) if (n.folder) byFolder.set(n.folder, (byFolder.get(n.folder) ?? 0) + 1);
      if (restriction.folder) {
        const unrestricted = (await ann.ok("list_folders", {}))["folders"] as { name: string }[];
        const f = unrestricted.find((x) => x.name.toLowerCase() === restriction.folder!.toLowerCase());
        expect(folders["folders"]).toEqual(
          f ? [{ name: f.name, note_count: byFolder.get(f.name) ?? 0 }] : [],
        );
      } else {
        expect(folders["folders"]).toEqual(
          [...byFolder]
            .map(([name, note_count]) => ({ name, note_count }))
            .sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1)),
        );
      }
      expect(folders["unfiled_count"]).toBe(kept.filter((n) => !n.folder).length);
    });

    it("get_due_reviews is the unrestricted queue filtered", async () => {
      const full = (await ann.ok("get_due_reviews", { limit: 50 }))["items"] as { id: string }[];
      const ids = new Set(inside(all).map((n) => n.id));
      const mine = await rs.ok("get_due_reviews", { limit: 50 });
      expect(mine["items"]).toEqual(full.filter((c) => ids.has(c.id)));
      expect(mine["due_count"]).toBe(full.filter((c) => ids.has(c.id)).length);
    });
  },
);
