import { join } from "node:path";
import type { KitServer } from "@mcpforge/toolkit";
import { NotesService } from "./domain/notes.js";
import { OutboxPublisher } from "./domain/publishers/outbox.js";
import type { Publisher } from "./domain/publishers/types.js";
import { QueueService } from "./domain/queue.js";
import { Scheduler, type SchedulerOptions } from "./domain/scheduler.js";
import { type Clock, systemClock } from "./domain/time.js";
import { createNotesServer, type NotesContext } from "./mcp/server.js";
import { type Db, defaultDataDir, defaultDbPath, openDatabase } from "./store/db.js";
import { SqliteNotesRepository } from "./store/repository.js";

export interface NotesStatusServerOptions {
  /** A database path (":memory:" allowed) or an open better-sqlite3 database. Default: the XDG data dir. */
  db?: string | Db;
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
  db: Db;
  close(): Promise<void>;
}

/** Opens the store, builds the domain services on it and the MCP server over them. */
export function createNotesApp(options: NotesStatusServerOptions = {}): NotesApp {
  const clock = options.clock ?? systemClock;
  const ownsDb = typeof options.db !== "object";
  const db = typeof options.db === "object" ? options.db : openDatabase(options.db ?? defaultDbPath());
  const repo = new SqliteNotesRepository(db);
  const notes = new NotesService(repo, clock);
  const queue = new QueueService(repo, clock);
  const publisher = options.publisher ?? new OutboxPublisher(join(defaultDataDir(), "outbox.jsonl"));
  const scheduler = new Scheduler(repo, publisher, clock, {
    ...(options.log ? { log: options.log } : {}),
    ...options.scheduler,
  });
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
    db,
    close: async () => {
      await kit.close();
      if (ownsDb && db.open) db.close();
    },
  };
}

/** The MCP server over a notes database. */
export function createNotesStatusServer(options: NotesStatusServerOptions = {}): KitServer<NotesContext> {
  return createNotesApp(options).kit;
}
