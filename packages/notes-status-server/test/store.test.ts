import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../src/store/migrations.js";
import { migrate, openDatabase } from "../src/store/db.js";
import { tempDir, testApp } from "./helpers.js";

describe("the SQLite store", () => {
  it("migrates a fresh database to the last version, once", async () => {
    const db = openDatabase(":memory:");
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    expect(migrate(db)).toBe(MIGRATIONS.length);
    db.close();
  });

  it("refuses a database from a newer version", async () => {
    const db = new Database(":memory:");
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    expect(() => migrate(db)).toThrow(/newer than this program knows/);
    db.close();
  });

  it("upgrades a version 3 database through the rebuilds of notes, keeping every row, tag, count and reference", async () => {
    const dir = tempDir("notes-migrate");
    try {
      const path = join(dir.path, "v3.db");
      const old = new Database(path);
      old.pragma("foreign_keys = ON");
      for (const sql of MIGRATIONS.slice(0, 3)) old.exec(sql);
      old.pragma("user_version = 3");
      const insert = old.prepare(
        `INSERT INTO notes (id, content, tags, status, scheduled_at, created_at, updated_at, source_note_id,
           attempts, last_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const tag = old.prepare(`INSERT INTO note_tags (note_id, tag, status, created_at) VALUES (?, ?, ?, ?)`);
      const at = "2026-03-01T00:00:00.000Z";
      insert.run("src", "source", '["x"]', "evergreen", null, at, at, null, 0, null);
      insert.run(
        "copy",
        "copy",
        '["x","y"]',
        "scheduled",
        "2026-03-02T09:00:00.000Z",
        at,
        at,
        "src",
        3,
        "down",
      );
      tag.run("src", "x", "evergreen", at);
      tag.run("copy", "x", "scheduled", at);
      tag.run("copy", "y", "scheduled", at);
      old.close();

      const db = openDatabase(path);
      expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(
        db
          .prepare(
            `SELECT id, status, source_note_id, attempts, last_error, failed_runs FROM notes ORDER BY id`,
          )
          .all(),
      ).toEqual([
        {
          id: "copy",
          status: "scheduled",
          source_note_id: "src",
          attempts: 3,
          last_error: "down",
          failed_runs: 0,
        },
        {
          id: "src",
          status: "evergreen",
          source_note_id: null,
          attempts: 0,
          last_error: null,
          failed_runs: 0,
        },
      ]);
      expect(db.prepare(`SELECT count(*) FROM note_tags`).pluck().get()).toBe(3);
      expect(db.prepare(`SELECT n FROM note_counts WHERE tag = '' AND status = ''`).pluck().get()).toBe(2);
      // The rebuilt table's CHECK holds the specification's five statuses, and its count triggers and
      // references work again.
      expect(() => db.prepare(`UPDATE notes SET status = 'failed' WHERE id = 'copy'`).run()).toThrow(/CHECK/);
      db.prepare(`UPDATE notes SET status = 'draft' WHERE id = 'copy'`).run();
      expect(db.prepare(`SELECT n FROM note_counts WHERE tag = '' AND status = 'draft'`).pluck().get()).toBe(
        1,
      );
      db.prepare(`DELETE FROM notes WHERE id = 'src'`).run();
      expect(db.prepare(`SELECT source_note_id FROM notes WHERE id = 'copy'`).pluck().get()).toBeNull();
      db.prepare(`DELETE FROM note_tags WHERE note_id = 'copy'`).run();
      db.prepare(`DELETE FROM notes WHERE id = 'copy'`).run();
      expect(db.prepare(`SELECT count(*) FROM note_tags`).pluck().get()).toBe(0);
      expect(db.prepare(`SELECT n FROM note_counts WHERE tag = '' AND status = ''`).pluck().get()).toBe(0);
      const names = db
        .prepare(`SELECT name FROM sqlite_master WHERE tbl_name = 'notes' AND type IN ('index', 'trigger')`)
        .pluck()
        .all();
      expect(names).toEqual(
        expect.arrayContaining([
          "notes_by_created",
          "notes_by_status",
          "notes_scheduled",
          "notes_restack_due",
          "notes_by_source",
          "notes_count_insert",
          "notes_count_delete",
          "notes_count_status",
        ]),
      );
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      db.close();
    } finally {
      dir.cleanup();
    }
  });

  it("upgrades a version 5 database's failed notes to drafts off the queue, their last error kept", async () => {
    const dir = tempDir("notes-migrate-failed");
    try {
      const path = join(dir.path, "v5.db");
      const old = new Database(path);
      old.pragma("foreign_keys = ON");
      for (const sql of MIGRATIONS.slice(0, 5)) old.exec(sql);
      old.pragma("user_version = 5");
      const insert = old.prepare(
        `INSERT INTO notes (id, content, tags, status, scheduled_at, created_at, updated_at, attempts,
           last_error, last_attempt_at, failed_runs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const tag = old.prepare(`INSERT INTO note_tags (note_id, tag, status, created_at) VALUES (?, ?, ?, ?)`);
      const at = "2026-03-01T00:00:00.000Z";
      insert.run(
        "gaveup",
        "gave up",
        '["news","x"]',
        "failed",
        "2026-03-01T09:00:00.000Z",
        at,
        at,
        8,
        "HTTP 503",
        at,
        8,
      );
      insert.run(
        "waiting",
        "waiting",
        '["news"]',
        "scheduled",
        "2026-03-09T09:00:00.000Z",
        at,
        at,
        0,
        null,
        null,
        0,
      );
      insert.run("idea", "idea", "[]", "draft", null, at, at, 0, null, null, 0);
      tag.run("gaveup", "news", "failed", at);
      tag.run("gaveup", "x", "failed", at);
      tag.run("waiting", "news", "scheduled", at);
      old.close();

      const db = openDatabase(path);
      expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      expect(
        db
          .prepare(
            `SELECT id, status, scheduled_at, attempts, last_error, failed_runs FROM notes ORDER BY id`,
          )
          .all(),
      ).toEqual([
        {
          id: "gaveup",
          status: "draft",
          scheduled_at: null,
          attempts: 8,
          last_error: "HTTP 503",
          failed_runs: 8,
        },
        { id: "idea", status: "draft", scheduled_at: null, attempts: 0, last_error: null, failed_runs: 0 },
        {
          id: "waiting",
          status: "scheduled",
          scheduled_at: "2026-03-09T09:00:00.000Z",
          attempts: 0,
          last_error: null,
          failed_runs: 0,
        },
      ]);
      expect(
        db.prepare(`SELECT DISTINCT status FROM note_tags WHERE note_id = 'gaveup'`).pluck().all(),
      ).toEqual(["draft"]);
      const real = db
        .prepare(
          `SELECT '' AS tag, '' AS status, count(*) AS n FROM notes
           UNION ALL SELECT '', status, count(*) FROM notes GROUP BY status
           UNION ALL SELECT tag, '', count(*) FROM note_tags GROUP BY tag
           UNION ALL SELECT tag, status, count(*) FROM note_tags GROUP BY tag, status`,
        )
        .all();
      const kept = db.prepare(`SELECT tag, status, n FROM note_counts WHERE n > 0`).all();
      const key = (r: unknown) => JSON.stringify(r);
      expect(kept.map(key).sort()).toEqual(real.map(key).sort());
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");

      // What the tools show: a draft among the drafts, its last error in get_note, off the queue.
      const app = await testApp("2026-03-02T08:00:00.000Z", db);
      expect((await app.notes.list({ status: "draft" }, 50, 0)).items.map((n) => n.id).sort()).toEqual([
        "gaveup",
        "idea",
      ]);
      expect((await app.notes.list({ status: "draft", tag: "news" }, 50, 0)).total).toBe(1);
      expect(await app.notes.get("gaveup")).toMatchObject({
        status: "draft",
        attempts: 8,
        lastError: "HTTP 503",
      });
      await app.close();
      db.close();
    } finally {
      dir.cleanup();
    }
  });

  it("keeps the trigger-maintained counts equal to the real ones through every kind of change", async () => {
    const db = openDatabase(":memory:");
    const app = await testApp(undefined, db);
    await app.queue.setPlan({ timeZone: "UTC", slots: { monday: ["10:00"], tuesday: ["10:00"] } });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const status = (["draft", "ready", "evergreen"] as const)[i % 3];
      ids.push((await app.notes.create({ content: `n${i}`, tags: [`t${i % 4}`, `u${i % 2}`], status })).id);
    }
    await app.notes.update(ids[0]!, { status: "ready", tags: ["t9"] });
    await app.notes.update(ids[1]!, { tags: [] });
    await app.notes.schedule([{ id: ids[3]! }, { id: ids[4]!, scheduledAt: "2026-03-02T09:00:00Z" }]);
    await app.notes.unschedule(ids[3]!, "draft");
    await app.notes.delete(ids[5]!);
    await app.notes.delete(ids[8]!);
    app.time.set("2026-03-02T09:00:00Z");
    await app.scheduler.publishDue();
    await app.notes.update(ids[4]!, { status: "evergreen" });

    const real = db
      .prepare(
        `SELECT '' AS tag, '' AS status, count(*) AS n FROM notes
         UNION ALL SELECT '', status, count(*) FROM notes GROUP BY status
         UNION ALL SELECT tag, '', count(*) FROM note_tags GROUP BY tag
         UNION ALL SELECT tag, status, count(*) FROM note_tags GROUP BY tag, status`,
      )
      .all();
    const kept = db.prepare(`SELECT tag, status, n FROM note_counts WHERE n > 0`).all();
    const key = (r: unknown) => JSON.stringify(r);
    expect(kept.map(key).sort()).toEqual(real.map(key).sort());
    expect((await app.notes.list({}, 50, 0)).total).toBe(28);
    expect((await app.notes.list({ status: "published" }, 50, 0)).total).toBe(0);
    expect((await app.notes.list({ status: "evergreen" }, 50, 0)).total).toBe(
      (await app.notes.list({ status: "evergreen" }, 50, 0)).items.length,
    );
    await app.close();
    db.close();
  });
});
