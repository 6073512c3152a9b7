import { manualClock } from "@mcpforge/toolkit/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  allRows,
  answer,
  build,
  type Grant,
  inGrant,
  marker,
  type NoteSpec,
  nobody,
  ownerViewer,
  type Placed,
  snapshot,
  unembed,
} from "./grant-world.js";
import { ALL_SCOPES, connect, type Session, type TestApp, testApp, userId } from "./helpers.js";

/**
 * The attacker's view of a grant: a restricted connection (a folder, a tag, a mention, both, read-only)
 * and a team-mate reading shares. Every note outside the grant carries a marker word; every byte any
 * read tool returns (items, snippets, totals, tag and folder lists, due cards, errors) is checked for
 * those markers, and the whole transcript of reads is compared with the one the same connection gets
 * after the hidden notes are deleted: what it may not see must change nothing it receives. Then every
 * write tool is aimed at the hidden notes, and nothing of them may change. At the plan's note cap,
 * create_note answers as it does in a twin world without the hidden notes. A read-only grant changes
 * no row of any table, derived data (vectors) included.
 */

const NOTES: NoteSpec[] = [
  { name: "a1", owner: "ann", folder: "qxfwork", tags: ["#client", "#review", "@lee"], shared: false },
  { name: "a2", owner: "ann", folder: "qxfwork", tags: ["#plan"], shared: false },
  { name: "a3", owner: "ann", folder: "qxfhome", tags: ["#client", "#review"], shared: false },
  { name: "a4", owner: "ann", tags: ["#client", "@lee"], shared: false },
  { name: "a5", owner: "ann", folder: "qxfsecret", tags: ["#review"], shared: false },
  { name: "a6", owner: "ann", folder: "qxfshelf", tags: ["#client", "#review"], shared: true },
  { name: "a7", owner: "ann", folder: "qxfwork", tags: ["#client"], shared: true },
  { name: "a8", owner: "ann", folder: "qxfhome", tags: ["#plan", "#review"], shared: false },
  { name: "b1", owner: "bob", folder: "qxfwork", tags: ["#client", "#review"], shared: false },
  { name: "b2", owner: "bob", tags: ["#client"], shared: true },
  { name: "b3", owner: "bob", folder: "qxfbobs", tags: ["#plan"], shared: false },
  { name: "e1", owner: "eve", tags: ["#client", "#review"], shared: true },
  { name: "e2", owner: "eve", folder: "qxfwork", tags: ["#client", "@lee"], shared: false },
];
const TEAMS: Record<string, string | undefined> = { ann: "crew", bob: "crew", eve: undefined };
const FOLDERS = ["qxfwork", "qxfhome", "qxfsecret", "qxfshelf", "qxfbobs"];

interface Case {
  label: string;
  grant: Grant;
  /** Folder names the grant may learn (its own folders it may see, by the Access rules). */
  folders: string[];
}

const CASES: Case[] = [
  {
    label: "folder",
    grant: { user: "ann", scopes: ALL_SCOPES, restriction: { folder: "qxfwork" } },
    folders: ["qxfwork"],
  },
  {
    label: "folder, named in another case",
    grant: { user: "ann", scopes: ALL_SCOPES, restriction: { folder: " QXFWORK " } },
    folders: ["qxfwork"],
  },
  {
    label: "tag",
    grant: { user: "ann", scopes: ALL_SCOPES, restriction: { tag: "#client" } },
    folders: ["qxfwork", "qxfhome", "qxfshelf"],
  },
  {
    label: "mention",
    grant: { user: "ann", scopes: ALL_SCOPES, restriction: { tag: "@lee" } },
    folders: ["qxfwork"],
  },
  {
    label: "folder and tag",
    grant: { user: "ann", scopes: ALL_SCOPES, restriction: { folder: "qxfwork", tag: "#client" } },
    folders: ["qxfwork"],
  },
  {
    label: "folder, read-only",
    grant: { user: "ann", scopes: ["notes:read"], restriction: { folder: "qxfhome" } },
    folders: ["qxfhome"],
  },
  {
    label: "read-only, unrestricted",
    grant: { user: "ann", scopes: ["notes:read"] },
    folders: ["qxfwork", "qxfhome", "qxfsecret", "qxfshelf"],
  },
  {
    label: "a folder of no note yet",
    grant: { user: "ann", scopes: ALL_SCOPES, restriction: { folder: "qxflater" } },
    folders: [],
  },
  {
    label: "team-mate reading shares",
    grant: { user: "bob", scopes: ALL_SCOPES },
    folders: ["qxfwork", "qxfbobs"],
  },
  { label: "outsider", grant: { user: "eve", scopes: ALL_SCOPES }, folders: ["qxfwork"] },
];

const WORDS = ["roadmap", "client", "plan", "lee", "review"];
const TAG_FILTERS = ["#client", "client", "@lee", "lee", "#review", "#plan", "plan"];

/** The read calls an attacker makes, knowing every note's id and marker (say, from another connection). */
function reads(world: Placed[]): [string, Record<string, unknown>][] {
  const calls: [string, Record<string, unknown>][] = [];
  const markers = world.flatMap((n) => [`${marker(n.name)}t`, `${marker(n.name)}b`, `${marker(n.name)}h`]);
  for (const q of [...WORDS, ...markers, "roadmap client", "qxfwork", "qxfhome"]) {
    calls.push(["search_notes", { query: q, size: 50 }]);
    calls.push(["semantic_search", { query: q, size: 50 }]);
  }
  for (const size of [1, 2, 3]) {
    for (const page of [1, 2, 3, 9]) calls.push(["search_notes", { query: "roadmap", size, page }]);
    calls.push(["semantic_search", { query: "roadmap client", size }]);
  }
  for (const page of [1, 2, 5]) calls.push(["list_notes", { size: 2, page }]);
  calls.push(["list_notes", { size: 50, sort: "updated" }]);
  calls.push(["list_notes", { size: 50, period: "week" }]);
  calls.push(["list_notes", { size: 50, source: "note" }]);
  calls.push(["list_notes", { size: 50, source: "bookmark" }]);
  for (const tag of [
    ...TAG_FILTERS,
    ...world.flatMap((n) => [`#${marker(n.name)}h`, `@${marker(n.name)}m`]),
  ]) {
    calls.push(["list_notes", { size: 50, tag }]);
  }
  for (const folder of [...FOLDERS, "QXFWORK", " qxfhome ", "unfiled", "qxfnone"]) {
    calls.push(["list_notes", { size: 50, folder }]);
    calls.push(["list_notes", { size: 50, folder, tag: "#client" }]);
  }
  for (const n of world) {
    calls.push(["get_note", { note_id: n.uuid }]);
    calls.push(["find_similar", { note_id: n.uuid, size: 50 }]);
    calls.push(["find_similar", { note_id: n.uuid, size: 1 }]);
  }
  calls.push(["get_note", { note_id: nobody() }]);
  calls.push(["find_similar", { note_id: nobody() }]);
  for (const kind of ["hashtag", "mention"]) {
    calls.push(["list_tags", { kind, limit: 100 }]);
    calls.push(["list_tags", { kind, limit: 1 }]);
  }
  calls.push(["list_folders", {}]);
  calls.push(["get_due_reviews", { limit: 50 }]);
  calls.push(["get_due_reviews", { limit: 1 }]);
  return calls;
}

/** What a hidden folder's name may be in: the error that repeats the name the caller asked for. */
function withoutEcho(text: string, args: Record<string, unknown>): string {
  const asked = args["folder"];
  return typeof asked === "string"
    ? text.replaceAll(`Folder not found: ${asked}`, "Folder not found: <asked>")
    : text;
}

function hiddenStrings(world: Placed[], c: Case): string[] {
  return [
    ...world.filter((n) => !inGrant(n, c.grant, TEAMS)).map((n) => marker(n.name)),
    ...FOLDERS.filter((f) => !c.folders.includes(f)),
  ];
}

let app: TestApp | undefined;
const open: Session[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  await app?.close();
  app = undefined;
});

/** The world (or its twin without the notes `skip` names) on a new app, and the grant's connection. */
async function worldApp(
  c: Case,
  skip?: (n: NoteSpec) => boolean,
): Promise<{ app: TestApp; world: Placed[]; s: Session }> {
  const clock = manualClock("2026-03-10T12:00:00Z");
  const made = await testApp({ now: clock.now, timeZone: "UTC" });
  const world = await build(made, NOTES, TEAMS, () => clock.advance(60_000), skip);
  const s = await connect(made, c.grant.user, {
    scopes: c.grant.scopes,
    ...(c.grant.restriction ? { restriction: c.grant.restriction } : {}),
  });
  open.push(s);
  return { app: made, world, s };
}

async function setUp(c: Case): Promise<{ world: Placed[]; s: Session; owner: Session }> {
  const made = await worldApp(c);
  app = made.app;
  const owner = await connect(app, "ann");
  open.push(owner);
  return { world: made.world, s: made.s, owner };
}

describe.each(CASES)("$label", (c) => {
  it("no read returns a byte of what is outside the grant, and reads the same once it is gone", async () => {
    const { world, s } = await setUp(c);
    const hidden = hiddenStrings(world, c);
    const calls = reads(world);
    const before: string[] = [];
    for (const [name, args] of calls) {
      const got = await answer(s, name, args);
      const text = withoutEcho(got, args).toLowerCase();
      for (const h of hidden) expect(text, `${name} ${JSON.stringify(args)} holds ${h}`).not.toContain(h);
      before.push(got);
    }
    // The same connection, after every note outside its grant is deleted by its owner.
    for (const n of world.filter((n) => !inGrant(n, c.grant, TEAMS))) {
      await app!.notes.delete(await ownerViewer(app!, n.owner), n.uuid);
    }
    for (const [i, [name, args]] of calls.entries()) {
      expect(await answer(s, name, args), `${name} ${JSON.stringify(args)}`).toBe(before[i]);
    }
  });

  it("counts exactly what the grant holds", async () => {
    const { world, s } = await setUp(c);
    const visible = world.filter((n) => inGrant(n, c.grant, TEAMS));
    expect((await s.ok("list_notes", { size: 50 }))["total"]).toBe(visible.length);
    expect((await s.ok("search_notes", { query: "roadmap", size: 50 }))["total"]).toBe(visible.length);
    const own = visible.filter((n) => n.owner === c.grant.user);
    const cards = own.filter((n) => n.tags.includes("#review"));
    expect((await s.ok("get_due_reviews", { limit: 50 }))["due_count"]).toBe(cards.length);
    const tags = (await s.ok("list_tags", { limit: 100 }))["tags"] as { tag: string; count: number }[];
    const client = visible.filter((n) => n.tags.includes("#client")).length;
    expect(tags.find((t) => t.tag === "#client")?.count ?? 0).toBe(client);
    const folders = (await s.ok("list_folders", {})) as {
      folders: { name: string; note_count: number }[];
      unfiled_count: number;
    };
    expect(folders.unfiled_count).toBe(own.filter((n) => n.folder === undefined).length);
    for (const f of folders.folders) {
      expect(c.folders).toContain(f.name);
      expect(f.note_count).toBe(own.filter((n) => n.folder === f.name).length);
    }
  });

  it("no write reaches a note outside the grant, and each answers as a note that never was", async () => {
    const { world, s } = await setUp(c);
    const outside = world.filter((n) => !inGrant(n, c.grant, TEAMS));
    const tag = c.grant.restriction?.tag ?? "";
    const before = await snapshot(app!);
    const hidden = hiddenStrings(world, c);
    const writes = (id: string): [string, Record<string, unknown>][] => [
      ["update_note", { note_id: id, text: `rewritten ${tag}` }],
      ["update_note", { note_id: id, text: `more ${tag}`, mode: "append" }],
      ["update_note", { note_id: id, title: "renamed" }],
      ["update_note", { note_id: id }],
      ["grade_review", { note_id: id, grade: 1 }],
      ["grade_review", { note_id: id, grade: 4 }],
      ["delete_note", { note_id: id }],
    ];
    const teamShared = (n: Placed) => n.shared && n.owner !== c.grant.user && inGrant(n, c.grant, TEAMS);
    for (const n of outside) {
      for (const [name, args] of writes(n.uuid)) {
        const got = await answer(s, name, args);
        for (const h of hidden) expect(got.toLowerCase(), `${name} ${n.name}`).not.toContain(h);
        const stranger = await answer(s, name, { ...args, note_id: nobody() });
        expect(got, `${name} on ${n.name} answers as an unknown id`).toBe(stranger);
      }
    }
    // A team-mate's shared note is seen, never written.
    for (const n of world.filter(teamShared)) {
      for (const [name, args] of writes(n.uuid)) {
        const r = await s.outcome(name, args);
        expect(r.isError, `${name} on shared ${n.name}`).toBe(true);
      }
    }
    // Writes the grant allows, inside it, touch nothing outside either.
    await s.outcome("create_note", { title: "new", text: `fresh ${tag}` });
    await s.outcome("create_note", { title: "qxfhome", text: "#qxfsecret in qxfhome" });
    const after = await snapshot(app!);
    for (const n of [...outside, ...world.filter(teamShared)]) {
      expect(after.get(n.uuid), `${n.name} changed`).toBe(before.get(n.uuid));
    }
    for (const [key, row] of before) if (key.startsWith("folder ")) expect(after.get(key)).toBe(row);
    if (!c.grant.scopes.includes("notes:write")) expect(after).toEqual(before);
  });

  if (c.grant.scopes.includes("notes:write")) {
    it("at the account's note cap, create_note answers as it would with no note outside the grant", async () => {
      // The cap is the account's: the owner's notes fill it. The twin holds only what the grant sees,
      // its cap filled by those: the grant cannot tell the two apart.
      const capped = async (skip?: (n: NoteSpec) => boolean) => {
        const made = await worldApp(c, skip);
        const owner = await userId(made.app, c.grant.user);
        const own = made.world.filter((n) => n.owner === c.grant.user && !skip?.(n)).length;
        await made.app.store.accounts.updateSettings(owner, { plan: "free", noteCap: own });
        const tag = c.grant.restriction?.tag ?? "";
        const got = await answer(made.s, "create_note", { title: "new", text: `fresh ${tag}` });
        const total = (await made.s.ok("list_notes", { size: 1 }))["total"];
        return { app: made.app, got, total };
      };
      const real = await capped();
      app = real.app;
      const twin = await capped((n) => !inGrant(n, c.grant, TEAMS));
      try {
        expect(JSON.parse(real.got)).toMatchObject({
          isError: true,
          structured: { error: { reason: "LIMIT_REACHED" } },
        });
        expect(real.got).toBe(twin.got);
        // Nothing was created.
        expect(real.total).toBe(granted(c).length);
      } finally {
        await twin.app.close();
      }
    });
  } else {
    it("changes no row of any table, even where a read could store derived data", async () => {
      const { world, s } = await setUp(c);
      // Every other note without a vector: find_similar of one needs its vector, and may not keep it.
      const bare = world.filter((_, i) => i % 2 === 0);
      for (const n of bare) await unembed(app!, n.uuid);
      const before = await allRows(app!);
      let similarOfBare = 0;
      for (const [name, args] of reads(world)) {
        const got = await s.outcome(name, args);
        if (name === "find_similar" && !got.isError && bare.some((n) => n.uuid === args["note_id"]))
          similarOfBare += (got.structured["items"] as unknown[]).length;
      }
      for (const name of ["create_note", "update_note", "delete_note", "grade_review"])
        await s.outcome(name, { note_id: world[0]!.uuid, title: "x", text: "y", grade: 3 });
      expect(similarOfBare, "find_similar of a note without a vector found its neighbours").toBeGreaterThan(
        0,
      );
      expect(await allRows(app!)).toEqual(before);
    });
  }
});

/** The notes a case's grant sees. */
const granted = (c: Case) => NOTES.filter((n) => inGrant(n, c.grant, TEAMS));

it("the server offers no resources, prompts or completions a grant could read through", async () => {
  const { s } = await setUp(CASES[0]!);
  const caps = s.client.getServerCapabilities() ?? {};
  expect(caps).not.toHaveProperty("resources");
  expect(caps).not.toHaveProperty("prompts");
  expect(caps).not.toHaveProperty("completions");
});

it("a folder-and-tag grant whose folder holds only notes outside it answers as if no note was ever filed there", async () => {
  // qxfhome holds a3 and a8, neither mentioning @lee: the folder exists only because of them.
  const c: Case = {
    label: "folder of hidden notes",
    grant: { user: "ann", scopes: ALL_SCOPES, restriction: { folder: "qxfhome", tag: "@lee" } },
    folders: [],
  };
  const probe = async (s: Session) =>
    Promise.all([
      answer(s, "list_folders", {}),
      answer(s, "list_notes", { folder: "qxfhome" }),
      answer(s, "list_notes", { folder: "QXFHOME", tag: "@lee" }),
    ]);
  const real = await worldApp(c);
  app = real.app;
  const clock = manualClock("2026-03-10T12:00:00Z");
  const twin = await testApp({ now: clock.now, timeZone: "UTC" });
  try {
    // The twin never held the notes outside the grant, nor the folder they made.
    const kept = NOTES.filter((n) => inGrant(n, c.grant, TEAMS));
    await build(twin, kept, TEAMS, () => clock.advance(60_000));
    const s = await connect(twin, "ann", { restriction: c.grant.restriction! });
    open.push(s);
    expect(await probe(real.s)).toEqual(await probe(s));
  } finally {
    await twin.close();
  }
});
