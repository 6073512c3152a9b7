import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { manualClock } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type App, openAppAt } from "../src/app.js";
import { HashEmbedder } from "../src/embed/hash.js";
import { SqliteStore } from "../src/store/index.js";
import { PgStore } from "../src/store/postgres/store.js";
import { answer, build, marker, type NoteSpec, nobody, ownerViewer, snapshot } from "./grant-world.js";
import { connect, type Session, type TestApp, testApp, userId } from "./helpers.js";
import { leaseDatabase, STORE } from "./stores.js";

/**
 * One user against the others of the same dexi, while they share, un-share, join and leave teams:
 * random notes of ann, bob and eve (folders, tags, some shared), random teams, then a random mix of
 * events (an owner sharing or un-sharing a note, a user joining or leaving a team, each through a
 * second connection to the database, as another process) and calls of every tool by bob. After each
 * event, bob sees exactly his own notes and those a team-mate shares in the team both are in now (a
 * share ends when its owner's team changes). Each answer bob receives:
 *  - holds no marker of a note he may not see now;
 *  - is byte for byte the answer he gets in a twin world where every note he may not see now belongs
 *    to zed, a user in no team (the same notes, ids and times; bob's calls made there too);
 *  - changes no row of a note that is not bob's (a refused call changes no row at all).
 */

const OWNERS = ["ann", "bob", "eve"] as const;
const FOLDERS = ["qxfa", "qxfb"] as const;
const TAGS = ["#t1", "#t2", "@m1", "#review"] as const;
const TEAMS = ["crew", "other"] as const;

const noteArb = fc.record({
  owner: fc.constantFrom(...OWNERS),
  folder: fc.option(fc.constantFrom(...FOLDERS), { nil: undefined }),
  tags: fc.subarray([...TAGS]),
  shared: fc.boolean(),
});
const teamArb = fc.constantFrom<string | undefined>(...TEAMS, undefined);

type Ref = { pool: "any" | "seen"; i: number } | undefined;
type Step =
  | { kind: "share"; i: number; on: boolean }
  | { kind: "team"; user: (typeof OWNERS)[number]; team: string | undefined }
  | { kind: "call"; tool: string; args: Record<string, unknown>; note?: Ref };

const noteRef: fc.Arbitrary<Ref> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.record({ pool: fc.constant("any" as const), i: fc.nat(40) }) },
  { weight: 3, arbitrary: fc.record({ pool: fc.constant("seen" as const), i: fc.nat(40) }) },
);
const words = fc.constantFrom("roadmap", "client", "plan", "zebra");
const query = fc.oneof(
  words,
  fc.nat(11).map((i) => `${marker(`n${i}z`)}b`),
);
const text = fc.array(fc.oneof(words, fc.constantFrom(...TAGS)), { maxLength: 4 }).map((w) => w.join(" "));
const call = (tool: string, args: fc.Arbitrary<Record<string, unknown>>, note?: fc.Arbitrary<Ref>) =>
  fc.record({
    kind: fc.constant("call" as const),
    tool: fc.constant(tool),
    args,
    ...(note ? { note } : {}),
  });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("share" as const), i: fc.nat(40), on: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("team" as const),
      user: fc.constantFrom(...OWNERS),
      team: teamArb,
    }),
  },
  {
    weight: 12,
    arbitrary: fc.oneof(
      call(
        "search_notes",
        fc.record({ query, page: fc.integer({ min: 1, max: 2 }), size: fc.integer({ min: 1, max: 4 }) }),
      ),
      call("semantic_search", fc.record({ query, size: fc.integer({ min: 1, max: 4 }) })),
      call(
        "list_notes",
        fc.record(
          {
            size: fc.integer({ min: 1, max: 4 }),
            tag: fc.constantFrom(...TAGS, "m1"),
            folder: fc.constantFrom(...FOLDERS, "unfiled"),
            sort: fc.constantFrom("created", "updated"),
          },
          { requiredKeys: [] },
        ),
      ),
      call(
        "list_tags",
        fc.record({ kind: fc.constantFrom("hashtag", "mention"), limit: fc.integer({ min: 1, max: 4 }) }),
      ),
      call("list_folders", fc.constant({})),
      call("get_due_reviews", fc.record({ limit: fc.integer({ min: 1, max: 4 }) })),
      call("get_note", fc.constant({}), noteRef),
      call("find_similar", fc.record({ size: fc.integer({ min: 1, max: 4 }) }), noteRef),
      call("grade_review", fc.record({ grade: fc.integer({ min: 1, max: 4 }) }), noteRef),
      call("update_note", fc.record({ text, mode: fc.constantFrom("replace", "append") }), noteRef),
      call("delete_note", fc.constant({}), noteRef),
      call("create_note", fc.record({ title: words, text })),
    ),
  },
);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Answers with each note's id as its name; a note the calls made is `new<k>`, in the order seen. */
function namer(placed: { uuid: string; name: string }[]) {
  const names = new Map(placed.map((n) => [n.uuid, n.name]));
  let last = "";
  return {
    named: (s: string) =>
      s.replace(UUID, (id) => {
        if (!names.has(id)) {
          names.set(id, `new${names.size}`);
          last = id;
        }
        return names.get(id)!;
      }),
    last: () => last,
  };
}

/** One SQL statement that writes, on either store. */
async function exec(app: TestApp, sql: string, ...params: unknown[]): Promise<void> {
  if (app.store instanceof SqliteStore) app.store.db.prepare(sql).run(...params);
  else if (app.store instanceof PgStore) await app.store.db.run(sql, params);
  else throw new Error(`no SQL for a ${app.store.kind} store`);
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dexi-team-prop-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A database two apps can open at once: a SQLite file, or a leased PostgreSQL database. */
async function location(): Promise<{ url: string; release(): Promise<void> }> {
  if (STORE === "postgres") return leaseDatabase();
  return { url: join(dir, `team-${files++}.db`), release: async () => {} };
}

const RUNS = Number(process.env["DEXI_PROPERTY_RUNS"] ?? (STORE === "sqlite" ? 60 : 15));

it("bob sees exactly what is shared with his team now, and changes nothing of anyone else's", {
  timeout: 600_000,
}, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(noteArb, { minLength: 1, maxLength: 10 }),
      fc.record({ ann: teamArb, bob: teamArb, eve: teamArb }),
      fc.array(stepArb, { minLength: 1, maxLength: 30 }),
      async (notes, startTeams, steps) => {
        const specs: NoteSpec[] = notes.map((n, i) => ({
          name: `n${i}z`,
          owner: n.owner,
          tags: n.tags,
          shared: n.shared,
          ...(n.folder !== undefined ? { folder: n.folder } : {}),
        }));
        const opts = (clock: ReturnType<typeof manualClock>) => ({
          embedder: new HashEmbedder(),
          log: () => {},
          now: clock.now,
          timeZone: "UTC",
        });
        const clock = manualClock("2026-03-10T12:00:00Z");
        const twinClock = manualClock("2026-03-10T12:00:00Z");
        const db = await location();
        const real: App = await openAppAt(db.url, opts(clock));
        const admin: App = await openAppAt(db.url, opts(clock));
        const twin = await testApp({ now: twinClock.now, timeZone: "UTC" });
        const sessions: Session[] = [];
        try {
          const teams: Record<string, string | undefined> = { ...startTeams };
          const placed = await build(real, specs, teams, () => clock.advance(60_000));
          const twinPlaced = await build(twin, specs, teams, () => twinClock.advance(60_000));
          const zed = await userId(twin, "zed");
          await userId(real, "zed");
          const bob = await connect(real, "bob");
          const twinBob = await connect(twin, "bob");
          sessions.push(bob, twinBob);

          // The model: who is in which team, which notes are shared, which bob deleted.
          const shared = specs.map((n) => n.shared);
          const gone = new Set<number>();
          const visible = (k: number) => {
            const n = specs[k]!;
            if (gone.has(k)) return false;
            if (n.owner === "bob") return true;
            return shared[k]! && teams["bob"] !== undefined && teams[n.owner] === teams["bob"];
          };
          /** The twin: a note bob may not see now is zed's, unshared; the rest as in the real world. */
          const mirror = async () => {
            for (const [k, n] of specs.entries()) {
              if (n.owner === "bob" || gone.has(k)) continue;
              const owner = visible(k) ? await userId(twin, n.owner) : zed;
              await exec(
                twin,
                "UPDATE notes SET user_id = ?, shared = ? WHERE uuid = ?",
                owner,
                visible(k) ? 1 : 0,
                twinPlaced[k]!.uuid,
              );
            }
            for (const u of OWNERS) {
              const team =
                teams[u] === undefined
                  ? null
                  : ((await twin.store.accounts.teamByName(teams[u]!)) ??
                    (await twin.store.accounts.createTeam(teams[u]!, 0)));
              await twin.store.accounts.setTeam(await userId(twin, u), team?.id ?? null);
            }
          };
          await mirror();

          const realNames = namer(placed);
          const twinNames = namer(twinPlaced);
          // Notes bob may name: every note of the world, and the ones he created (same place in both).
          const created: { real: string; twin: string }[] = [];
          const ownedByOthers = () =>
            placed.filter((n, k) => n.owner !== "bob" && !gone.has(k)).map((n) => n.uuid);

          for (const step of steps) {
            clock.advance(1000);
            twinClock.advance(1000);
            if (step.kind === "share") {
              const k = step.i % specs.length;
              const n = specs[k]!;
              if (gone.has(k)) continue;
              await admin.notes.share(await ownerViewer(admin, n.owner), placed[k]!.uuid, step.on);
              shared[k] = step.on;
              await mirror();
              continue;
            }
            if (step.kind === "team") {
              const ended =
                step.team === undefined
                  ? await admin.accounts.leaveTeam(step.user)
                  : (await admin.accounts.joinTeam(step.team, step.user)).unshared;
              if (teams[step.user] !== step.team) {
                // A share is with the team it was made in: it ends when its owner's team changes.
                const were = specs.filter(
                  (n, k) => n.owner === step.user && shared[k] && !gone.has(k),
                ).length;
                expect(ended, `${step.user} moving to ${step.team}`).toBe(were);
                for (const [k, n] of specs.entries()) if (n.owner === step.user) shared[k] = false;
              } else expect(ended).toBe(0);
              teams[step.user] = step.team;
              await mirror();
              continue;
            }

            const seen = {
              real: [
                ...placed.filter((_, k) => visible(k)).map((n) => n.uuid),
                ...created.map((c) => c.real),
              ],
              twin: [
                ...twinPlaced.filter((_, k) => visible(k)).map((n) => n.uuid),
                ...created.map((c) => c.twin),
              ],
            };
            const pick = (pool: string[]) =>
              step.note === undefined || pool.length === 0 ? nobody() : pool[step.note.i % pool.length]!;
            const takesId = [
              "get_note",
              "find_similar",
              "grade_review",
              "update_note",
              "delete_note",
            ].includes(step.tool);
            const any = step.note?.pool === "any";
            const withId = (pool: string[]) => (takesId ? { ...step.args, note_id: pick(pool) } : step.args);
            const args = withId(any ? placed.map((n) => n.uuid) : seen.real);
            const twinArgs = withId(any ? twinPlaced.map((n) => n.uuid) : seen.twin);

            const before = await snapshot(real);
            const got = await answer(bob, step.tool, args);
            const said = `${step.tool} ${JSON.stringify(args)}`;
            const hidden = specs.flatMap((n, k) => (visible(k) || gone.has(k) ? [] : [marker(n.name)]));
            for (const h of hidden) expect(got.toLowerCase(), `${said} holds ${h}`).not.toContain(h);
            expect(
              realNames.named(got),
              `${said}: not as in the world where what bob may not see is zed's`,
            ).toBe(twinNames.named(await answer(twinBob, step.tool, twinArgs)));
            const after = await snapshot(real);
            const failed = (JSON.parse(got) as { isError: boolean }).isError;
            if (failed) expect(after, `${said} failed, yet wrote`).toEqual(before);
            for (const id of ownedByOthers())
              expect(after.get(id), `${said} changed a note not bob's`).toBe(before.get(id));
            for (const [key, row] of before) if (key.startsWith("folder ")) expect(after.get(key)).toBe(row);
            if (!failed && step.tool === "create_note")
              created.push({ real: realNames.last(), twin: twinNames.last() });
            if (!failed && step.tool === "delete_note") {
              const k = placed.findIndex((n) => n.uuid === args["note_id"]);
              if (k >= 0) gone.add(k);
              const c = created.findIndex((n) => n.real === args["note_id"]);
              if (c >= 0) created.splice(c, 1);
            }
          }
        } finally {
          for (const s of sessions) await s.close();
          await real.close();
          await admin.close();
          await twin.close();
          await db.release();
        }
      },
    ),
    { numRuns: RUNS, ...(process.env["DEXI_PROPERTY_NO_SHRINK"] ? { endOnFailure: true } : {}) },
  );
});
