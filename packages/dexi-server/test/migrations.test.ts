import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { MIGRATIONS } from "../src/store/migrations.js";
import { SqliteStore } from "../src/store/index.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dexi-migrate-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A database file left at schema `version` by an older dexi, with `seed` run on it. */
function oldDatabase(name: string, version: number, seed: string): string {
  const path = join(dir, name);
  const db = new Database(path);
  for (const m of MIGRATIONS.slice(0, version)) db.exec(m);
  db.pragma(`user_version = ${version}`);
  db.exec(seed);
  db.close();
  return path;
}

it("3: a time zone left at the old default 'UTC' reads as not set; folder names are trimmed", () => {
  const path = oldDatabase(
    "v2.db",
    2,
    `INSERT INTO users (id, name, created_ms) VALUES (1, 'ann', 0);
     INSERT INTO users (id, name, time_zone, created_ms) VALUES (2, 'bob', 'Europe/Berlin', 0);
     INSERT INTO folders (user_id, name, name_key) VALUES (1, ' Work', ' work'), (1, 'Home ', 'home '),
       (1, 'Home', 'home'), (1, ' x', ' x'), (1, 'x ', 'x ');`,
  );
  const store = SqliteStore.open(path);
  expect(store.sync.accounts.settings(1).timeZone).toBeNull();
  expect(store.sync.accounts.settings(2).timeZone).toBe("Europe/Berlin");
  // A name that would collide with another once trimmed keeps its spaces.
  expect(store.sync.accounts.folders(1).map((f) => f.name)).toEqual(["Home", "Home ", "Work", "x", "x "]);
  expect(store.sync.accounts.folderByName(1, "work ")?.name).toBe("Work");
  store.db.close();
});
