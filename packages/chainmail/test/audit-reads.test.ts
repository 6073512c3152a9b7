/**
 * Reads' audit rows (search, get_message, get_thread) are written once per event-loop turn, all the
 * turn's reads in one transaction: not in the table until the turn ends, in order with writes' rows,
 * at once for a reader of the log and on close, and kept for retry when the store refuses them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StateDb } from "../src/store/state.js";

let dir: string;
let file: string;
let state: StateDb;
let other: Database.Database;
const turn = () => new Promise((r) => setImmediate(r));
const row = (action: string, summary = "s") =>
  ({ client: "mcp", action, account: "work", decision: "allowed", summary }) as const;
const inTable = () => other.prepare("SELECT action, summary FROM audit ORDER BY id").all();

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-audit-reads-"));
  file = path.join(dir, "state.db");
  state = new StateDb(file);
  other = new Database(file);
});
afterEach(() => {
  other.close();
  if (state.db.open) state.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("audit rows of reads", () => {
  it("are written at the end of the turn, every read of the turn in one transaction", async () => {
    let transactions = 0;
    const tx = state.db.transaction.bind(state.db);
    state.db.transaction = ((fn: () => void) => {
      transactions++;
      return tx(fn);
    }) as typeof state.db.transaction;
    state.auditRead(row("search", "a"));
    state.auditRead(row("get", "b"));
    state.auditRead(row("thread", "c"));
    expect(inTable()).toEqual([]);
    await turn();
    expect(inTable()).toEqual([
      { action: "search", summary: "a" },
      { action: "get", summary: "b" },
      { action: "thread", summary: "c" },
    ]);
    expect(transactions).toBe(1);
  });

  it("go before a later write's row, and a reader of the log sees them at once", () => {
    state.auditRead(row("search", "first"));
    state.audit(row("flags", "second"));
    expect(inTable()).toEqual([
      { action: "search", summary: "first" },
      { action: "flags", summary: "second" },
    ]);
    state.auditRead(row("get", "third"));
    expect(state.readAudit({}).map((r) => r.summary)).toEqual(["third", "second", "first"]);
  });

  it("are written on close", () => {
    state.auditRead(row("search", "late"));
    state.close();
    expect(inTable()).toEqual([{ action: "search", summary: "late" }]);
  });

  it("wait in memory while the store refuses them, then land in order", async () => {
    other.exec("CREATE TRIGGER refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'no'); END;");
    state.auditRead(row("search", "1"));
    state.auditRead(row("get", "2"));
    await turn();
    expect(state.pendingAudit()).toBe(2);
    other.exec("DROP TRIGGER refuse");
    state.auditRead(row("search", "3"));
    await turn();
    expect(state.pendingAudit()).toBe(0);
    expect(inTable()).toEqual([
      { action: "search", summary: "1" },
      { action: "get", summary: "2" },
      { action: "search", summary: "3" },
    ]);
  });
});
