import { afterEach, describe, expect, it } from "vitest";
import { viewerResolver } from "../src/app.js";
import type { TestApp as App } from "./helpers.js";
import { parseMcpFlags } from "../src/config.js";
import { checkRestriction, InvalidRestriction } from "../src/domain/access.js";
import { connect, items, memoryApp } from "./helpers.js";

const flags = (args: string[], env: Record<string, string> = {}) => parseMcpFlags(args, { ...env });

describe("the server's grant", () => {
  it("an empty scope list grants nothing, from env or flag; unset means both scopes", () => {
    expect(flags([]).scopes).toEqual(["notes:read", "notes:write"]);
    expect(flags([], { DEXI_SCOPES: "" }).scopes).toEqual([]);
    expect(flags([], { DEXI_SCOPES: " , " }).scopes).toEqual([]);
    expect(flags(["--scopes", ""]).scopes).toEqual([]);
    expect(flags(["--scopes="]).scopes).toEqual([]);
    expect(flags(["--scopes", "notes:read"], { DEXI_SCOPES: "" }).scopes).toEqual(["notes:read"]);
    expect(() => flags(["--scopes"])).toThrow("--scopes needs a value");
  });
});

describe("a restriction is checked where it is given", () => {
  const refused: [string, string][] = [
    [
      "work.notes",
      'Restriction tag "#work.notes" is not one tag: Dexi reads it as #work (a hashtag ends at ".")',
    ],
    ["#c++", 'Restriction tag "#c++" is not one tag: Dexi reads it as #c (a hashtag ends at "+")'],
    ["#idea.", 'Restriction tag "#idea." is not one tag: Dexi reads it as #idea (a hashtag ends at ".")'],
    [
      "#2024",
      'Restriction tag "#2024" is not one tag: Dexi reads it as no tag at all (a tag needs at least one letter)',
    ],
    [
      "##work",
      'Restriction tag "##work" is not one tag: Dexi reads it as no tag at all (a hashtag ends at "#")',
    ],
    [
      `#${"a".repeat(65)}`,
      `Restriction tag "#${"a".repeat(65)}" is not one tag: Dexi reads it as no tag at all (a tag holds at most 64 characters after its sign)`,
    ],
    [
      "work notes",
      'Restriction tag "#work notes" is not one tag: Dexi reads it as #work (a hashtag ends at a space)',
    ],
    [
      "#",
      'Restriction tag "#" is not one tag: Dexi reads it as no tag at all (a tag needs a name after its sign)',
    ],
  ];

  it("refuses a tag Dexi's parser would read as another tag or none, naming it and why", () => {
    for (const [tag, message] of refused) {
      expect(() => checkRestriction({ tag }), tag).toThrow(new InvalidRestriction(message));
      expect(() => flags(["--tag", tag]), tag).toThrow(message);
      expect(() => flags([], { DEXI_TAG: tag }), tag).toThrow(message);
    }
  });

  it("keeps a tag that round-trips, as the parser stores it", () => {
    expect(checkRestriction({ tag: "Work" })).toEqual({ tag: "#work" });
    expect(checkRestriction({ tag: " #Été-2024 " })).toEqual({ tag: "#été-2024" });
    expect(checkRestriction({ tag: "@ada.lovelace" })).toEqual({ tag: "@ada.lovelace" });
    expect(checkRestriction({ tag: `#${"a".repeat(64)}` })).toEqual({ tag: `#${"a".repeat(64)}` });
    expect(flags(["--tag", "#Work", "--folder", "  Clients "])).toMatchObject({
      tag: "#work",
      folder: "Clients",
    });
  });

  it("refuses the folder unfiled and an empty folder; trims folder names", () => {
    const unfiled =
      'Restriction folder "Unfiled" is not a folder name: list_notes reads "unfiled" as notes in no folder, so no call could name it';
    expect(() => flags(["--folder", "Unfiled"])).toThrow(unfiled);
    expect(() => flags([], { DEXI_FOLDER: " unfiled " })).toThrow('Restriction folder "unfiled"');
    expect(() => flags(["--folder", "   "])).toThrow("Restriction folder is empty");
    expect(flags(["--folder", " Work "]).folder).toBe("Work");
  });
});

describe("a connection restricted by flags", () => {
  let app: App;
  afterEach(async () => {
    await app.close();
  });

  it("never starts with a tag its own notes could not carry", async () => {
    app = memoryApp();
    expect(() => viewerResolver(app, { user: "ann", scopes: [], tag: "work.notes" })).toThrow(
      'Restriction tag "#work.notes" is not one tag',
    );
    expect(() => viewerResolver(app, { user: "ann", scopes: [], folder: "unfiled" })).toThrow(
      InvalidRestriction,
    );
    const viewer = await viewerResolver(app, { user: "ann", scopes: [], folder: " Work ", tag: "Client" })(
      [],
    );
    expect(viewer.restriction).toEqual({ folder: "Work", tag: "#client" });
  });

  it("sees every note it writes (the tag round-trips through create_note)", async () => {
    app = memoryApp();
    const restriction = (
      await viewerResolver(app, { user: "ann", scopes: [], folder: " Work ", tag: "#Client-2" })([])
    ).restriction!;
    const s = await connect(app, "ann", { restriction });
    const n = await s.ok("create_note", { title: "call", text: "spoke with lee" });
    expect(n).toMatchObject({ text: "spoke with lee #client-2", tags: ["#client-2"], folder: "Work" });
    expect(items(await s.ok("list_notes", {})).map((i) => i.id)).toEqual([n["id"]]);
    expect((await s.ok("list_notes", { folder: " work " }))["total"]).toBe(1);
    await s.close();
  });
});

describe("the server's time zone", () => {
  it("takes --time-zone or DEXI_TIME_ZONE in the zone's own spelling; refuses an unknown zone", () => {
    expect(flags([]).timeZone).toBeUndefined();
    expect(flags(["--time-zone", "europe/berlin"]).timeZone).toBe("Europe/Berlin");
    expect(flags([], { DEXI_TIME_ZONE: "Asia/Tokyo" }).timeZone).toBe("Asia/Tokyo");
    expect(flags(["--time-zone=UTC"], { DEXI_TIME_ZONE: "Asia/Tokyo" }).timeZone).toBe("UTC");
    expect(() => flags(["--time-zone", "Mars/Olympus"])).toThrow('unknown time zone "Mars/Olympus"');
  });
});
