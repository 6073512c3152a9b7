import { join } from "node:path";
import type { KitServer } from "@mcpforge/toolkit";
import { NotesService } from "./domain/notes.js";
import { OutboxPublisher } from "./domain/publishers/outbox.js";
import type { Publisher } from "./domain/publishers/types.js";
import { QueueService } from "./domain/queue.js";
import { Scheduler, type SchedulerOptions } from "./domain/scheduler.js";
import { type Clock, systemClock } from "./domain/time.js";
import { createNotesServer, type NotesContext } from "./mcp/server.js";
import { type Db, defaultDataDir, defaultDbPath } from "./store/db.js";
import { openStore } from "./store/open.js";
import type { NotesRepository } from "./domain/types.js";

export interface NotesStatusServerOptions {
  /**
   * A SQLite file path (":memory:" allowed), a postgres:// URL, an open better-sqlite3 database (the
   * caller closes it) or an open repository (the app closes it). Default: the SQLite file in the XDG data dir.
   */
  db?: string | Db | NotesRepository;
  /** Injectable clock for everything that reads the time. */
  clock?: Clock;
  /** Where due notes go. Default: the outbox file outbox.jsonl in the data dir. */
  publisher?: Publisher;
  scheduler?: SchedulerOptions;
  log?: (line: string) => void;
}

/** The server and the domain behind it, for the bin, tests and the benchmark. */
export interface NotesApp {
  kit: KitServer<NotesContext>;
  notes: NotesService;
  queue: QueueService;
  scheduler: Scheduler;
  /** The store underneath ("sqlite" or "postgresql" in `repo.kind`). */
  repo: NotesRepository;
  close(): Promise<void>;
}

/** Opens the store, builds the domain services on it and the MCP server over them. */
export async function createNotesApp(options: NotesStatusServerOptions = {}): Promise<NotesApp> {
  const clock = options.clock ?? systemClock;
  const given = options.db;
  // A better-sqlite3 handle stays the caller's: the repository over it is not closed with the app.
  const borrowed = typeof given === "object" && !isRepository(given);
  const repo = isRepository(given) ? given : await openStore(given ?? defaultDbPath());
  const notes = new NotesService(repo, clock);
  const queue = new QueueService(repo, clock);
  const publisher = options.publisher ?? new OutboxPublisher(join(defaultDataDir(), "outbox.jsonl"));
  let scheduler: Scheduler;
  try {
    scheduler = new Scheduler(repo, publisher, clock, {
      ...(options.log ? { log: options.log } : {}),
      ...options.scheduler,
    });
  } catch (err) {
    if (!borrowed) await repo.close(); // nothing may keep the store open after a refused start
    throw err;
  }
  const kit = createNotesServer({
    context: { notes, queue },
    now: () => clock().getTime(),
    ...(options.log ? { log: options.log } : {}),
  });
  return {
    kit,
    notes,
    queue,
    scheduler,
    repo,
    close: async () => {
      await kit.close();
      if (!borrowed) await repo.close();
    },
  };
}

function isRepository(db: NotesStatusServerOptions["db"]): db is NotesRepository {
  return typeof db === "object" && !("pragma" in db); // a better-sqlite3 handle has pragma()
}

/** The MCP server over a notes database. */
export async function createNotesStatusServer(
  options: NotesStatusServerOptions = {},
): Promise<KitServer<NotesContext>> {
  return (await createNotesApp(options)).kit;
}
