/**
 * The attacker's tests of recording a publication: the publisher accepted the note, then the store
 * refuses to write it down (a real trigger in the real store raises on that write, as a full disk, a
 * lost connection or a constraint would), or the process is gone before it could. Counted at the
 * publisher: each note is handed over once, and get_note tells the truth about it.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freshStore, STORE, type TestApp, tempDir, testApp } from "./helpers.js";

const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));
const MIN = 60_000;
const HOUR = 60 * MIN;
const DUE = "2026-03-02T09:00:00.000Z";

type Write = "publication" | "restack";

/**
 * A trigger in the store itself that fails the scheduler's record of a publication (status to
 * published) or of a restack (restacked_at set), until `remove` drops it.
 */
async function failWrites(db: string, write: Write): Promise<{ remove: () => Promise<void> }> {
  const when =
    write === "publication"
      ? "NEW.status = 'published' AND OLD.status <> 'published'"
      : "NEW.restacked_at IS NOT NULL AND OLD.restacked_at IS NULL";
  if (STORE === "sqlite") {
    const run = (sql: string) => {
      const conn = new Database(db);
      try {
        conn.exec(sql);
      } finally {
        conn.close();
      }
    };
    run(`CREATE TRIGGER fail_record BEFORE UPDATE ON notes WHEN ${when}
           BEGIN SELECT RAISE(ABORT, 'injected: disk I/O error'); END`);
    return { remove: async () => run(`DROP TRIGGER fail_record`) };
  }
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE FUNCTION fail_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected: disk I/O error'; END $$;
    CREATE TRIGGER fail_record BEFORE UPDATE ON notes FOR EACH ROW WHEN (${when})
      EXECUTE FUNCTION fail_record();`);
  return { remove: () => run(`DROP TRIGGER fail_record ON notes; DROP FUNCTION fail_record()`) };
}

let dir: ReturnType<typeof tempDir>;
const apps: TestApp[] = [];
beforeEach(() => {
  dir = tempDir("notes-probe-record");
});
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  dir.cleanup();
});

async function appOn(db: string, start = "2026-03-02T08:00:00Z"): Promise<TestApp> {
  const app = await testApp(start, db);
  apps.push(app);
  return app;
}

async function dueNote(app: TestApp, autoRestackAfterHours: number | null = null): Promise<string> {
  const { id } = await app.notes.create({ content: "once, please", status: "ready", autoRestackAfterHours });
  await app.notes.schedule([{ id, scheduledAt: DUE }]);
  return id;
}

const deliveries = (app: TestApp, id: string, kind: "post" | "restack" = "post") =>
  app.publisher.events.filter((e) => e.note.id === id && e.kind === kind).length;

describe("the store fails to record a publication the publisher accepted", () => {
  it("is not sent again, is not counted as failed, and is recorded published once the store recovers", async () => {
    const db = await freshStore(dir.path);
    const app = await appOn(db);
    const id = await dueNote(app);
    const fault = await failWrites(db, "publication");
    app.time.set(DUE);
    const first = await app.scheduler.tick();
    expect(deliveries(app, id)).toBe(1);
    expect(first.published).toEqual([]);
    expect(first.failed).toEqual([]);
    expect(first.unrecorded).toEqual([{ id, kind: "post", error: expect.stringContaining("injected") }]);
    // The store still refuses: later runs try to write the record again and never hand the note over again.
    for (let run = 0; run < 10; run++) {
      app.time.advance(HOUR);
      const later = await app.scheduler.tick();
      expect(later.failed).toEqual([]);
      expect(later.gaveUp).toEqual([]);
    }
    expect(deliveries(app, id)).toBe(1);
    await fault.remove();
    app.time.advance(HOUR);
    expect((await app.scheduler.tick()).published).toEqual([id]);
    expect(deliveries(app, id)).toBe(1);
    expect(await app.notes.get(id)).toMatchObject({
      status: "published",
      publishedAt: DUE,
      attempts: 1,
      lastError: null,
    });
    app.time.advance(24 * HOUR);
    await app.scheduler.tick();
    expect(deliveries(app, id)).toBe(1);
  });

  it("another scheduler on the same store does not send it while this one holds the record", async () => {
    const db = await freshStore(dir.path);
    const a = await appOn(db);
    const b = await appOn(db);
    const id = await dueNote(a);
    const fault = await failWrites(db, "publication");
    a.time.set(DUE);
    b.time.set(DUE);
    await a.scheduler.tick();
    b.time.advance(2 * MIN);
    expect((await b.scheduler.tick()).published).toEqual([]);
    await fault.remove();
    a.time.advance(2 * MIN);
    expect((await a.scheduler.tick()).published).toEqual([id]);
    b.time.advance(HOUR);
    await b.scheduler.tick();
    expect(deliveries(a, id) + deliveries(b, id)).toBe(1);
    expect((await b.notes.get(id)).status).toBe("published");
  });

  it("a restack the store could not record goes out once", async () => {
    const db = await freshStore(dir.path);
    const app = await appOn(db);
    const id = await dueNote(app, 2);
    app.time.set(DUE);
    expect((await app.scheduler.tick()).published).toEqual([id]);
    const fault = await failWrites(db, "restack");
    app.time.advance(2 * HOUR);
    expect((await app.scheduler.tick()).unrecorded).toEqual([
      { id, kind: "restack", error: expect.stringContaining("injected") },
    ]);
    for (let run = 0; run < 10; run++) {
      app.time.advance(HOUR);
      await app.scheduler.tick();
    }
    expect(deliveries(app, id, "restack")).toBe(1);
    await fault.remove();
    app.time.advance(HOUR);
    expect((await app.scheduler.tick()).restacked).toEqual([id]);
    expect(deliveries(app, id, "restack")).toBe(1);
    expect(await app.notes.get(id)).toMatchObject({ status: "published", restackDueAt: expect.any(String) });
    expect((await app.notes.get(id)).restackedAt).not.toBeNull();
  });
});

describe("publish-due (cron's one-shot run) and a store that refuses the record for a moment", () => {
  it("waits for the store before it exits: the note is recorded published, handed over once, exit 0", async () => {
    const db = await freshStore(dir.path);
    const realNow = Date.now();
    const app = await appOn(db, new Date(realNow - HOUR).toISOString());
    const { id } = await app.notes.create({ content: "cron's note", status: "ready" });
    await app.notes.schedule([{ id, scheduledAt: new Date(realNow - 30 * MIN).toISOString() }]);
    const fault = await failWrites(db, "publication");
    const outbox = join(dir.path, "outbox.jsonl");
    let stdout = "";
    let stderr = "";
    const child = spawn(process.execPath, [CLI, "publish-due", "--db", db, "--outbox", outbox]);
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    // The note is handed over, the record refused (its in-run retries take 300 ms); then the store recovers.
    while (!existsSync(outbox) || readFileSync(outbox, "utf8") === "")
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 2000));
    await fault.remove();
    expect(await exited).toBe(0);
    expect(stderr).toContain("the store refused the record");
    const report = JSON.parse(stdout) as { published: string[]; unrecorded: unknown[] };
    expect(report).toMatchObject({ published: [id], unrecorded: [], outcomeUnknown: [] });
    expect(readFileSync(outbox, "utf8").trim().split("\n")).toHaveLength(1);
    expect(await app.notes.get(id)).toMatchObject({ status: "published", lastError: null });
  }, 60_000);
});

describe("the process is gone between the publisher's answer and the record", () => {
  it("the next run does not send it again: the note is a draft whose lastError says the outcome is unknown", async () => {
    const db = await freshStore(dir.path);
    const a = await appOn(db);
    const id = await dueNote(a);
    const fault = await failWrites(db, "publication");
    a.time.set(DUE);
    await a.scheduler.tick();
    expect(deliveries(a, id)).toBe(1);
    // The process ends with the record unwritten (killed, or cron's run over); the store recovers.
    await a.close();
    apps.splice(apps.indexOf(a), 1);
    await fault.remove();
    const b = await appOn(db, DUE);
    b.time.advance(MIN); // its lease still runs: left alone
    const early = await b.scheduler.tick();
    expect(early).toMatchObject({ published: [], outcomeUnknown: [] });
    expect((await b.notes.get(id)).status).toBe("scheduled");
    b.time.advance(15 * MIN); // the lease is over: nobody is going to record it
    const late = await b.scheduler.tick();
    expect(late.published).toEqual([]);
    expect(late.outcomeUnknown).toEqual([{ id, kind: "post" }]);
    for (let run = 0; run < 5; run++) {
      b.time.advance(HOUR);
      await b.scheduler.tick();
    }
    expect(deliveries(b, id)).toBe(0);
    const note = await b.notes.get(id);
    expect(note).toMatchObject({ status: "draft", scheduledAt: null, publishedAt: null });
    expect(note.lastError).toMatch(/may have gone out/);
    expect(note.lastError).toContain(`${id}:post`);
    // Sending it again is the owner's call: schedule_notes does, once.
    await b.notes.schedule([{ id, scheduledAt: new Date(b.time.now() + HOUR).toISOString() }]);
    b.time.advance(2 * HOUR);
    expect((await b.scheduler.tick()).published).toEqual([id]);
    expect(deliveries(b, id)).toBe(1);
  });

  it("a restack whose outcome is unknown is dropped with lastError, not sent again", async () => {
    const db = await freshStore(dir.path);
    const a = await appOn(db);
    const id = await dueNote(a, 2);
    a.time.set(DUE);
    await a.scheduler.tick();
    const fault = await failWrites(db, "restack");
    a.time.advance(2 * HOUR);
    await a.scheduler.tick();
    await a.close();
    apps.splice(apps.indexOf(a), 1);
    await fault.remove();
    const b = await appOn(db, new Date(Date.parse(DUE) + 3 * HOUR).toISOString());
    expect((await b.scheduler.tick()).outcomeUnknown).toEqual([{ id, kind: "restack" }]);
    b.time.advance(HOUR);
    await b.scheduler.tick();
    expect(deliveries(b, id, "restack")).toBe(0);
    const note = await b.notes.get(id);
    expect(note).toMatchObject({ status: "published", restackDueAt: null, restackedAt: null });
    expect(note.lastError).toContain(`${id}:restack`);
  });
});
