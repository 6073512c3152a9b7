/**
 * A store that refuses audit inserts (a trigger, another process's write lock) never turns a
 * successful call into an error: the row waits in memory and lands, with its own time, once the
 * store takes writes again.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StateDb } from "../src/store/state.js";
import { generateCorpus } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const corpus = generateCorpus({ hugeBytes: 0, threads: 1, fillers: 4 });

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    corpus.map((m) => ({ raw: m.raw })),
  );
});
afterAll(async () => {
  await env?.stop();
});

const REFUSE = `CREATE TRIGGER audit_refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'audit refused'); END;`;

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("audit inserts the store refuses", () => {
  it("leave the operation's success alone; the rows land once the table takes inserts again", async () => {
    const other = new Database(env.home.dbFile);
    const rows = await env.client.search({ query: "", accounts: ["work"], limit: 10 });
    const ref = rows.rows[0]!.ref;
    other.exec(REFUSE);
    const before = new Date().toISOString();
    const flagged = await env.client.setFlags({ refs: [ref], add: ["flagged"] });
    expect(flagged).toMatchObject({ succeeded: 1, failed: 0 });
    const read = await env.client.getMessages({ refs: [ref] });
    expect(read.messages[0]!.flags).toContain("flagged");
    // A failed call stays the error it was, not an audit failure.
    await expect(env.client.move({ refs: [ref], folder: "Nope" })).rejects.toMatchObject({
      reason: "NOT_FOUND",
    });
    expect((await env.client.readAudit({ since: before })).rows).toEqual([]);

    other.exec("DROP TRIGGER audit_refuse");
    const landed = await waitFor("the delayed rows", async () => {
      const r = (await env.client.readAudit({ since: before })).rows;
      return r.length >= 3 ? r : undefined;
    });
    expect(landed.map((r) => [r.action, r.decision])).toEqual([
      ["move", "error"],
      ["get", "allowed"],
      ["flags", "allowed"],
    ]);
    // Each row keeps the time of its call, not of the retry that wrote it.
    expect(landed.every((r) => r.time >= before && r.time <= new Date().toISOString())).toBe(true);
    other.close();
  });

  it("survive another process holding the write lock", async () => {
    const other = new Database(env.home.dbFile);
    const rows = await env.client.search({ query: "", accounts: ["work"], limit: 10 });
    const ref = rows.rows[1]!.ref;
    // The search's own row can carry this very millisecond; start counting after it.
    // The search's own audit row can carry the same millisecond as a time taken right after it.
    await new Promise((r) => setTimeout(r, 5));
    const before = new Date().toISOString();
    other.exec("BEGIN IMMEDIATE");
    const got = await env.client.getMessages({ refs: [ref] });
    expect(got.messages).toHaveLength(1);
    const inTable = other.prepare("SELECT count(*) AS n FROM audit WHERE time >= ?").get(before);
    expect(inTable).toEqual({ n: 0 });
    other.exec("COMMIT");
    const landed = await waitFor("the delayed row", async () => {
      const r = (await env.client.readAudit({ action: "get", since: before })).rows;
      return r.length ? r : undefined;
    });
    expect(landed).toHaveLength(1);
    expect(landed[0]).toMatchObject({ action: "get", decision: "allowed", account: "work" });
    other.close();
  });
});

describe("StateDb's pending audit rows", () => {
  it("are bounded (the oldest go first), logged, and written in order by the retry", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cm-audit-")), "state.db");
    const log: string[] = [];
    const db = new StateDb(file, { log: (l) => log.push(l), maxPendingAudit: 3 });
    const other = new Database(file);
    other.exec(REFUSE);
    for (let i = 1; i <= 5; i++) {
      const written = db.audit({
        client: "cli",
        action: `a${i}`,
        account: null,
        decision: "allowed",
        summary: "",
      });
      expect(written).toBe(false);
    }
    expect(db.pendingAudit()).toBe(3);
    expect(log.some((l) => l.includes("oldest are dropped"))).toBe(true);
    expect(log.filter((l) => l.includes("failed, keeping it to retry"))).toHaveLength(5);
    other.exec("DROP TRIGGER audit_refuse");
    // The timer writes them without any further call.
    await waitFor("the retry", async () => (db.pendingAudit() === 0 ? true : undefined));
    const actions = other.prepare("SELECT action FROM audit ORDER BY id").all() as Array<{ action: string }>;
    expect(actions.map((r) => r.action)).toEqual(["a3", "a4", "a5"]);
    expect(log.some((l) => l.includes("wrote 3 delayed row(s); 2 row(s) were dropped"))).toBe(true);
    // A row that can never be stored is a bug and still throws.
    expect(() =>
      db.audit({ client: "web" as "cli", action: "x", account: null, decision: "allowed", summary: "" }),
    ).toThrow();
    other.close();
    db.close();
  });
});
