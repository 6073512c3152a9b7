/** `dexi migrate --from <sqlite file> --to <postgres url>`: everything copied, vectors included, and checked. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openApp, openAppAt } from "../src/app.js";
import { mintToken } from "../src/bench/oauth.js";
import { AuthService } from "../src/auth/service.js";
import { HashEmbedder } from "../src/embed/hash.js";
import { runDexi } from "./helpers.js";
import { freshDatabase } from "./postgres-helpers.js";

const ISSUER = "http://127.0.0.1:7";
let dir: string;
let file: string;
let token: string;
let expected: { search: unknown; semantic: unknown; users: unknown };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dexi-migrate-"));
  file = join(dir, "d.db");
  const app = openApp(file, { embedder: new HashEmbedder(), log: () => {} });
  const ann = { userId: (await app.accounts.ensureUser("ann")).id, scopes: [] };
  await app.accounts.joinTeam("crew", "ann");
  await app.accounts.joinTeam("crew", "bob");
  const a = await app.notes.create(ann, { title: "Garden", text: "tomatoes and basil #garden #review" });
  await app.notes.create(ann, { title: "Work", text: "call @lee #work" });
  await app.notes.file(ann, a.id, "Home");
  await app.notes.share(ann, a.id, true);
  await app.store.records.addFeed(ann.userId, "https://example.com/feed.xml", 0);
  await app.store.tombstones.remember(ann.userId, "md:/gone.md", Date.now());
  token = await mintToken(app.store, ISSUER, ann.userId);
  expected = {
    search: await app.notes.search(ann, "tomatoes", 1, 10),
    semantic: await app.notes.semantic(ann, "tomato garden", 5),
    users: await app.accounts.users(),
  };
  await app.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("copies every table, vectors included, verifies the counts, and refuses a database with data", async () => {
  const url = await freshDatabase();
  const r = await runDexi(file, ["migrate", "--from", file, "--to", url]);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(
    /^copied 1 teams, 2 users, 1 folders, 2 notes, 4 note_tags, .*2 embeddings, .*1 import_tombstones, .*1 oauth_clients, 1 oauth_grants, 1 oauth_codes, 2 oauth_tokens; counts and vectors verified \(md5 [0-9a-f]{32}\)\n$/,
  );

  const app = await openAppAt(url, { embedder: new HashEmbedder(), log: () => {} });
  try {
    const ann = { userId: (await app.accounts.ensureUser("ann")).id, scopes: [] };
    expect(await app.notes.search(ann, "tomatoes", 1, 10)).toEqual(expected.search);
    // The vectors came along: nothing to embed again, and semantic answers are the same.
    expect(await app.store.vectors.countMissing(new HashEmbedder().id)).toBe(0);
    expect(await app.notes.semantic(ann, "tomato garden", 5)).toEqual(expected.semantic);
    expect(await app.accounts.users()).toEqual(expected.users);
    expect(await app.store.tombstones.has(ann.userId, "md:/gone.md", 0)).toBe(true);
    // A token issued by the SQLite server still signs in.
    const auth = new AuthService(app.store.auth, { issuer: ISSUER, resource: `${ISSUER}/mcp` });
    expect(await auth.verify(token)).toMatchObject({ userId: ann.userId });
    // New rows take ids after the copied ones.
    const made = await app.notes.create(ann, { title: "After", text: "new" });
    expect((await app.notes.get(ann, made.id)).title).toBe("After");
  } finally {
    await app.close();
  }

  await expect(runDexi(file, ["migrate", "--from", file, "--to", url])).rejects.toThrow(
    "already holds data; migrate into an empty database",
  );
});

it("needs both ends, the target a postgres URL", async () => {
  const r = await runDexi(file, ["migrate", "--from", file]);
  expect([r.code, r.err]).toEqual([2, "dexi: migrate --from FILE --to postgres://...\n"]);
});
