/**
 * The attacker's tests of publishing, counted where it matters: at a real local HTTP receiver that
 * records every request by X-Notes-Delivery. Two schedulers on one store, a slow batch outliving the
 * lease, a receiver that fails, drops the connection or answers late, a process killed between the
 * receiver's 2xx and the database recording it (not sent again: outcome unknown), giving up, restacks and evergreen copies.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { type ManualClock, manualClock } from "@mcpforge/toolkit/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNotesApp, type NotesApp } from "../src/app.js";
import { WebhookPublisher } from "../src/domain/publishers/webhook.js";
import { freshStore, STORE, tempDir } from "./helpers.js";

const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));
const SECRET = "probe-secret";
const MIN = 60_000;
const HOUR = 60 * MIN;

interface Hit {
  path: string;
  delivery: string;
  event: string;
  body: { note: { id: string; content: string } };
}
type Behaviour = (hit: Hit, req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

let server: Server;
let base: string;
let hits: Hit[];
/** How the receiver answers; 200 by default. */
let behave: Behaviour;
let dir: ReturnType<typeof tempDir>;
const apps: NotesApp[] = [];

beforeEach(async () => {
  hits = [];
  behave = (_h, _q, res) => void res.end("ok");
  dir = tempDir("notes-probe-delivery");
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const hit: Hit = {
        path: req.url ?? "",
        delivery: String(req.headers["x-notes-delivery"]),
        event: String(req.headers["x-notes-event"]),
        body: JSON.parse(body) as Hit["body"],
      };
      hits.push(hit);
      void Promise.resolve(behave(hit, req, res)).catch((err: unknown) => {
        res.statusCode = 599;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  dir.cleanup();
});

/** Deliveries the receiver got, by X-Notes-Delivery. */
function countByDelivery(from: Hit[] = hits): Map<string, number> {
  const out = new Map<string, number>();
  for (const h of from) out.set(h.delivery, (out.get(h.delivery) ?? 0) + 1);
  return out;
}

function webhook(path: string, overrides: Partial<ConstructorParameters<typeof WebhookPublisher>[0]> = {}) {
  return new WebhookPublisher({
    url: `${base}${path}`,
    secret: SECRET,
    baseDelayMs: 1,
    sleep: async () => undefined,
    ...overrides,
  });
}

async function appOn(
  db: string,
  time: ManualClock,
  path: string,
  overrides: Partial<ConstructorParameters<typeof WebhookPublisher>[0]> = {},
): Promise<NotesApp> {
  const app = await createNotesApp({
    db,
    clock: time.date,
    publisher: webhook(path, overrides),
    log: () => undefined,
  });
  apps.push(app);
  return app;
}

async function dueNotes(
  app: NotesApp,
  n: number,
  at: string,
  extra: { autoRestackAfterHours?: number } = {},
) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push((await app.notes.create({ content: `note ${i}`, status: "ready", ...extra })).id);
  await app.notes.schedule(ids.map((id) => ({ id, scheduledAt: at })));
  return ids;
}

// A test of one store is registered only where that store runs (this file runs once per store):
// none is left skipped in the other run.
const onSqlite: typeof it = STORE === "sqlite" ? it : ((() => undefined) as unknown as typeof it);
const onPostgres: typeof it = STORE === "postgres" ? it : ((() => undefined) as unknown as typeof it);
const describeOnSqlite = STORE === "sqlite" ? describe : () => undefined;

describe("exactly one delivery per note, counted at the receiver", () => {
  onSqlite(
    "three publish-due processes on one SQLite file at once deliver each note once",
    async () => {
      const db = await freshStore(dir.path);
      const realNow = Date.now();
      const setup = await createNotesApp({ db, clock: () => new Date(realNow - HOUR), log: () => undefined });
      const ids: string[] = [];
      for (let i = 0; i < 30; i++)
        ids.push((await setup.notes.create({ content: `n${i}`, status: "ready" })).id);
      await setup.notes.schedule(
        ids.map((id) => ({ id, scheduledAt: new Date(realNow - 30 * MIN).toISOString() })),
      );
      await setup.close();
      // A little latency so the three runs interleave.
      behave = async (_h, _q, res) => {
        await new Promise((r) => setTimeout(r, 5));
        res.end("ok");
      };
      const run = (path: string) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(
            process.execPath,
            [CLI, "publish-due", "--db", db, "--webhook-url", `${base}${path}`, "--webhook-secret", SECRET],
            { stdio: "ignore" },
          );
          child.on("exit", (code) => resolve(code));
        });
      expect(await Promise.all([run("/a"), run("/b"), run("/c")])).toEqual([0, 0, 0]);
      const counts = countByDelivery();
      expect(counts.size).toBe(30);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      const check = await createNotesApp({ db, log: () => undefined });
      apps.push(check);
      for (const id of ids) expect((await check.notes.get(id)).status).toBe("published");
    },
    30_000,
  );

  onPostgres(
    "two schedulers on one PostgreSQL database ticking together deliver each note once",
    async () => {
      const db = await freshStore();
      const time = manualClock("2026-03-02T08:00:00Z");
      const a = await appOn(db, time, "/a");
      const b = await appOn(db, time, "/b");
      await dueNotes(a, 30, "2026-03-02T09:00:00Z");
      behave = async (_h, _q, res) => {
        await new Promise((r) => setTimeout(r, 2));
        res.end("ok");
      };
      time.set("2026-03-02T09:00:00Z");
      for (let round = 0; round < 3; round++) {
        await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
        time.advance(MIN);
      }
      const counts = countByDelivery();
      expect(counts.size).toBe(30);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    },
  );

  it("a batch that outlives the lease (a slow receiver) is not published again by another scheduler", async () => {
    const db = await freshStore(dir.path);
    const time = manualClock("2026-03-02T08:00:00Z");
    const a = await appOn(db, time, "/a");
    const b = await appOn(db, time, "/b");
    // 80 notes due at once (the server was down, or a busy morning), and a receiver that takes 9 s a
    // request, within the 10 s timeout: the run takes 12 minutes, longer than the 10-minute lease.
    await dueNotes(a, 80, "2026-03-02T09:00:00Z");
    time.set("2026-03-02T09:00:00Z");
    let bRan = false;
    behave = async (hit, _q, res) => {
      if (hit.path === "/a") {
        time.advance(9_000);
        // Once the run has gone on for more than the lease, cron (B) runs while A is mid-request.
        if (!bRan && time.now() > Date.parse("2026-03-02T09:10:00Z")) {
          bRan = true;
          await b.scheduler.publishDue();
        }
      }
      res.end("ok");
    };
    await a.scheduler.publishDue();
    expect(bRan).toBe(true);
    const counts = countByDelivery();
    expect(counts.size).toBe(80);
    const twice = [...counts.entries()].filter(([, n]) => n > 1).map(([d]) => d);
    expect(twice, "deliveries made twice").toEqual([]);
  });
});

describe("a receiver that misbehaves: each delivery id accepted once, retries carry the same id", () => {
  it("5xx then 2xx: one accepted delivery, the note published once, attempts counted", async () => {
    const db = await freshStore(dir.path);
    const time = manualClock("2026-03-02T08:00:00Z");
    const a = await appOn(db, time, "/a");
    const [id] = await dueNotes(a, 1, "2026-03-02T09:00:00Z");
    const script = [503, 500];
    behave = (_h, _q, res) => {
      res.statusCode = script.shift() ?? 200;
      res.end();
    };
    time.set("2026-03-02T09:00:00Z");
    expect((await a.scheduler.tick()).published).toEqual([id]);
    expect(hits.map((h) => h.delivery)).toEqual([`${id}:post`, `${id}:post`, `${id}:post`]);
    expect(await a.notes.get(id!)).toMatchObject({ status: "published", attempts: 3, lastError: null });
    time.advance(HOUR);
    await a.scheduler.tick();
    expect(hits).toHaveLength(3);
  });

  it("accepts then drops the connection before answering: sent again with the same delivery id", async () => {
    const db = await freshStore(dir.path);
    const time = manualClock("2026-03-02T08:00:00Z");
    const a = await appOn(db, time, "/a");
    const [id] = await dueNotes(a, 1, "2026-03-02T09:00:00Z");
    let first = true;
    behave = (_h, req, res) => {
      if (first) {
        first = false;
        req.socket.destroy(); // the receiver kept it, the sender never hears so
        return;
      }
      res.end("ok");
    };
    time.set("2026-03-02T09:00:00Z");
    expect((await a.scheduler.tick()).published).toEqual([id]);
    expect(countByDelivery()).toEqual(new Map([[`${id}:post`, 2]]));
  });

  it("answers after the timeout: sent again with the same delivery id, published once", async () => {
    const db = await freshStore(dir.path);
    const time = manualClock("2026-03-02T08:00:00Z");
    const a = await appOn(db, time, "/a", { timeoutMs: 150 });
    const [id] = await dueNotes(a, 1, "2026-03-02T09:00:00Z");
    let first = true;
    behave = async (_h, _q, res) => {
      if (first) {
        first = false;
        await new Promise((r) => setTimeout(r, 400));
      }
      res.end("ok");
    };
    time.set("2026-03-02T09:00:00Z");
    expect((await a.scheduler.tick()).published).toEqual([id]);
    expect(countByDelivery()).toEqual(new Map([[`${id}:post`, 2]]));
    expect(await a.notes.get(id!)).toMatchObject({ status: "published", attempts: 2 });
  });

  it("a receiver that is down: 4 tries a run, 8 runs, then the note is a draft and nothing more is sent", async () => {
    const db = await freshStore(dir.path);
    const time = manualClock("2026-03-02T08:00:00Z");
    const a = await appOn(db, time, "/a");
    const [id] = await dueNotes(a, 1, "2026-03-02T09:00:00Z");
    behave = (_h, _q, res) => {
      res.statusCode = 503;
      res.end();
    };
    time.set("2026-03-02T09:00:00Z");
    const gaveUp: string[] = [];
    for (let run = 0; run < 12; run++) {
      gaveUp.push(...(await a.scheduler.tick()).gaveUp);
      time.advance(HOUR);
    }
    expect(gaveUp).toEqual([id]);
    expect(countByDelivery()).toEqual(new Map([[`${id}:post`, 32]]));
    expect(await a.notes.get(id!)).toMatchObject({ status: "draft", scheduledAt: null, attempts: 32 });
  });

  it("a restack is delivered once, N hours after the post, with its own delivery id", async () => {
    const db = await freshStore(dir.path);
    const time = manualClock("2026-03-02T08:00:00Z");
    const a = await appOn(db, time, "/a");
    const b = await appOn(db, time, "/b");
    const [id] = await dueNotes(a, 1, "2026-03-02T09:00:00Z", { autoRestackAfterHours: 2 });
    time.set("2026-03-02T09:00:00Z");
    for (let i = 0; i < 6; i++) {
      // One after the other: two SQLite connections in one process cannot wait for each other.
      await a.scheduler.tick();
      await b.scheduler.tick();
      time.advance(HOUR);
    }
    expect(countByDelivery()).toEqual(
      new Map([
        [`${id}:post`, 1],
        [`${id}:restack`, 1],
      ]),
    );
    expect(hits.map((h) => h.event)).toEqual(["note.published", "note.restacked"]);
  });
});

describe("evergreen copies at the receiver", () => {
  it("each copy is its own delivery, and one source's content goes out at most once per minimum gap", async () => {
    const db = await freshStore(dir.path);
    const time = manualClock("2026-03-02T08:00:00Z");
    const a = await appOn(db, time, "/a");
    await a.queue.setPlan({
      timeZone: "UTC",
      slots: { monday: ["09:00"], tuesday: ["09:00"], wednesday: ["09:00"], thursday: ["09:00"] },
      evergreenHorizonHours: 24,
      evergreenMinGapDays: 30,
    });
    // A post that did well goes out, and its owner makes it evergreen the same day.
    const [hit] = await dueNotes(a, 1, "2026-03-02T09:00:00Z");
    await a.notes.create({ content: "always true", status: "evergreen" });
    time.set("2026-03-02T09:00:00Z");
    await a.scheduler.tick();
    await a.notes.update(hit!, { status: "evergreen" });
    for (let day = 0; day < 10; day++) {
      time.advance(12 * HOUR);
      await a.scheduler.tick();
    }
    const byContent = new Map<string, string[]>();
    for (const h of hits) {
      byContent.set(h.body.note.content, [...(byContent.get(h.body.note.content) ?? []), h.delivery]);
    }
    // Distinct delivery ids, one per copy.
    expect(new Set(hits.map((h) => h.delivery)).size).toBe(hits.length);
    // "note 0" went out on 2026-03-02 09:00; within 30 days no copy of it goes out again.
    expect(byContent.get("note 0")).toHaveLength(1);
    expect(byContent.get("always true")).toHaveLength(1);
  });
});

describeOnSqlite("a process killed between the receiver's 2xx and the database recording it", () => {
  onSqlite(
    "does not send it again: after the lease the note is a draft whose lastError says it may have gone out",
    async () => {
      const db = await freshStore(dir.path);
      const realNow = Date.now();
      const setup = await createNotesApp({ db, clock: () => new Date(realNow - HOUR), log: () => undefined });
      const id = (await setup.notes.create({ content: "once, please", status: "ready" })).id;
      await setup.notes.schedule([{ id, scheduledAt: new Date(realNow - 30 * MIN).toISOString() }]);
      await setup.close();
      // The receiver keeps the delivery, and the sender dies before it can record it.
      let child: ChildProcess | undefined;
      const killed = new Promise<NodeJS.Signals | null>((resolve) => {
        behave = (_h, _q, res) => {
          child!.kill("SIGKILL");
          res.end("ok");
        };
        child = spawn(
          process.execPath,
          [CLI, "publish-due", "--db", db, "--webhook-url", `${base}/cron`, "--webhook-secret", SECRET],
          { stdio: "ignore" },
        );
        child.on("exit", (_code, signal) => resolve(signal));
      });
      expect(await killed).toBe("SIGKILL");
      expect(countByDelivery()).toEqual(new Map([[`${id}:post`, 1]]));
      // A scheduler started at once leaves the note alone while the dead run's lease lasts...
      const time = manualClock(new Date(realNow + MIN).toISOString());
      const a = await appOn(db, time, "/a");
      expect((await a.scheduler.tick()).published).toEqual([]);
      expect(await a.notes.get(id)).toMatchObject({ status: "scheduled" });
      // ...and after it, does not guess: the note may have gone out, so it is not sent again.
      time.set(new Date(realNow + 11 * MIN).toISOString());
      expect((await a.scheduler.tick()).outcomeUnknown).toEqual([{ id, kind: "post" }]);
      time.set(new Date(realNow + 5 * HOUR).toISOString());
      await a.scheduler.tick();
      expect(countByDelivery()).toEqual(new Map([[`${id}:post`, 1]]));
      const note = await a.notes.get(id);
      expect(note).toMatchObject({ status: "draft", scheduledAt: null });
      expect(note.lastError).toContain(`delivery id ${id}:post`);
    },
    20_000,
  );
});
