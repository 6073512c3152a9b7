/** The outbox's storage and keys: the appended migrations over an existing state.db, and derived keys. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { deriveKey } from "../src/outbox/index.js";
import { StateDb } from "../src/store/state.js";

describe("state.db migrations for sending", () => {
  it("keeps the audit rows of a database from before them and accepts the held and duplicate decisions", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cm-mig-")), "state.db");
    const old = new Database(file);
    old.exec(`CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL,
      client TEXT NOT NULL CHECK (client IN ('cli','mcp')), action TEXT NOT NULL, account TEXT,
      decision TEXT NOT NULL CHECK (decision IN ('allowed','denied','error')), summary TEXT NOT NULL);
      INSERT INTO audit (time, client, action, account, decision, summary) VALUES ('2026-01-01T00:00:00.000Z', 'cli', 'move', 'a', 'allowed', 'old row');`);
    old.pragma("user_version = 1");
    old.close();
    const db = new StateDb(file);
    db.audit({ client: "mcp", action: "send", account: "a", decision: "held", summary: "h" });
    db.audit({ client: "mcp", action: "send", account: "a", decision: "duplicate", summary: "d" });
    expect(db.readAudit({}).map((r) => [r.id, r.decision, r.summary])).toEqual([
      [3, "duplicate", "d"],
      [2, "held", "h"],
      [1, "allowed", "old row"],
    ]);
    expect(() =>
      db.audit({ client: "mcp", action: "x", account: null, decision: "nope" as "held", summary: "" }),
    ).toThrow();
    db.close();
  });
});

describe("derived idempotency keys", () => {
  it("ignore absent, empty and false values and key order, and change with the tool, input or file content", () => {
    const a = deriveKey("send_email", { to: ["b@x"], subject: "s", cc: [], no_signature: false, body: "" }, [
      "h1",
    ]);
    expect(a).toMatch(/^d1\.[0-9a-f]{64}$/);
    expect(deriveKey("send_email", { subject: "s", to: ["b@x"] }, ["h1"])).toBe(a);
    expect(deriveKey("reply", { subject: "s", to: ["b@x"] }, ["h1"])).not.toBe(a);
    expect(deriveKey("send_email", { subject: "t", to: ["b@x"] }, ["h1"])).not.toBe(a);
    expect(deriveKey("send_email", { subject: "s", to: ["b@x"] }, ["h2"])).not.toBe(a);
  });
});
