import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { manualClock } from "@mcpforge/toolkit/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type App, openAppAt } from "../src/app.js";
import { Passwords } from "../src/auth/users.js";
import { nameSkeleton, refuseLookalike } from "../src/domain/names.js";
import { HashEmbedder } from "../src/embed/hash.js";
import { allRows, answer, nobody, snapshot } from "./grant-world.js";
import { connect, items, runDexi, type Session, storeRows } from "./helpers.js";
import { freshLocation } from "./stores.js";

/**
 * One user against another of the same dexi, team-mates included: bob is the attacker, ann the owner.
 * bob's MCP server runs on one connection to the database; ann, and the admin, act through `dexi` on
 * another (as another process would), so whatever bob's server keeps in memory (the vector index) is
 * not told of their changes. What bob receives is compared byte for byte with what he received before
 * ann ever shared anything: once a share ends, by un-sharing or by either leaving the team, nothing of
 * the note may remain in any answer, at once.
 */

process.env["DEXI_EMBEDDINGS"] = "hash";
let dir: string;
let db: string;
let app: App;
let bob: Session;
const clock = manualClock("2026-03-10T12:00:00Z");

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dexi-team-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(async () => {
  db = await freshLocation(dir);
  app = await openAppAt(db, { embedder: new HashEmbedder(), log: () => {}, now: clock.now, timeZone: "UTC" });
});
afterEach(async () => {
  await bob?.close();
  await app.close();
});

const dexi = async (...argv: string[]) => {
  const r = await runDexi(db, argv);
  expect(r.err, argv.join(" ")).toBe("");
  return r;
};

/** ann's notes (written through the domain as ann), one to share; bob's own; both in team crew. */
async function world(): Promise<{ secret: string; card: string; other: string; mine: string }> {
  await dexi("users", "add", "ann", "--team", "crew");
  await dexi("users", "add", "bob", "--team", "crew");
  await dexi("users", "add", "eve", "--team", "other");
  const ann = await connect(app, "ann");
  const write = async (s: Session, title: string, text: string) => {
    clock.advance(60_000);
    return (await s.ok("create_note", { title, text }))["id"] as string;
  };
  // The note ann shares: its own words, tags, a folder of hers, a review card of hers.
  const secret = await write(ann, "zanzibar plan", "roadmap zanzibar quokka #alpha @carol #review");
  const card = await write(ann, "ann's card", "roadmap flashcard #review #alpha");
  const other = await write(ann, "other zanzibar", "roadmap zanzibar unshared #alpha");
  await dexi("--user", "ann", "move", secret, "--folder", "Secret plans");
  await ann.close();
  bob = await connect(app, "bob");
  const mine = await write(bob, "bob's plan", "roadmap zanzibar mine #beta #review");
  await write(bob, "bob's other", "quokka roadmap #alpha");
  return { secret, card, other, mine };
}

/** Every read bob can make about the world, and every write aimed at ann's notes. */
function calls(ids: { secret: string; card: string; other: string; mine: string }) {
  const out: [string, Record<string, unknown>][] = [];
  for (const query of ["zanzibar", "roadmap", "quokka", "alpha", "carol", "plan"]) {
    out.push(["search_notes", { query, size: 50 }]);
    out.push(["search_notes", { query, size: 1, page: 2 }]);
    out.push(["semantic_search", { query, size: 50 }]);
    out.push(["semantic_search", { query, size: 1 }]);
  }
  for (const id of [ids.mine, ids.secret, ids.card, ids.other, nobody()]) {
    out.push(["find_similar", { note_id: id, size: 50 }]);
    out.push(["find_similar", { note_id: id, size: 1 }]);
    out.push(["get_note", { note_id: id }]);
  }
  for (const args of [
    {},
    { tag: "#alpha" },
    { tag: "carol" },
    { folder: "Secret plans" },
    { folder: "unfiled" },
    { sort: "updated" },
    { period: "week" },
  ])
    out.push(["list_notes", { size: 50, ...args }]);
  for (const kind of ["hashtag", "mention"]) out.push(["list_tags", { kind, limit: 50 }]);
  out.push(["list_folders", {}]);
  out.push(["get_due_reviews", { limit: 50 }]);
  for (const id of [ids.secret, ids.card, ids.other]) {
    out.push(["grade_review", { note_id: id, grade: 4 }]);
    out.push(["update_note", { note_id: id, text: "mine now" }]);
    out.push(["update_note", { note_id: id, text: "more", mode: "append" }]);
    out.push(["update_note", { note_id: id }]);
    out.push(["delete_note", { note_id: id }]);
  }
  return out;
}

const transcript = async (list: [string, Record<string, unknown>][]) => {
  const out: string[] = [];
  for (const [name, args] of list) out.push(await answer(bob, name, args));
  return out;
};

/** ann's rows: her notes (row, tags, card, vector) and folders, her user row. */
async function annsRows(): Promise<string> {
  const all = await allRows(app);
  const ann = (await storeRows<{ id: number }>(app, "SELECT id FROM users WHERE name = 'ann'"))[0]!.id;
  const notes = new Set(
    (await storeRows<{ id: number }>(app, `SELECT id FROM notes WHERE user_id = ${ann}`)).map((r) => r.id),
  );
  const mine = (row: string) => {
    const r = JSON.parse(row) as Record<string, unknown>;
    return r["user_id"] === ann || notes.has(r["note_id"] as number) || (r["id"] === ann && "team_id" in r);
  };
  return [...all].flatMap(([t, rows]) => rows.filter(mine).map((r) => `${t} ${r}`)).join("\n");
}

describe("a share ends at once, everywhere bob looks", () => {
  it("un-sharing (dexi share --off) gives bob back every byte he had before the share", async () => {
    const ids = await world();
    const list = calls(ids);
    const before = await transcript(list);
    expect(before.join("\n")).not.toContain("quokka #alpha @carol");

    await dexi("--user", "ann", "share", ids.secret);
    const during = await transcript(list);
    // The share shows: searched, by meaning, similar to bob's note, its tags counted, read-only.
    const search = items(await bob.ok("search_notes", { query: "zanzibar", size: 50 }));
    expect(search.map((i) => i.id)).toContain(ids.secret);
    expect(search.find((i) => i.id === ids.secret)).toMatchObject({ shared: true, owner: "ann" });
    expect(search.find((i) => i.id === ids.secret)).not.toHaveProperty("folder");
    const similar = items(await bob.ok("find_similar", { note_id: ids.mine, size: 50 }));
    expect(similar.map((i) => i.id)).toContain(ids.secret);
    expect((await bob.ok("list_tags", { kind: "mention" }))["tags"]).toEqual([{ tag: "@carol", count: 1 }]);
    expect(during).not.toEqual(before);

    await dexi("--user", "ann", "share", ids.secret, "--off");
    expect(await transcript(list)).toEqual(before);
  });

  it("bob leaving the team, or ann leaving it, gives bob back every byte he had before the share", async () => {
    const ids = await world();
    const list = calls(ids);
    await dexi("teams", "leave", "bob");
    const alone = await transcript(list);
    await dexi("teams", "join", "crew", "bob");
    const before = await transcript(list);
    expect(before).toEqual(alone);

    await dexi("--user", "ann", "share", ids.secret);
    expect(await transcript(list)).not.toEqual(before);
    await dexi("teams", "leave", "bob");
    expect(await transcript(list)).toEqual(before);

    await dexi("teams", "join", "crew", "bob");
    await dexi("--user", "ann", "share", ids.secret);
    expect(await transcript(list)).not.toEqual(before);
    await dexi("teams", "leave", "ann");
    expect(await transcript(list)).toEqual(before);
  });

  it("a share is with the team it was made in: ann moving to another team ends it", async () => {
    const ids = await world();
    const eve = await connect(app, "eve");
    try {
      const eveBefore = await answer(eve, "search_notes", { query: "zanzibar" });
      const list = calls(ids);
      const before = await transcript(list);
      await dexi("--user", "ann", "share", ids.secret);
      await dexi("--user", "ann", "share", ids.card);
      expect((await dexi("teams", "join", "other", "ann")).out).toBe(
        "ann joined other; 2 shared notes are no longer shared (share again with other)\n",
      );
      // eve's team was never shared with; bob's team is left.
      expect(await answer(eve, "search_notes", { query: "zanzibar" })).toBe(eveBefore);
      expect((await eve.fails("get_note", { note_id: ids.secret })).message).toBe("Note not found");
      expect(await transcript(list)).toEqual(before);
      // Coming back is not sharing again: ann shares in the team she is in.
      expect((await dexi("teams", "join", "crew", "ann")).out).toBe("ann joined crew\n");
      expect(await transcript(list)).toEqual(before);
      await dexi("--user", "ann", "share", ids.secret);
      expect((await bob.ok("get_note", { note_id: ids.secret }))["shared"]).toBe(true);
      // Joining the team she is in ends nothing; leaving it ends her share.
      expect((await dexi("teams", "join", "CREW", "ann")).out).toBe("ann joined crew\n");
      expect((await dexi("teams", "leave", "ann")).out).toBe(
        "ann left their team; 1 shared note is no longer shared\n",
      );
    } finally {
      await eve.close();
    }
  });
});

describe("bob changes nothing of ann's", () => {
  it("no tool, shared or not, nor bob's own writes and settings, changes a row of ann's", async () => {
    const ids = await world();
    await dexi("--user", "ann", "share", ids.secret);
    await dexi("--user", "ann", "share", ids.card);
    const before = await annsRows();
    // What is compared: her notes, their tags, cards and vectors, her folder.
    for (const held of ['"title":"zanzibar plan"', '"tag":"@carol"', '"reviews":0', '"name":"Secret plans"'])
      expect(before).toContain(held);
    const snap = await snapshot(app);
    for (const [name, args] of calls(ids)) {
      const r = await bob.outcome(name, args);
      if (name === "grade_review" || name === "update_note" || name === "delete_note")
        expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
    }
    // Shared notes are read-only, by the README's reasons; a card of ann's is not bob's to grade.
    expect((await bob.fails("update_note", { note_id: ids.secret, text: "x" })).reason).toBe("READ_ONLY");
    expect((await bob.fails("delete_note", { note_id: ids.card })).reason).toBe("READ_ONLY");
    expect((await bob.fails("grade_review", { note_id: ids.card, grade: 1 })).reason).toBe("NOT_IN_REVIEW");
    // bob writing ann's tags, her folder's name, and a deck holding her tags.
    await bob.ok("create_note", { title: "Secret plans", text: "#alpha @carol #review Secret plans" });
    await bob.ok("update_note", { note_id: ids.mine, text: "#alpha #review", mode: "append" });
    await dexi("--user", "bob", "settings", "--review-tags", "#review,#alpha");
    // The admin CLI as bob: ann's notes are read-only (shared) or not found (not shared).
    for (const id of [ids.secret, ids.other]) {
      for (const argv of [
        ["share", id, "--off"],
        ["move", id, "--folder", "Mine"],
        ["move", id, "--unfiled"],
      ]) {
        const r = await runDexi(db, ["--user", "bob", ...argv]);
        expect(r.code, argv.join(" ")).toBe(id === ids.secret ? 4 : 3);
      }
    }
    expect(await annsRows()).toBe(before);
    // bob's queue holds bob's cards only, none of ann's shared ones.
    const due = (await bob.ok("get_due_reviews", { limit: 50 }))["items"] as { id: string }[];
    expect(due.map((c) => c.id)).not.toContain(ids.card);
    expect(due.map((c) => c.id)).not.toContain(ids.secret);
    expect((await snapshot(app)).get(ids.card)).toBe(snap.get(ids.card));
  });
});

describe("a name's skeleton (Unicode's confusables)", () => {
  it("is one for letters and digits that look alike, in any case, and differs otherwise", () => {
    const same = [
      ["ann", "\u0430nn", "ANN", "\u0391NN"],
      ["marm", "rnarrn", "MARM"],
      ["lil", "1i1", "IiI"],
      ["bob", "b0b", "BOB", "b\u03bfb"], // a Greek omicron
    ];
    for (const group of same)
      for (const name of group) expect(nameSkeleton(name), name).toBe(nameSkeleton(group[0]!));
    expect(nameSkeleton("ann")).not.toBe(nameSkeleton("anne"));
    // The same name as the store compares it (created meanwhile by another call) is no look-alike
    expect(() => refuseLookalike("user", "ann", ["ANN", "bob"])).not.toThrow();
    expect(() => refuseLookalike("user", "\u0430nn", ["ann"])).toThrow(/looks like the existing user "ann"/);
    expect(nameSkeleton("bob")).not.toBe(nameSkeleton("rob"));
  });
});

describe("a name that looks like ann's is ann's, or refused", () => {
  const users = async () => (await dexi("users")).out.split("\n").filter(Boolean).length;

  it("spaces, Unicode forms, case beyond ASCII and look-alike letters never make a second ann", async () => {
    const ids = await world();
    expect(await users()).toBe(3);
    // Each is refused as the name of a new user, with what it collides with.
    for (const [name, why] of [
      ["ann ", "user ann already exists"],
      ["\u0430nn", 'user "\u0430nn" looks like the existing user "ann"'], // Cyrillic а
      ["АNN", 'user "АNN" looks like the existing user "ann"'], // Cyrillic А, Latin NN
      ["b0b", 'user "b0b" looks like the existing user "bob"'], // a digit zero
    ]) {
      const r = await runDexi(db, ["users", "add", name!]);
      expect([r.code, r.err], JSON.stringify(name)).toEqual([2, `dexi: ${why}\n`]);
    }
    await dexi("users", "add", "Jos\u00e9");
    const nfd = await runDexi(db, ["users", "add", "Jose\u0301"]);
    expect([nfd.code, nfd.err]).toEqual([2, "dexi: user Jos\u00e9 already exists\n"]);
    await dexi("users", "add", "\u00c9lodie");
    const lower = await runDexi(db, ["users", "add", "\u00e9lodie"]);
    expect([lower.code, lower.err]).toEqual([
      2,
      'dexi: user "\u00e9lodie" looks like the existing user "\u00c9lodie"\n',
    ]);
    // A control or invisible formatting character (a right-to-left override, a tab) is no name.
    for (const name of ["a\u202Enna", "ann\u200B", "a\tb"]) {
      const r = await runDexi(db, ["users", "add", name]);
      expect(r.code, JSON.stringify(name)).toBe(2);
      expect(r.err).toContain("control or invisible character");
    }
    expect(await users()).toBe(5);

    // Where a user is created on first use (--user, teams join), such a name is ann herself, or refused.
    expect((await dexi("--user", " ann ", "share", ids.secret)).out).toContain("shared");
    expect((await dexi("teams", "join", "crew ", "Jose\u0301")).out).toBe("Jos\u00e9 joined crew\n");
    const look = await runDexi(db, ["teams", "join", "crew", "\u0430nn"]);
    expect([look.code, look.err]).toEqual([2, 'dexi: user "\u0430nn" looks like the existing user "ann"\n']);
    const team = await runDexi(db, ["teams", "join", "\u0441rew", "bob"]); // Cyrillic с
    expect([team.code, team.err]).toEqual([
      2,
      'dexi: team "\u0441rew" looks like the existing team "crew"\n',
    ]);
    expect(await users()).toBe(5);
    expect((await dexi("teams")).out).toBe("crew\tann, bob, Jos\u00e9\nother\teve\n");
    // The sign-in page takes the name as it is kept too.
    const pw = "correct horse battery";
    expect((await runDexi(db, ["users", "password", "Jose\u0301 "], pw)).code).toBe(0);
    const passwords = new Passwords(app.store.accounts, app.store.auth);
    const jose = (await app.store.accounts.userByName("Jos\u00e9"))!.id;
    expect(await passwords.check(" Jose\u0301", pw)).toBe(jose);
    expect(await passwords.check("\u0430nn", pw)).toBeUndefined();
  });
});
