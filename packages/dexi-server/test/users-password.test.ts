import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Passwords } from "../src/auth/users.js";
import { checkPublicUrl } from "../src/config.js";
import { runDexi } from "./helpers.js";
import { freshLocation, withStoreAt } from "./stores.js";

let dir: string;
let db: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dexi-users-"));
  db = await freshLocation(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const check = (name: string, password: string) =>
  withStoreAt(db, (s) => new Passwords(s.accounts, s.auth).check(name, password));

it("dexi users add --password-stdin stores an scrypt hash that signs in, and only with that password", async () => {
  const r = await runDexi(db, ["users", "add", "ann", "--password-stdin"], "first password!\n");
  expect(r).toEqual({ code: 0, out: "added user ann with a password\n", err: "" });
  const stored = await withStoreAt(db, async (s) =>
    s.auth.password((await s.accounts.userByName("ann"))!.id),
  );
  expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
  expect(stored).not.toContain("first password!");
  expect(await check("ann", "first password!")).toBeGreaterThan(0);
  expect(await check("ann", "first password")).toBeUndefined();
  expect(await check("nobody", "first password!")).toBeUndefined();
});

it("dexi users password changes it; the old one stops working", async () => {
  const r = await runDexi(db, ["users", "password", "ann"], "second password\n");
  expect(r).toEqual({ code: 0, out: "password of ann changed\n", err: "" });
  expect(await check("ann", "first password!")).toBeUndefined();
  expect(await check("ann", "second password")).toBeGreaterThan(0);
});

it("refuses a short password (and adds no user), and an unknown user", async () => {
  const short = await runDexi(db, ["users", "add", "bob", "--password-stdin"], "short\n");
  expect(short).toEqual({
    code: 2,
    out: "",
    err: "dexi: password refused: a password needs at least 10 characters\n",
  });
  expect(await withStoreAt(db, (s) => s.accounts.userByName("bob"))).toBeUndefined();
  const unknown = await runDexi(db, ["users", "password", "zed"], "long enough pw\n");
  expect(unknown).toEqual({ code: 2, out: "", err: 'dexi: no user "zed"\n' });
});

it("--public-url takes an https origin, or http only on loopback, never a path", () => {
  expect(checkPublicUrl("https://notes.example.org/")).toBe("https://notes.example.org");
  expect(checkPublicUrl("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
  expect(() => checkPublicUrl("http://notes.example.org")).toThrow(
    '--public-url must be https (or http on 127.0.0.1/localhost); got "http://notes.example.org"',
  );
  expect(() => checkPublicUrl("https://notes.example.org/dexi")).toThrow("--public-url is an origin only");
});
