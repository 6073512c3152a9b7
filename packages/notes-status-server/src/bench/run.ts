/**
 * `npm run bench`: 100k generated notes in a temp database; list_notes filtered by status and by tag,
 * through the domain and through the kit's callTool (argument parsing, output validation, JSON text),
 * and get_queue over a month of slots. Prints p50/p95 against the 5 ms target, for SQLite and then for
 * PostgreSQL (the same notes copied in), and a table of both side by side.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Publisher } from "../domain/publishers/types.js";
import { NOTE_STATUSES, type NoteStatus } from "../domain/status.js";
import { UNPUBLISHED } from "../domain/notes.js";
import type { NoteDetail } from "../domain/types.js";
import { createNotesApp } from "../app.js";
import { openDatabase } from "../store/db.js";
import { copySqliteToPostgres } from "../store/copy.js";
import { SqliteNotesRepository } from "../store/repository.js";

/**
 * The PostgreSQL column: BENCH_POSTGRES_URL (an empty database) if set, else a throwaway PostgreSQL 15
 * started with the kit's test harness; the SQLite notes are copied in with `migrate`'s copy. Null (and a
 * line saying why) when neither is available.
 */
async function postgresFor(
  sqlitePath: string,
): Promise<{ url: string; copySeconds: string; stop: () => Promise<void> } | null> {
  let url = process.env["BENCH_POSTGRES_URL"];
  let stop: () => Promise<void> = async () => undefined;
  if (!url) {
    try {
      const { startPostgres } = await import("@mcpforge/toolkit/testing");
      const server = await startPostgres();
      url = await server.createDatabase("notes_bench");
      stop = () => server.stop();
    } catch (err) {
      process.stdout.write(`\nPostgreSQL column skipped: ${(err as Error).message.split("\n")[0]}\n`);
      return null;
    }
  }
  const t = performance.now();
  await copySqliteToPostgres(sqlitePath, url);
  return { url, copySeconds: ((performance.now() - t) / 1000).toFixed(1), stop };
}

/** p50 / p95 of every case, SQLite beside PostgreSQL. */
function table(): void {
  const stores = ["SQLite", "PostgreSQL"];
  process.stdout.write(
    `\n${"case".padEnd(58)} ${stores.map((s) => `${s} p50 / p95 ms`.padStart(26)).join(" ")}\n`,
  );
  for (const [name, byStore] of figures) {
    const cells = stores.map((s) => {
      const r = byStore.get(s);
      return (r ? `${r.p50.toFixed(3)} / ${r.p95.toFixed(3)}` : "-").padStart(26);
    });
    process.stdout.write(`${name.padEnd(58)} ${cells.join(" ")}\n`);
  }
}

const NOTES = Number(process.env["BENCH_NOTES"] ?? 100_000);
const RUNS = Number(process.env["BENCH_RUNS"] ?? 200);
const TARGET_MS = 5;

function rng(seed: number) {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(fn: () => unknown | Promise<unknown>): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 10; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

const rows: string[][] = [];
let store = "SQLite";
/** "list_notes domain" or "list_notes kit": the same case names appear under both. */
let section = "";
/** Case name -> store -> figures, for the side-by-side table at the end. */
const figures = new Map<string, Map<string, { p50: number; p95: number }>>();
function report(name: string, r: { p50: number; p95: number }, target = true) {
  const verdict = target ? (r.p50 < TARGET_MS ? "ok" : "OVER TARGET") : "";
  if (target) rows.push([store, name, r.p50.toFixed(3), r.p95.toFixed(3), verdict]);
  const key = section ? `${section} ${name}` : name;
  const byStore = figures.get(key) ?? new Map<string, { p50: number; p95: number }>();
  byStore.set(store, r);
  figures.set(key, byStore);
  process.stdout.write(
    `  ${name.padEnd(58)} p50 ${r.p50.toFixed(3).padStart(7)} ms   p95 ${r.p95.toFixed(3).padStart(7)} ms   ${verdict}\n`,
  );
}

/** Every case on one store; `report` collects the figures under the store's column. */
async function runCases(db: string, clock: () => Date): Promise<void> {
  const noop: Publisher = { name: "none", publish: async () => undefined };
  const app = await createNotesApp({ db, clock, publisher: noop });
  await app.queue.setPlan({
    timeZone: "Europe/Berlin",
    slots: Object.fromEntries(
      ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => [
        d,
        ["09:00", "12:00", "15:00", "18:00"],
      ]),
    ),
  });
  const caller = { scopes: [] };
  const pages = [0, 0, 0, 20, 40, 100, 200];
  let i = 0;
  const skip = () => pages[i++ % pages.length]!;

  section = "list_notes domain";
  process.stdout.write("list_notes through the domain (NotesService.list)\n");
  for (const status of NOTE_STATUSES) {
    report(`status=${status}`, await measure(() => app.notes.list({ status }, 20, skip())));
  }
  for (const tag of ["tag00", "tag10", "tag49"]) {
    report(`tag=${tag}`, await measure(() => app.notes.list({ tag }, 20, skip())));
  }
  report(
    "tag=tag00 status=scheduled",
    await measure(() => app.notes.list({ tag: "tag00", status: "scheduled" }, 20, skip())),
  );
  report("no filter", await measure(() => app.notes.list({}, 20, skip())));

  section = "list_notes kit";
  process.stdout.write("\nlist_notes through the kit (KitServer.callTool: parse, validate, JSON text)\n");
  for (const status of ["draft", "published", "evergreen"]) {
    report(
      `status=${status}`,
      await measure(() => app.kit.callTool("list_notes", { status, skip: skip() }, caller)),
    );
  }
  for (const tag of ["tag00", "tag49"]) {
    report(`tag=${tag}`, await measure(() => app.kit.callTool("list_notes", { tag, skip: skip() }, caller)));
  }
  report(
    "tag=tag00 status=published limit=50",
    await measure(() =>
      app.kit.callTool("list_notes", { tag: "tag00", status: "published", limit: 50 }, caller),
    ),
  );

  section = "";
  process.stdout.write("\nget_queue over a month (4 slots a day, ~10k scheduled notes in the year)\n");
  const month = await app.queue.queue({ days: 31, includeFreeSlots: true, limit: 500 });
  process.stdout.write(
    `  (${month.total} entries: ${month.entries.filter((e) => e.note).length} notes, ${month.entries.filter((e) => !e.note).length} free slots)\n`,
  );
  report(
    "domain QueueService.queue days=31",
    await measure(() => app.queue.queue({ days: 31, includeFreeSlots: true, limit: 500 })),
    false,
  );
  report(
    "kit get_queue days=31 limit=500",
    await measure(() => app.kit.callTool("get_queue", { days: 31, limit: 500 }, caller)),
    false,
  );
  report(
    "kit get_next_available_slots count=50",
    await measure(() => app.kit.callTool("get_next_available_slots", { count: 50 }, caller)),
    false,
  );
  await app.close();
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "notes-bench-"));
  try {
    const path = join(dir, "bench.db");
    const start = Date.parse("2026-03-02T00:00:00Z");
    const clock = () => new Date(start);
    process.stdout.write(
      `notes-status-mcp benchmark: ${NOTES.toLocaleString("en")} notes, ${RUNS} runs per case\n`,
    );

    const t0 = performance.now();
    const db = openDatabase(path);
    const repo = new SqliteNotesRepository(db);
    const random = rng(42);
    const tags = Array.from({ length: 50 }, (_, i) => `tag${String(i).padStart(2, "0")}`);
    // Share of notes per status, most are drafts and published posts.
    const weights: Array<[NoteStatus, number]> = [
      ["draft", 0.4],
      ["ready", 0.15],
      ["scheduled", 0.1],
      ["published", 0.3],
      ["evergreen", 0.05],
    ];
    const pickStatus = () => {
      let x = random();
      for (const [s, w] of weights) {
        x -= w;
        if (x < 0) return s;
      }
      return "draft" as NoteStatus;
    };
    const slotTimes = [9, 12, 15, 18];
    const batch: NoteDetail[] = [];
    for (let i = 0; i < NOTES; i++) {
      const status = pickStatus();
      const created = new Date(start - (NOTES - i) * 60_000).toISOString();
      const noteTags = new Set<string>();
      const n = 1 + Math.floor(random() * 3);
      // Skewed: low-numbered tags are far more common.
      for (let k = 0; k < n; k++) noteTags.add(tags[Math.floor(random() ** 2 * tags.length)]!);
      const day = Math.floor(random() * 365);
      const hour = slotTimes[Math.floor(random() * 4)]!;
      const note: NoteDetail = {
        id: randomUUID(),
        content: `Note ${i}: ${"lorem ipsum dolor sit amet ".repeat(1 + Math.floor(random() * 8))}`,
        tags: [...noteTags],
        status,
        scheduledAt:
          status === "scheduled" ? new Date(start + day * 86_400_000 + hour * 3_600_000).toISOString() : null,
        autoRestackAfterHours: random() < 0.2 ? 24 : null,
        createdAt: created,
        updatedAt: created,
        ...UNPUBLISHED,
        publishedAt: status === "published" ? created : null,
      };
      batch.push(note);
    }
    await repo.insertMany(batch);
    db.pragma("optimize");
    db.close();
    process.stdout.write(`  generated in ${((performance.now() - t0) / 1000).toFixed(1)} s\n\n`);

    process.stdout.write(`--- SQLite (${path})\n`);
    store = "SQLite";
    await runCases(path, clock);

    const pg = await postgresFor(path);
    if (pg) {
      try {
        process.stdout.write(
          `\n--- PostgreSQL (the same notes, copied with migrate in ${pg.copySeconds} s)\n`,
        );
        store = "PostgreSQL";
        await runCases(pg.url, clock);
      } finally {
        await pg.stop();
      }
    }
    table();
    const over = rows.filter((r) => r[4] === "OVER TARGET");
    process.stdout.write(
      `\n${over.length === 0 ? "All list_notes cases are under" : `${over.length} list_notes cases are over`} the ${TARGET_MS} ms p50 target.\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
