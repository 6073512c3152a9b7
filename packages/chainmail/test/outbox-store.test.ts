/** The outbox's storage and keys: the appended migrations over an existing state.db, and derived keys. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_WINDOW_MS } from "../src/limits.js";
import { deriveKey, outboxOf } from "../src/outbox/index.js";
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

describe("the outbox's 7-day window", () => {
  const DAY = 24 * 3600 * 1000;
  const open = () => new StateDb(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cm-win-")), "state.db"));
  const row = (key: string, status: "pending" | "sent" | "held", ageMs: number) => ({
    key,
    account: "work",
    tool: "send_email",
    message_id: `<${key}@example.com>`,
    status,
    created: new Date(Date.now() - ageMs).toISOString(),
  });

  it("is seven days", () => {
    expect(IDEMPOTENCY_WINDOW_MS).toBe(7 * DAY);
  });

  it("replays a send recorded within 7 days as duplicate, and lets one older than that send again", async () => {
    const db = open();
    try {
      const outbox = outboxOf(db);
      outbox.store.begin(row("recent", "sent", 7 * DAY - 60_000));
      outbox.store.begin(row("old", "sent", 7 * DAY + 60_000));
      let sends = 0;
      type R = { status: "sent" | "held" };
      const send = async (): Promise<R> => {
        sends++;
        return { status: "sent" };
      };
      expect(await outbox.exclusive("recent", "recent", send)).toEqual({
        status: "duplicate",
        original_status: "sent",
        idempotency_key: "recent",
      });
      expect(sends).toBe(0);
      expect(await outbox.exclusive("old", "old", send)).toEqual({ status: "sent" });
      expect(sends).toBe(1);
      // The expired row is gone, so the new send's own begin() can commit its intent.
      expect(outbox.store.get("old")).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it("hands a hold back to be judged again, and keeps an unconfirmed send unconfirmed past the window", async () => {
    const db = open();
    try {
      const outbox = outboxOf(db);
      outbox.store.begin(row("held", "held", DAY));
      outbox.store.finish("held", "held", { status: "held", draft_ref: "m1.x" });
      outbox.store.begin(row("pending", "pending", 30 * DAY));
      const never = async () => {
        throw new Error("must not send");
      };
      const judged = async (held: { result: string | null } | undefined) =>
        JSON.parse(held?.result ?? "{}") as unknown;
      expect(await outbox.exclusive("held", "held", judged)).toEqual({ status: "held", draft_ref: "m1.x" });
      expect(outbox.store.retake("held", "<new@example.com>", new Date().toISOString())).toBe(true);
      expect(outbox.store.get("held")).toMatchObject({ status: "pending", message_id: "<new@example.com>" });
      await expect(outbox.exclusive("pending", "pending", never)).rejects.toMatchObject({
        reason: "SEND_UNCONFIRMED",
        hint: expect.stringContaining("chainmail outbox confirm pending"),
      });
    } finally {
      db.close();
    }
  });

  it("refuses a key reused for a different input with CONFLICT, and replays the same input", async () => {
    const db = open();
    try {
      const outbox = outboxOf(db);
      outbox.store.begin({ ...row("k", "sent", DAY), fingerprint: "d1.first" });
      const never = async () => ({ status: "sent" as const });
      await expect(outbox.exclusive("k", "d1.other", never)).rejects.toMatchObject({ reason: "CONFLICT" });
      expect(await outbox.exclusive("k", "d1.first", never)).toMatchObject({ status: "duplicate" });
    } finally {
      db.close();
    }
  });
});
