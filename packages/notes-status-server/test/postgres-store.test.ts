/**
 * What only the PostgreSQL store has: its own migrations, instances racing on one database (the
 * scheduler publishes each due note exactly once), the bin naming its store, and `migrate` from a
 * SQLite file. Runs in the postgres project only; everything else runs on both stores.
 */
import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { manualClock } from "@mcpforge/toolkit/testing";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createNotesApp, type NotesApp } from "../src/app.js";
import type { PublishEvent } from "../src/domain/publishers/types.js";
import { describeStore } from "../src/store/open.js";
import { PG_MIGRATIONS } from "../src/store/pg-migrations.js";
import { migratePostgres, openPostgres } from "../src/store/postgres.js";
import { freshStore, inspectStore, RecordingPublisher, tempDir, testApp } from "./helpers.js";

const run = promisify(execFile);
const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));

describe("the PostgreSQL store's migrations", () => {
  it("migrates a fresh database to the last version once, also with instances starting together", async () => {
    const url = await freshStore();
    const opened = await Promise.all([openPostgres(url), openPostgres(url), openPostgres(url)]);
    const check = await inspectStore(url);
    try {
      const rows = await check.all<{ version: number }>(
        `SELECT version FROM notes_status_schema ORDER BY version`,
      );
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
    } finally {
      await check.close();
      for (const repo of opened) await repo.close();
    }
  });

  it("refuses a database from a newer version", async () => {
    const url = await freshStore();
    const pool = new pg.Pool({ connectionString: url });
    try {
      await migratePostgres(pool);
      await pool.query(`INSERT INTO notes_status_schema (version) VALUES ($1)`, [PG_MIGRATIONS.length + 1]);
      await expect(migratePostgres(pool)).rejects.toThrow(/newer than this program knows/);
      await expect(openPostgres(url)).rejects.toThrow(/newer than this program knows/);
    } finally {
      await pool.end();
    }
  });

  it("upgrades a version 2 database's failed notes to drafts off the queue, their last error kept", async () => {
    const url = await freshStore();
    const pool = new pg.Pool({ connectionString: url });
    try {
      await pool.query(`CREATE TABLE notes_status_schema (version INTEGER NOT NULL)`);
      for (const [i, sql] of PG_MIGRATIONS.slice(0, 2).entries()) {
        await pool.query(sql);
        await pool.query(`INSERT INTO notes_status_schema (version) VALUES ($1)`, [i + 1]);
      }
      const at = "2026-03-01T00:00:00.000Z";
      const insert = `INSERT INTO notes (id, content, tags, status, scheduled_at, created_at, updated_at,
        attempts, last_error, failed_runs) VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9)`;
      await pool.query(insert, [
        "gaveup",
        "gave up",
        '["news"]',
        "failed",
        "2026-03-01T09:00:00.000Z",
        at,
        8,
        "HTTP 503",
        8,
      ]);
      await pool.query(insert, [
        "waiting",
        "waiting",
        '["news"]',
        "scheduled",
        "2026-03-09T09:00:00.000Z",
        at,
        0,
        null,
        0,
      ]);
      const tag = `INSERT INTO note_tags (note_id, tag, status, created_at) VALUES ($1, $2, $3, $4)`;
      await pool.query(tag, ["gaveup", "news", "failed", at]);
      await pool.query(tag, ["waiting", "news", "scheduled", at]);

      expect(await migratePostgres(pool)).toBe(PG_MIGRATIONS.length);
      const notes = await pool.query(
        `SELECT id, status, scheduled_at, attempts, last_error, failed_runs FROM notes ORDER BY id`,
      );
      expect(notes.rows).toEqual([
        {
          id: "gaveup",
          status: "draft",
          scheduled_at: null,
          attempts: 8,
          last_error: "HTTP 503",
          failed_runs: 8,
        },
        {
          id: "waiting",
          status: "scheduled",
          scheduled_at: "2026-03-09T09:00:00.000Z",
          attempts: 0,
          last_error: null,
          failed_runs: 0,
        },
      ]);
      const counts = await pool.query(
        `SELECT tag, status, n FROM note_counts WHERE n <> 0 ORDER BY tag, status`,
      );
      expect(counts.rows).toEqual([
        { tag: "", status: "", n: 2 },
        { tag: "", status: "draft", n: 1 },
        { tag: "", status: "scheduled", n: 1 },
        { tag: "news", status: "", n: 2 },
        { tag: "news", status: "draft", n: 1 },
        { tag: "news", status: "scheduled", n: 1 },
      ]);
      await expect(pool.query(`UPDATE notes SET status = 'failed' WHERE id = 'gaveup'`)).rejects.toThrow(
        /check/i,
      );
    } finally {
      await pool.end();
    }
    const app = await testApp(undefined, url);
    try {
      expect(await app.notes.get("gaveup")).toMatchObject({
        status: "draft",
        attempts: 8,
        lastError: "HTTP 503",
      });
      expect((await app.notes.list({ status: "draft", tag: "news" }, 50, 0)).total).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("keeps the trigger-maintained counts equal to the real ones", async () => {
    const url = await freshStore();
    const app = await testApp(undefined, url);
    await app.queue.setPlan({ timeZone: "UTC", slots: { monday: ["10:00"] } });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const status = (["draft", "ready", "evergreen"] as const)[i % 3];
      ids.push((await app.notes.create({ content: `n${i}`, tags: [`t${i % 4}`, `u${i % 2}`], status })).id);
    }
    await app.notes.update(ids[0]!, { status: "ready", tags: ["t9"] });
    await app.notes.schedule([{ id: ids[1]! }, { id: ids[4]!, scheduledAt: "2026-03-02T09:00:00Z" }]);
    await app.notes.delete(ids[5]!);
    app.time.set("2026-03-02T09:00:00Z");
    await app.scheduler.publishDue();
    await app.close();
    const check = await inspectStore(url);
    try {
      const real = await check.all(
        `SELECT '' AS tag, '' AS status, count(*)::int AS n FROM notes
         UNION ALL SELECT '', status, count(*)::int FROM notes GROUP BY status
         UNION ALL SELECT tag, '', count(*)::int FROM note_tags GROUP BY tag
         UNION ALL SELECT tag, status, count(*)::int FROM note_tags GROUP BY tag, status`,
      );
      const kept = await check.all(`SELECT tag, status, n FROM note_counts WHERE n > 0`);
      const key = (r: unknown) => JSON.stringify(r);
      expect(kept.map(key).sort()).toEqual(real.map(key).sort());
    } finally {
      await check.close();
    }
  });
});

describe("instances sharing one PostgreSQL database", () => {
  it("publishes each due note exactly once with two schedulers racing, over many rounds", async () => {
    const url = await freshStore();
    const time = manualClock("2026-03-02T08:00:00Z");
    // Each publisher takes a few random milliseconds, so the two runs overlap differently every round.
    const jittery = () => {
      const p = new RecordingPublisher();
      const publish = p.publish.bind(p);
      p.publish = async (e: PublishEvent) => {
        await new Promise((r) => setTimeout(r, Math.random() * 4));
        return publish(e);
      };
      return p;
    };
    const pubA = jittery();
    const pubB = jittery();
    const a = await createNotesApp({ db: url, clock: time.date, publisher: pubA });
    const b = await createNotesApp({ db: url, clock: time.date, publisher: pubB });
    const ROUNDS = 40;
    const PER_ROUND = 8;
    const due: string[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const at = new Date(time.now() + 60_000).toISOString();
        for (let i = 0; i < PER_ROUND; i++) {
          // Written through either instance: the other sees it at once.
          const writer = i % 2 ? a : b;
          const id = (await writer.notes.create({ content: `r${round} n${i}`, status: "ready" })).id;
          await writer.notes.schedule([{ id, scheduledAt: at }]);
          due.push(id);
        }
        time.set(at);
        const [ra, rb] = await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
        expect([...ra.published, ...rb.published].length).toBe(PER_ROUND);
        time.advance(60_000);
      }
      const sent = [...pubA.events, ...pubB.events].map((e) => e.note.id);
      expect(sent.length).toBe(ROUNDS * PER_ROUND);
      expect(new Set(sent).size).toBe(sent.length); // 0 double publishes
      expect(new Set(sent)).toEqual(new Set(due));
      // The race was real: both instances published notes.
      expect(pubA.events.length).toBeGreaterThan(0);
      expect(pubB.events.length).toBeGreaterThan(0);
      for (const id of due.slice(0, 10)) expect((await a.notes.get(id)).status).toBe("published");
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});

describe("the bin on PostgreSQL", () => {
  it("names the store it uses on stderr, without the password", async () => {
    const url = await freshStore();
    const child = spawn(process.execPath, [CLI, "--db", url, "--no-scheduler"], {
      stdio: ["pipe", "ignore", "pipe"],
    });
    let err = "";
    const line = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
        const found = err.split("\n").find((l) => l.includes("store "));
        if (found) resolve(found);
      });
      child.once("exit", (c) => reject(new Error(`exited ${c}: ${err}`)));
    });
    child.kill();
    expect(line).toContain("store postgresql postgres://");
    expect(describeStore("postgres://me:secret@db.example:5432/notes")).toBe(
      "postgresql postgres://me:***@db.example:5432/notes",
    );
    expect(describeStore("/data/notes.db")).toBe("sqlite /data/notes.db");
  });
});

describe("notes-status migrate --from <sqlite> --to <postgres>", () => {
  /** A SQLite store with every kind of row: statuses, tags, a failed note, recycled copies, a plan. */
  async function sqliteWithEverything(path: string): Promise<NotesApp> {
    const time = manualClock("2026-03-02T08:00:00Z");
    const publisher = new RecordingPublisher();
    const app = await createNotesApp({
      db: path,
      clock: time.date,
      publisher,
      scheduler: { giveUpAfter: 2 },
    });
    await app.queue.setPlan({
      timeZone: "Europe/Berlin",
      slots: { monday: ["09:00", "17:00"], tuesday: ["09:00"] },
      evergreenHorizonHours: 48,
      evergreenMinGapDays: 0,
    });
    for (let i = 0; i < 30; i++) {
      const status = (["draft", "ready", "evergreen"] as const)[i % 3];
      await app.notes.create({
        content: `note ${i} ✓`,
        tags: [`t${i % 5}`, "all"],
        status,
        autoRestackAfterHours: i % 4 ? null : 2,
      });
      time.advance(1000);
    }
    const ready = (await app.notes.list({ status: "ready" }, 50, 0)).items.map((n) => n.id);
    await app.notes.schedule(ready.slice(0, 4).map((id) => ({ id, scheduledAt: "2026-03-02T08:30:00Z" })));
    time.set("2026-03-02T08:31:00Z");
    await app.scheduler.tick(); // publishes, and recycles evergreen copies into the free slots
    publisher.failing = "down";
    await app.notes.schedule([{ id: ready[4]!, scheduledAt: "2026-03-02T08:40:00Z" }]);
    time.set("2026-03-02T09:00:00Z");
    await app.scheduler.publishDue();
    time.set("2026-03-02T11:00:00Z");
    await app.scheduler.publishDue(); // the second failed run: gives up, a draft again
    return app;
  }

  it("copies every note, tag, setting and slot, verifies the counts, and reads back the same", async () => {
    const dir = tempDir("notes-migrate-pg");
    try {
      const file = join(dir.path, "notes.db");
      const source = await sqliteWithEverything(file);
      const all = (await source.notes.list({}, 50, 0)).items;
      const details = await Promise.all(all.map((n) => source.notes.get(n.id)));
      expect(details.some((n) => n.status === "draft" && n.lastError === "down")).toBe(true);
      expect(details.some((n) => n.sourceNoteId !== null)).toBe(true);
      const plan = await source.queue.plan();
      const tags = await source.notes.tags();
      const queue = await source.queue.queue({ days: 7, includeFreeSlots: true, limit: 100 });
      await source.close();

      const url = await freshStore();
      const { stdout } = await run(process.execPath, [CLI, "migrate", "--from", file, "--to", url]);
      const report = JSON.parse(stdout) as Record<string, number>;
      expect(report).toMatchObject({ notes: all.length, slots: 3, settings: 1 });
      expect(report["tags"]).toBe(details.reduce((n, d) => n + d.tags.length, 0));
      expect(report["counts"]).toBeGreaterThan(10);

      const time = manualClock("2026-03-02T11:00:00Z");
      const copy = await createNotesApp({ db: url, clock: time.date, publisher: new RecordingPublisher() });
      try {
        expect(copy.repo.kind).toBe("postgresql");
        expect((await copy.notes.list({}, 50, 0)).items).toEqual(all);
        for (const d of details) expect(await copy.notes.get(d.id)).toEqual(d);
        expect(await copy.queue.plan()).toEqual(plan);
        expect(await copy.notes.tags()).toEqual(tags);
        expect(await copy.queue.queue({ days: 7, includeFreeSlots: true, limit: 100 })).toEqual(queue);
        // The kept counts go on counting after the copy.
        await copy.notes.create({ content: "after the move", tags: ["all"], status: "ready" });
        expect((await copy.notes.list({}, 50, 0)).total).toBe(all.length + 1);
        expect((await copy.notes.list({ tag: "all", status: "ready" }, 50, 0)).total).toBe(
          details.filter((d) => d.status === "ready" && d.tags.includes("all")).length + 1,
        );
      } finally {
        await copy.close();
      }

      // A second copy into the same database is refused and changes nothing.
      const again = run(process.execPath, [CLI, "migrate", "--from", file, "--to", url]);
      await expect(again).rejects.toThrow(/already has notes/);
      const check = await inspectStore(url);
      try {
        const [n] = await check.all<{ n: string }>(`SELECT count(*) AS n FROM notes`);
        expect(Number(n?.n)).toBe(all.length + 1); // the copy and the note written after it
      } finally {
        await check.close();
      }
    } finally {
      dir.cleanup();
    }
  });

  it("refuses arguments that are not a SQLite file and a PostgreSQL URL", async () => {
    const url = await freshStore();
    const fails = (args: string[]) => run(process.execPath, [CLI, "migrate", ...args]);
    await expect(fails(["--to", url])).rejects.toThrow(
      /migrate needs --from <sqlite file> and --to <postgres url>/,
    );
    await expect(fails(["--from", url, "--to", url])).rejects.toThrow(/copies a SQLite file/);
    await expect(fails(["--from", "/nonexistent/x.db", "--to", url])).rejects.toThrow(
      /no SQLite database at/,
    );
  });
});
