import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TestApp as App } from "./helpers.js";
import { connect, items, type Session, testApp, userId } from "./helpers.js";

let app: App;
let ann: Session;

beforeEach(async () => {
  app = await testApp();
  ann = await connect(app, "ann");
});
afterEach(async () => {
  await ann.close();
  await app.close();
});

async function viewer(name: string) {
  return { userId: await userId(app, name), scopes: [] };
}

async function note(s: Session, title: string, text: string, folder?: string): Promise<string> {
  const n = await s.ok("create_note", { title, text });
  if (folder) await app.notes.file(await viewer("ann"), n["id"] as string, folder);
  return n["id"] as string;
}

describe("team sharing", () => {
  it("shows a teammate's shared note read-only with shared + owner, and hides unshared ones", async () => {
    const team = await app.store.accounts.createTeam("crew", Date.now());
    const bob = await connect(app, "bob");
    const eve = await connect(app, "eve");
    await app.store.accounts.setTeam(await userId(app, "ann"), team.id);
    await app.store.accounts.setTeam(await userId(app, "bob"), team.id);
    const shared = await note(ann, "Shared plan", "roadmap #plan");
    const secret = await note(ann, "Private diary", "roadmap thoughts #plan");
    await app.notes.share(await viewer("ann"), shared, true);

    const seen = items(await bob.ok("search_notes", { query: "roadmap" }));
    expect(seen.map((i) => i.id)).toEqual([shared]);
    expect(seen[0]).toMatchObject({ shared: true, owner: "ann" });
    expect(seen[0]).not.toHaveProperty("folder");
    const full = await bob.ok("get_note", { note_id: shared });
    expect(full).toMatchObject({ shared: true, owner: "ann", text: "roadmap #plan" });
    expect((await bob.fails("get_note", { note_id: secret })).message).toBe("Note not found");
    expect((await bob.ok("list_tags", {}))["tags"]).toEqual([{ tag: "#plan", count: 1 }]);
    // Read-only: no update, no delete.
    const upd = await bob.fails("update_note", { note_id: shared, text: "mine now" });
    expect(upd.reason).toBe("READ_ONLY");
    expect(upd.message).toBe("Note is read-only: it belongs to ann and is shared with your team");
    expect((await bob.fails("delete_note", { note_id: shared })).reason).toBe("READ_ONLY");
    expect((await ann.ok("get_note", { note_id: shared }))["text"]).toBe("roadmap #plan");
    // The owner sees it as their own (no shared/owner keys); an outsider sees nothing.
    expect(await ann.ok("get_note", { note_id: shared })).not.toHaveProperty("shared");
    expect((await eve.fails("get_note", { note_id: shared })).message).toBe("Note not found");
    // Shared notes are not counted in the reader's folders and are not review cards for them.
    expect(await bob.ok("list_folders", {})).toEqual({ folders: [], unfiled_count: 0 });
    // Unsharing hides it again.
    await app.notes.share(await viewer("ann"), shared, false);
    expect((await bob.fails("get_note", { note_id: shared })).message).toBe("Note not found");
    await bob.close();
    await eve.close();
  });
});

describe("restricted connections", () => {
  let work: string;
  let workTagged: string;
  let home: string;
  let homeTagged: string;
  let unfiledTagged: string;

  beforeEach(async () => {
    work = await note(ann, "Work plan", "quarterly roadmap @maria #plan", "Work");
    workTagged = await note(ann, "Work secret", "roadmap budget #secret #review", "Work");
    home = await note(ann, "Home plan", "garden roadmap #garden", "Home");
    homeTagged = await note(ann, "Home secret", "roadmap gift #secret", "Home");
    unfiledTagged = await note(ann, "Loose secret", "roadmap idea #secret @zed #review");
  });

  it("a folder restriction sees only that folder: reads, lists, tags, folders", async () => {
    const r = await connect(app, "ann", { restriction: { folder: "work" } });
    expect(
      items(await r.ok("search_notes", { query: "roadmap", size: 50 }))
        .map((i) => i.id)
        .sort(),
    ).toEqual([work, workTagged].sort());
    expect((await r.ok("list_notes", {}))["total"]).toBe(2);
    expect((await r.fails("get_note", { note_id: home })).message).toBe("Note not found");
    expect(await r.ok("list_folders", {})).toEqual({
      folders: [{ name: "Work", note_count: 2 }],
      unfiled_count: 0,
    });
    expect(await r.fails("list_notes", { folder: "Home" })).toMatchObject({
      message: "Folder not found: Home",
    });
    expect((await r.ok("list_notes", { folder: "WORK" }))["total"]).toBe(2);
    expect((await r.ok("list_notes", { folder: "unfiled" }))["total"]).toBe(0);
    const tags = (await r.ok("list_tags", {}))["tags"] as { tag: string }[];
    expect(tags.map((t) => t.tag).sort()).toEqual(["#plan", "#review", "#secret"]);
    expect((await r.ok("list_tags", { kind: "mention" }))["tags"]).toEqual([{ tag: "@maria", count: 1 }]);
    const sem = items(await r.ok("semantic_search", { query: "roadmap", size: 50 }));
    expect(sem.map((i) => i.id).sort()).toEqual([work, workTagged].sort());
    const sim = items(await r.ok("find_similar", { note_id: work, size: 50 }));
    expect(sim.map((i) => i.id)).toEqual([workTagged]);
    expect((await r.fails("find_similar", { note_id: home })).message).toBe("Note not found");
    await r.close();
  });

  it("a tag restriction sees only tagged notes; folders without tagged notes never appear", async () => {
    const r = await connect(app, "ann", { restriction: { tag: "secret" } });
    expect(
      items(await r.ok("list_notes", { size: 50 }))
        .map((i) => i.id)
        .sort(),
    ).toEqual([workTagged, homeTagged, unfiledTagged].sort());
    expect(await r.ok("list_folders", {})).toEqual({
      folders: [
        { name: "Home", note_count: 1 },
        { name: "Work", note_count: 1 },
      ],
      unfiled_count: 1,
    });
    const tags = ((await r.ok("list_tags", {}))["tags"] as { tag: string }[]).map((t) => t.tag);
    expect(tags).not.toContain("#plan");
    expect(tags).not.toContain("#garden");
    await app.store.accounts.ensureFolder(await userId(app, "ann"), "Empty");
    expect((await r.fails("list_notes", { folder: "Empty" })).message).toBe("Folder not found: Empty");
    await r.close();
  });

  it("folder + tag together intersect", async () => {
    const r = await connect(app, "ann", { restriction: { folder: "Work", tag: "#secret" } });
    expect(items(await r.ok("list_notes", {})).map((i) => i.id)).toEqual([workTagged]);
    expect(await r.ok("list_folders", {})).toEqual({
      folders: [{ name: "Work", note_count: 1 }],
      unfiled_count: 0,
    });
    await r.close();
  });

  it("an out-of-boundary note answers exactly like a random id, for every tool that takes one", async () => {
    const r = await connect(app, "ann", { restriction: { folder: "Work", tag: "secret" } });
    const calls: [string, (id: string) => Record<string, unknown>][] = [
      ["get_note", (id) => ({ note_id: id })],
      ["find_similar", (id) => ({ note_id: id })],
      ["update_note", (id) => ({ note_id: id, text: "x #secret" })],
      ["delete_note", (id) => ({ note_id: id })],
      ["grade_review", (id) => ({ note_id: id, grade: 3 })],
    ];
    for (const [name, args] of calls) {
      for (const outside of [work, home, homeTagged, unfiledTagged]) {
        expect(await r.fails(name, args(outside)), name).toEqual(await r.fails(name, args(randomUUID())));
      }
    }
    // Nothing changed outside.
    expect((await ann.ok("get_note", { note_id: unfiledTagged }))["text"]).toBe(
      "roadmap idea #secret @zed #review",
    );
    await r.close();
  });

  it("excludes teammates' shared notes inside a boundary", async () => {
    const team = await app.store.accounts.createTeam("t", Date.now());
    const bob = await connect(app, "bob");
    await app.store.accounts.setTeam(await userId(app, "ann"), team.id);
    await app.store.accounts.setTeam(await userId(app, "bob"), team.id);
    const bobs = (await bob.ok("create_note", { text: "roadmap #secret" }))["id"] as string;
    await app.notes.share(await viewer("bob"), bobs, true);
    expect((await ann.ok("get_note", { note_id: bobs }))["shared"]).toBe(true);
    const r = await connect(app, "ann", { restriction: { tag: "secret" } });
    expect((await r.fails("get_note", { note_id: bobs })).message).toBe("Note not found");
    expect(items(await r.ok("search_notes", { query: "roadmap", size: 50 })).map((i) => i.id)).not.toContain(
      bobs,
    );
    await r.close();
    await bob.close();
  });

  it("create_note files into the folder and appends the tag when missing", async () => {
    const r = await connect(app, "ann", { restriction: { folder: "Projects", tag: "#client" } });
    const a = await r.ok("create_note", { title: "call notes", text: "spoke with @lee" });
    expect(a).toMatchObject({
      text: "spoke with @lee #client",
      tags: ["@lee", "#client"],
      folder: "Projects",
    });
    const b = await r.ok("create_note", { text: "already #CLIENT" });
    expect(b).toMatchObject({ text: "already #CLIENT", folder: "Projects" });
    const c = await r.ok("create_note", {});
    expect(c).toMatchObject({ text: "#client" });
    expect((await r.ok("list_notes", {}))["total"]).toBe(3);
    expect(await ann.ok("list_folders", {})).toMatchObject({
      folders: expect.arrayContaining([{ name: "Projects", note_count: 3 }]),
    });
    await r.close();
  });

  it("update_note refuses to remove the restricted tag and names it; append and tag-keeping edits work", async () => {
    const r = await connect(app, "ann", { restriction: { tag: "secret" } });
    const e = await r.fails("update_note", { note_id: homeTagged, text: "no tag any more" });
    expect(e.reason).toBe("RESTRICTED_TAG");
    expect(e.message).toContain("#secret");
    expect((await r.ok("update_note", { note_id: homeTagged, text: "still #Secret here" }))["text"]).toBe(
      "still #Secret here",
    );
    expect((await r.ok("update_note", { note_id: homeTagged, text: "more", mode: "append" }))["text"]).toBe(
      "still #Secret here\n\nmore",
    );
    expect((await r.ok("update_note", { note_id: homeTagged, title: "renamed" }))["title"]).toBe("renamed");
    await r.close();
  });

  it("deletes only in-boundary notes; review tools cover only in-boundary cards", async () => {
    const r = await connect(app, "ann", { restriction: { folder: "Work" } });
    expect((await ann.ok("get_due_reviews", {}))["due_count"]).toBe(2);
    const due = await r.ok("get_due_reviews", {});
    expect(due["due_count"]).toBe(1);
    expect((due["items"] as { id: string }[]).map((i) => i.id)).toEqual([workTagged]);
    expect((await r.fails("grade_review", { note_id: unfiledTagged, grade: 4 })).message).toBe(
      "Note not found",
    );
    expect((await r.ok("grade_review", { note_id: workTagged, grade: 4 }))["repetitions"]).toBe(1);
    expect((await r.fails("delete_note", { note_id: home })).message).toBe("Note not found");
    expect((await r.ok("delete_note", { note_id: work }))["deleted"]).toBe(true);
    expect((await ann.ok("get_note", { note_id: home }))["title"]).toBe("Home plan");
    await r.close();
  });

  it("a restriction to a folder that does not exist yet sees nothing until it writes there", async () => {
    const r = await connect(app, "ann", { restriction: { folder: "Later" } });
    expect(await r.ok("list_folders", {})).toEqual({ folders: [], unfiled_count: 0 });
    expect((await r.ok("search_notes", { query: "roadmap" }))["total"]).toBe(0);
    expect(items(await r.ok("semantic_search", { query: "roadmap" }))).toEqual([]);
    expect((await r.fails("list_notes", { folder: "Later" })).message).toBe("Folder not found: Later");
    await r.ok("create_note", { text: "first" });
    expect(await r.ok("list_folders", {})).toEqual({
      folders: [{ name: "Later", note_count: 1 }],
      unfiled_count: 0,
    });
    await r.close();
  });
});
