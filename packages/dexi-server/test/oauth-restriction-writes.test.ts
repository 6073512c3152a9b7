import { connectHttp } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp as App } from "./helpers.js";
import { type Session, sessionOf, testApp, userId } from "./helpers.js";
import { type HttpRestricted, restrictedOverHttp } from "./oauth-helpers.js";

/** The write rules of a restricted connection hold for an OAuth grant's boundary too, in both eras. */

let app: App;
let http: HttpRestricted;
beforeAll(async () => {
  app = await testApp();
  http = await restrictedOverHttp(app);
});
afterAll(async () => {
  await http.close();
  await app.close();
});

describe.each(["legacy", "modern"] as const)("%s era", (era) => {
  let s: Session;
  beforeAll(async () => {
    s = sessionOf(
      await connectHttp(http.mcpUrl, await http.tokenFor("ann", { folder: "Work", tag: "#client" }), { era }),
    );
  });
  afterAll(async () => s.close());

  it("files a new note into the boundary folder and appends the boundary tag", async () => {
    const n = await s.ok("create_note", { title: `t ${era}`, text: "Call back" });
    expect(n).toMatchObject({ folder: "Work", tags: ["#client"] });
    expect(n["text"]).toBe("Call back #client");
  });

  it("refuses an update that drops the boundary tag, naming it", async () => {
    const n = await s.ok("create_note", { title: `u ${era}`, text: "x #client" });
    const r = await s.outcome("update_note", { note_id: n["id"], text: "no tag now", mode: "replace" });
    expect(r.isError).toBe(true);
    expect(r.structured["error"]).toMatchObject({ reason: "RESTRICTED_TAG" });
  });

  it("treats an out-of-boundary note as missing", async () => {
    const outside = await app.notes.create(
      {
        userId: await userId(app, "ann"),
        scopes: ["notes:read", "notes:write"],
      },
      { title: "Private", text: "diary #me" },
    );
    const got = await s.outcome("get_note", { note_id: outside.id });
    expect(got.isError).toBe(true);
    expect(JSON.stringify(got.structured)).toContain("Note not found");
  });
});
