import fc from "fast-check";
import { manualClock } from "@mcpforge/toolkit/testing";
import { expect, it } from "vitest";
import {
  allRows,
  answer,
  build,
  type Grant,
  inGrant,
  marker,
  type NoteSpec,
  nobody,
  type Placed,
  snapshot,
  unembed,
} from "./grant-world.js";
import { connect, type Session, type TestApp, testApp, userId } from "./helpers.js";
import { STORE } from "./stores.js";

/**
 * The promise of a grant as a property: random notes of three users (random folders, tags, sharing,
 * teams), a random grant (a folder and/or tag restriction, or none: a reader of shares; read-only or
 * read-write; some notes not yet embedded; the account at or near a plan's note cap, or not), and random
 * calls of every tool from it. No answer ever holds the marker of a note outside the grant, and each
 * answer is the one the grant gets in the world's twin that never held those notes (its cap counting
 * what the grant sees): nothing it receives depends on them. No note outside the grant changes, a
 * read-only grant changes no row of any table, the counts are the grant's own, and a note the grant
 * writes stays inside it.
 */

const USERS = ["ann", "bob", "eve"] as const;
const FOLDERS = ["qxfa", "qxfb", "qxfc"] as const;
const TAGS = ["#t1", "#t2", "@m1", "#review"] as const;

const noteArb = fc.record({
  owner: fc.constantFrom(...USERS),
  folder: fc.option(fc.constantFrom(...FOLDERS), { nil: undefined }),
  tags: fc.subarray([...TAGS]),
  shared: fc.boolean(),
  /** False: the note has no stored vector (not yet embedded, or embedded by another model). */
  embedded: fc.constantFrom(true, true, true, false),
});

const restrictionArb = fc.oneof(
  fc.constant(undefined),
  fc
    .record(
      {
        folder: fc.constantFrom("qxfa", "qxfb", "QXFC", "qxfnew"),
        tag: fc.constantFrom("#t1", "#t2", "@m1", "#review", "#tnew"),
      },
      { requiredKeys: [] },
    )
    .filter((r) => r.folder !== undefined || r.tag !== undefined),
);

const worldArb = fc.record({
  notes: fc.array(noteArb, { maxLength: 12 }),
  teams: fc.record({
    ann: fc.constantFrom("crew", undefined),
    bob: fc.constantFrom("crew", "other", undefined),
    eve: fc.constantFrom("crew", "other", undefined),
  }),
  /** The grant's user's note cap: its notes now plus this many, or none. */
  capSlack: fc.option(fc.nat(2), { nil: undefined }),
  grant: fc.record({
    user: fc.constantFrom(...USERS),
    scopes: fc.oneof(
      { weight: 1, arbitrary: fc.constant(["notes:read"]) },
      { weight: 3, arbitrary: fc.constant(["notes:read", "notes:write"]) },
    ),
    restriction: restrictionArb,
  }),
});

/**
 * A call, with the note it names: an index (modulo their number) into every note of the world, or
 * into those the grant may see (its visible notes and the ones it wrote), or an unknown id.
 */
type Ref = { pool: "any" | "granted"; i: number } | undefined;
type Call = { tool: string; args: Record<string, unknown>; note?: Ref };

const noteRef: fc.Arbitrary<Ref> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.record({ pool: fc.constant("any" as const), i: fc.nat(40) }) },
  { weight: 3, arbitrary: fc.record({ pool: fc.constant("granted" as const), i: fc.nat(40) }) },
);
const words = fc.constantFrom("roadmap", "client", "plan", "lee", "zebra");
const writtenText = fc
  .array(fc.oneof(words, fc.constantFrom(...TAGS, "#tnew", "#t1.", "@m1x")), { maxLength: 4 })
  .map((w) => w.join(" "));

const callArb: fc.Arbitrary<Call> = fc.oneof(
  fc.record({
    tool: fc.constant("search_notes"),
    args: fc.record({
      query: fc.oneof(
        words,
        fc.nat(15).map((i) => `${marker(`n${i}z`)}b`),
      ),
      page: fc.integer({ min: 1, max: 3 }),
      size: fc.integer({ min: 1, max: 5 }),
    }),
  }),
  fc.record({
    tool: fc.constant("semantic_search"),
    args: fc.record({
      query: fc.oneof(
        words,
        fc.nat(15).map((i) => `${marker(`n${i}z`)}t`),
      ),
      size: fc.integer({ min: 1, max: 5 }),
    }),
  }),
  fc.record({
    tool: fc.constant("list_notes"),
    args: fc.record(
      {
        page: fc.integer({ min: 1, max: 3 }),
        size: fc.integer({ min: 1, max: 5 }),
        source: fc.constantFrom("all", "note", "bookmark"),
        tag: fc.constantFrom(...TAGS, "t1", "m1", "review", "#tnew"),
        folder: fc.constantFrom(...FOLDERS, "unfiled", "QXFA", "qxfnew"),
        sort: fc.constantFrom("created", "updated"),
        period: fc.constantFrom("today", "week"),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ tool: fc.constant("get_note"), args: fc.constant({}), note: noteRef }),
  fc.record({
    tool: fc.constant("find_similar"),
    args: fc.record({ size: fc.integer({ min: 1, max: 5 }) }),
    note: noteRef,
  }),
  fc.record({
    tool: fc.constant("list_tags"),
    args: fc.record({ kind: fc.constantFrom("hashtag", "mention"), limit: fc.integer({ min: 1, max: 5 }) }),
  }),
  fc.record({ tool: fc.constant("list_folders"), args: fc.constant({}) }),
  fc.record({
    tool: fc.constant("get_due_reviews"),
    args: fc.record({ limit: fc.integer({ min: 1, max: 5 }) }),
  }),
  fc.record({
    tool: fc.constant("grade_review"),
    args: fc.record({ grade: fc.integer({ min: 1, max: 4 }) }),
    note: noteRef,
  }),
  fc.record({ tool: fc.constant("create_note"), args: fc.record({ title: words, text: writtenText }) }),
  fc.record({
    tool: fc.constant("update_note"),
    args: fc.record(
      { title: words, text: writtenText, mode: fc.constantFrom("replace", "append") },
      { requiredKeys: [] },
    ),
    note: noteRef,
  }),
  fc.record({ tool: fc.constant("delete_note"), args: fc.constant({}), note: noteRef }),
);

/** The error that repeats the folder name the caller asked for is not a leak of it. */
function withoutEcho(text: string, args: Record<string, unknown>): string {
  const asked = args["folder"];
  return typeof asked === "string"
    ? text.replaceAll(`Folder not found: ${asked}`, "Folder not found: <asked>")
    : text;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A world on an app of its own, the grant's connection to it, and its answers with ids as names. */
interface World {
  app: TestApp;
  s: Session;
  world: Placed[];
  clock: ReturnType<typeof manualClock>;
  /** An answer with each note's id as its name (a note the calls made: `new<k>`, k in order seen). */
  named(answer: string): string;
  /** The id of the last note the calls created, by the answers seen so far. */
  lastCreated(): string;
}

/**
 * The world (or, with `skip`, its twin without those notes: their folders kept, their clock steps
 * taken), its notes that are not embedded without a vector, the grant's user at a note cap of its notes
 * here plus `capSlack` when given.
 */
async function place(
  specs: (NoteSpec & { embedded: boolean })[],
  teams: Record<string, string | undefined>,
  grant: Grant,
  capSlack: number | undefined,
  skip: (n: NoteSpec) => boolean = () => false,
): Promise<World> {
  const clock = manualClock("2026-03-10T12:00:00Z");
  const app = await testApp({ now: clock.now, timeZone: "UTC" });
  const world = await build(app, specs, teams, () => clock.advance(60_000), skip);
  for (const [i, n] of world.entries()) if (!specs[i]!.embedded && !skip(n)) await unembed(app, n.uuid);
  if (capSlack !== undefined) {
    const own = specs.filter((n) => n.owner === grant.user && !skip(n)).length;
    await app.store.accounts.updateSettings(await userId(app, grant.user), { noteCap: own + capSlack });
  }
  const s = await connect(app, grant.user, {
    scopes: grant.scopes,
    ...(grant.restriction ? { restriction: grant.restriction } : {}),
  });
  const names = new Map(world.map((n) => [n.uuid, n.name]));
  let last = "";
  return {
    app,
    s,
    world,
    clock,
    named: (text) =>
      text.replace(UUID, (id) => {
        if (!names.has(id)) {
          names.set(id, `new${names.size}`);
          last = id;
        }
        return names.get(id)!;
      }),
    lastCreated: () => last,
  };
}

const RUNS = Number(process.env["DEXI_PROPERTY_RUNS"] ?? (STORE === "sqlite" ? 150 : 25));

it("a grant never receives, nor changes, anything outside it", { timeout: 300_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(worldArb, fc.array(callArb, { minLength: 1, maxLength: 25 }), async (w, calls) => {
      const specs = w.notes.map((n, i) => ({
        name: `n${i}z`,
        owner: n.owner,
        tags: n.tags,
        shared: n.shared,
        embedded: n.embedded,
        ...(n.folder !== undefined ? { folder: n.folder } : {}),
      }));
      const teams: Record<string, string | undefined> = w.teams;
      const grant: Grant = {
        user: w.grant.user,
        scopes: [...w.grant.scopes],
        ...(w.grant.restriction ? { restriction: w.grant.restriction } : {}),
      };
      const r = grant.restriction;
      const real = await place(specs, teams, grant, w.capSlack);
      const twin = await place(specs, teams, grant, w.capSlack, (n) => !inGrant(n, grant, teams));
      try {
        const { app, s, world } = real;
        const visible = world.filter((n) => inGrant(n, grant, teams));
        const outside = world.filter((n) => !inGrant(n, grant, teams));
        const hidden = outside.map((n) => marker(n.name));
        const own = visible.filter((n) => n.owner === grant.user);
        // Folder names the grant may be shown: the restriction's folder (as the user spelled it, or as
        // create_note makes it); under a tag alone, the folders of its visible notes; else its own folders.
        const mine = world.filter((n) => n.owner === grant.user);
        const folders = new Set<string>(
          r === undefined
            ? mine.flatMap((n) => (n.folder !== undefined ? [n.folder] : []))
            : r.folder !== undefined
              ? [
                  r.folder.trim(),
                  ...mine.flatMap((n) =>
                    n.folder?.toLowerCase() === r.folder!.trim().toLowerCase() ? [n.folder] : [],
                  ),
                ]
              : own.flatMap((n) => (n.folder !== undefined ? [n.folder] : [])),
        );

        // The counts are the grant's own.
        expect((await s.ok("list_notes", { size: 50 }))["total"]).toBe(visible.length);
        expect((await s.ok("search_notes", { query: "roadmap", size: 50 }))["total"]).toBe(visible.length);
        expect((await s.ok("get_due_reviews", { limit: 50 }))["due_count"]).toBe(
          own.filter((n) => n.tags.includes("#review")).length,
        );
        const tagCounts = (await s.ok("list_tags", { limit: 100 }))["tags"] as {
          tag: string;
          count: number;
        }[];
        for (const t of ["#t1", "#t2", "#review"]) {
          expect(tagCounts.find((c) => c.tag === t)?.count ?? 0, t).toBe(
            visible.filter((n) => n.tags.includes(t)).length,
          );
        }

        const before = await snapshot(app);
        const rowsBefore = await allRows(app);
        const written = new Set<string>();
        // The notes a call may name, the same position in both worlds: every note of the world, and
        // those the grant may see (its visible notes and the ones it created).
        const granted = {
          real: visible.map((n) => n.uuid),
          twin: twin.world.filter((n) => inGrant(n, grant, teams)).map((n) => n.uuid),
        };
        for (const call of calls) {
          const pick = (pool: string[]) =>
            call.note === undefined || pool.length === 0 ? nobody() : pool[call.note.i % pool.length]!;
          const argsOf = (id: string) =>
            ["get_note", "find_similar", "grade_review", "update_note", "delete_note"].includes(call.tool)
              ? { ...call.args, note_id: id }
              : call.args;
          const any = call.note?.pool === "any";
          const args = argsOf(pick(any ? world.map((n) => n.uuid) : granted.real));
          const twinArgs = argsOf(pick(any ? twin.world.map((n) => n.uuid) : granted.twin));
          real.clock.advance(1000);
          twin.clock.advance(1000);
          const got = await answer(s, call.tool, args);
          const said = `${call.tool} ${JSON.stringify(args)}`;
          const text = withoutEcho(got, args).toLowerCase();
          for (const h of hidden) expect(text, `${said} holds ${h}`).not.toContain(h);
          expect(real.named(got), `${said}: not as in the world without the notes outside the grant`).toBe(
            twin.named(await answer(twin.s, call.tool, twinArgs)),
          );
          const structured = (JSON.parse(got) as { structured?: Record<string, unknown> }).structured ?? {};
          for (const f of (structured["folders"] as { name: string }[] | undefined) ?? [])
            expect([...folders], `list_folders shows ${f.name}`).toContain(f.name);
          for (const item of (structured["items"] as { folder?: string }[] | undefined) ?? [])
            if (item.folder !== undefined) expect([...folders]).toContain(item.folder);
          const ok = !JSON.parse(got).isError;
          if (ok && (call.tool === "create_note" || call.tool === "update_note"))
            written.add(structured["id"] as string);
          if (ok && call.tool === "create_note") {
            granted.real.push(structured["id"] as string);
            granted.twin.push(twin.lastCreated());
          }
          if (ok && call.tool === "delete_note") written.delete(args["note_id"] as string);
        }

        const after = await snapshot(app);
        for (const n of outside) expect(after.get(n.uuid), `${n.name} changed`).toBe(before.get(n.uuid));
        for (const n of visible.filter((v) => v.owner !== grant.user))
          expect(after.get(n.uuid), `shared ${n.name} changed`).toBe(before.get(n.uuid));
        // Read-only: not a row of any table, derived data (vectors) included.
        if (!grant.scopes.includes("notes:write")) expect(await allRows(app)).toEqual(rowsBefore);
        // What the grant wrote, it can still read: nothing it writes lands outside its boundary.
        for (const id of written)
          expect((await s.outcome("get_note", { note_id: id })).isError, id).toBe(false);
      } finally {
        for (const at of [real, twin]) {
          await at.s.close();
          await at.app.close();
        }
      }
    }),
    { numRuns: RUNS, ...(process.env["DEXI_PROPERTY_NO_SHRINK"] ? { endOnFailure: true } : {}) },
  );
});
