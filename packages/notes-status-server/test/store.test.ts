import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../src/store/migrations.js";
import { migrate, openDatabase } from "../src/store/db.js";
import { testApp } from "./helpers.js";

describe("the SQLite store", () => {
  it("migrates a fresh database to the last version, once", () => {
    const db = openDatabase(":memory:");
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    expect(migrate(db)).toBe(MIGRATIONS.length);
    db.close();
  });

  it("refuses a database from a newer version", () => {
    const db = new Database(":memory:");
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    expect(() => migrate(db)).toThrow(/newer than this program knows/);
    db.close();
  });

  it("keeps the trigger-maintained counts equal to the real ones through every kind of change", async () => {
    const app = testApp();
    app.queue.setPlan({ timeZone: "UTC", slots: { monday: ["10:00"], tuesday: ["10:00"] } });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const status = (["draft", "ready", "evergreen"] as const)[i % 3];
      ids.push(app.notes.create({ content: `n${i}`, tags: [`t${i % 4}`, `u${i % 2}`], status }).id);
    }
    app.notes.update(ids[0]!, { status: "ready", tags: ["t9"] });
    app.notes.update(ids[1]!, { tags: [] });
    app.notes.schedule([{ id: ids[3]! }, { id: ids[4]!, scheduledAt: "2026-03-02T09:00:00Z" }]);
    app.notes.unschedule(ids[3]!, "draft");
    app.notes.delete(ids[5]!);
    app.notes.delete(ids[8]!);
    app.time.set("2026-03-02T09:00:00Z");
    await app.scheduler.publishDue();
    app.notes.update(ids[4]!, { status: "evergreen" });

    const real = app.db
      .prepare(
        `SELECT '' AS tag, '' AS status, count(*) AS n FROM notes
         UNION ALL SELECT '', status, count(*) FROM notes GROUP BY status
         UNION ALL SELECT tag, '', count(*) FROM note_tags GROUP BY tag
         UNION ALL SELECT tag, status, count(*) FROM note_tags GROUP BY tag, status`,
      )
      .all();
    const kept = app.db.prepare(`SELECT tag, status, n FROM note_counts WHERE n > 0`).all();
    const key = (r: unknown) => JSON.stringify(r);
    expect(kept.map(key).sort()).toEqual(real.map(key).sort());
    expect(app.notes.list({}, 50, 0).total).toBe(28);
    expect(app.notes.list({ status: "published" }, 50, 0).total).toBe(0);
    expect(app.notes.list({ status: "evergreen" }, 50, 0).total).toBe(
      app.notes.list({ status: "evergreen" }, 50, 0).items.length,
    );
    await app.close();
  });
});
