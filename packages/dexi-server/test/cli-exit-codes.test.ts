import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KIT_REASONS } from "@mcpforge/toolkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEXI_REASONS, DexiError } from "../src/domain/errors.js";
import type { Store } from "../src/store/index.js";
import { runDexi, testApp, userId } from "./helpers.js";
import { freshLocation, openStore, query } from "./stores.js";

// Each admin command, given a bad input, exits with the code its reason declares and changes nothing.
process.env["DEXI_EMBEDDINGS"] = "hash";
const FIX = fileURLToPath(new URL("./fixtures/", import.meta.url));
const INVALID = KIT_REASONS.INVALID_ARGUMENT.exitCode;
const NOT_FOUND = DEXI_REASONS.NOT_FOUND.exitCode;
let dir: string;
let db: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dexi-exit-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(async () => {
  db = await freshLocation(dir);
});

const dexi = (...argv: string[]) => runDexi(db, argv);

/** The test's store through its async port, opened and closed around one look. */
async function withStore<T>(fn: (s: Store) => Promise<T>): Promise<T> {
  const s = await openStore(db);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const firstNote = async () =>
  (await query<{ uuid: string }>(db, "SELECT uuid FROM notes ORDER BY id"))[0]!.uuid;

describe("each dexi command exits with its reason's code", () => {
  it("settings: a bad value is INVALID_ARGUMENT, names its flag, and writes none of the others", async () => {
    await dexi("settings");
    const bad = await dexi("settings", "--plan", "pro", "--embeddings", "bert");
    expect([bad.code, bad.err]).toEqual([
      INVALID,
      'dexi: --embeddings: unknown embeddings provider "bert": use use, openai, hash\n',
    ]);
    const zone = await dexi("settings", "--plan", "pro", "--time-zone", "Mars/Olympus");
    expect([zone.code, zone.err]).toEqual([
      INVALID,
      'dexi: --time-zone: unknown time zone "Mars/Olympus" (use an IANA name such as Europe/Berlin)\n',
    ]);
    expect((await dexi("settings", "--note-cap", "1.5")).code).toBe(INVALID);
    expect(await withStore(async (s) => (await s.accounts.settings(1)).plan)).toBe("unlimited");
    expect(await withStore((s) => s.accounts.config("embeddings.provider"))).toBeUndefined();
  });

  it("users: adding an existing user is INVALID_ARGUMENT", async () => {
    await dexi("users", "add", "bob");
    const again = await dexi("users", "add", "bob", "--team", "crew");
    expect([again.code, again.err]).toEqual([INVALID, "dexi: user bob already exists\n"]);
    expect(await withStore((s) => s.accounts.teamByName("crew"))).toBeUndefined();
  });

  it("teams: a user who does not exist is NOT_FOUND; a team added twice is INVALID_ARGUMENT", async () => {
    const gone = await dexi("teams", "leave", "ghost");
    expect([gone.code, gone.err]).toEqual([NOT_FOUND, "dexi: User not found: ghost\n"]);
    expect(await withStore((s) => s.accounts.userByName("ghost"))).toBeUndefined();
    await dexi("teams", "add", "crew");
    expect((await dexi("teams", "add", "crew")).code).toBe(INVALID);
  });

  it("share: an unknown note is NOT_FOUND, a team-mate's shared note READ_ONLY", async () => {
    const unknown = await dexi("share", "00000000-0000-4000-8000-000000000000");
    expect([unknown.code, unknown.err]).toEqual([NOT_FOUND, "dexi: Note not found\n"]);
    await dexi("teams", "join", "crew", "ann");
    await dexi("teams", "join", "crew", "bob");
    await dexi("--user", "ann", "import", join(FIX, "vault", "Welcome.md"));
    const id = await firstNote();
    await dexi("--user", "ann", "share", id);
    const theirs = await dexi("--user", "bob", "share", id, "--off");
    expect(theirs.code).toBe(DEXI_REASONS.READ_ONLY.exitCode);
    expect(theirs.err).toBe("dexi: Note is read-only: it belongs to ann and is shared with your team\n");
    expect(await withStore(async (s) => (await s.notes.byUuid(id))!.shared)).toBe(1);
  });

  it("move: an unknown note is NOT_FOUND; a blank folder name is INVALID_ARGUMENT", async () => {
    const unknown = await dexi("move", "00000000-0000-4000-8000-000000000000", "--folder", "A");
    expect(unknown.code).toBe(NOT_FOUND);
    await dexi("import", join(FIX, "vault", "Welcome.md"));
    const blank = await dexi("move", await firstNote(), "--folder", "  ");
    expect([blank.code, blank.err]).toEqual([INVALID, "dexi: A folder needs a name\n"]);
    expect(await withStore((s) => s.accounts.folders(1))).toEqual([]);
  });

  it("import: a path that does not exist or an unknown kind is INVALID_ARGUMENT; the cap is LIMIT_REACHED", async () => {
    const missing = await dexi("import", join(dir, "nowhere"));
    expect([missing.code, missing.err]).toEqual([
      INVALID,
      `dexi: no such file or folder: ${join(dir, "nowhere")}\n`,
    ]);
    expect((await dexi("import", join(FIX, "vault"), "--kind", "pdf")).code).toBe(INVALID);
    await dexi("settings", "--note-cap", "1");
    expect((await dexi("import", join(FIX, "vault"), "--no-embed")).code).toBe(
      DEXI_REASONS.LIMIT_REACHED.exitCode,
    );
  });

  it("feeds: a URL that is not http(s) is INVALID_ARGUMENT and subscribes nothing", async () => {
    const bad = await dexi("feeds", "add", "ftp://example.com/feed.xml");
    expect([bad.code, bad.err]).toEqual([
      INVALID,
      "dexi: feeds add: A feed URL starts with http:// or https://: ftp://example.com/feed.xml\n",
    ]);
    expect((await dexi("feeds", "list")).out).toBe("");
  });

  it("a PostgreSQL URL as --db opens PostgreSQL, never a SQLite file named like it", async () => {
    // Port 1 has no server: the connection is refused, and no folder "postgres:" appears.
    await expect(runDexi("postgres://dexi@127.0.0.1:1/dexi", ["users"])).rejects.toThrow(/ECONNREFUSED/);
    expect(existsSync("postgres:")).toBe(false);
  });

  it("reindex: a worker count out of range or a flag of another command is INVALID_ARGUMENT", async () => {
    const workers = await dexi("reindex", "--workers", "99");
    expect([workers.code, workers.err]).toEqual([INVALID, "dexi: --workers takes 1-16\n"]);
    const other = await dexi("reindex", "--prune");
    expect([other.code, other.err]).toEqual([INVALID, "dexi: unknown flag --prune; see --help\n"]);
  });
});

describe("the domain applies its rules whoever calls", () => {
  it("refuses the folder name unfiled, and a blank one, for any caller", async () => {
    const app = await testApp();
    const viewer = { userId: await userId(app, "ann"), scopes: [] };
    const note = await app.notes.create(viewer, { title: "t", text: "x" });
    for (const name of ["Unfiled", " "]) {
      await expect(app.notes.file(viewer, note.id, name), name).rejects.toThrow(DexiError);
    }
    expect(await app.store.accounts.folders(viewer.userId)).toEqual([]);
    await app.close();
  });

  it("refuses a folder name holding U+0000 for any caller, and creates no folder", async () => {
    const app = await testApp();
    const viewer = { userId: await userId(app, "ann"), scopes: [] };
    const note = await app.notes.create(viewer, { title: "t", text: "x" });
    await expect(app.notes.file(viewer, note.id, "Wo\u0000rk")).rejects.toThrow(
      "A folder name cannot hold the character U+0000 (NUL)",
    );
    expect(await app.store.accounts.folders(viewer.userId)).toEqual([]);
    await app.close();
  });

  it("checks review deck tags by the tag rules when settings change", async () => {
    const app = await testApp();
    const id = await userId(app, "ann");
    await expect(app.accounts.updateSettings(id, { reviewTags: ["#c++"] })).rejects.toThrow(
      '"#c++" is not one tag: Dexi reads it as #c (a hashtag ends at "+")',
    );
    expect(await app.accounts.updateSettings(id, { reviewTags: ["Cards", "#cards"] })).toEqual({
      enrolled: 0,
      dropped: 0,
    });
    expect((await app.store.accounts.settings(id)).reviewTags).toEqual(["#cards"]);
    await app.close();
  });
});
