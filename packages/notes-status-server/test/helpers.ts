import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ManualClock, manualClock } from "@mcpforge/toolkit/testing";
import Database from "better-sqlite3";
import pg from "pg";
import { inject } from "vitest";
import { createNotesApp, type NotesApp, type NotesStatusServerOptions } from "../src/app.js";
import type { PublishEvent, Publisher } from "../src/domain/publishers/types.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The throwaway PostgreSQL server's maintenance URL (the postgres project's global setup). */
    postgresUrl: string;
  }
}

/**
 * The store every parametrized test file runs on: the vitest project ("sqlite" or "postgres", see
 * vitest.config.ts) sets NOTES_STATUS_TEST_STORE, and the same tests run once on each.
 */
export const STORE: "sqlite" | "postgres" =
  process.env["NOTES_STATUS_TEST_STORE"] === "postgres" ? "postgres" : "sqlite";

let fileDatabase: Promise<string> | undefined;
let schemas = 0;

/** This test file's own database on the throwaway server (created on first use). */
export function postgresDatabase(): Promise<string> {
  fileDatabase ??= (async () => {
    const admin = new pg.Client({ connectionString: inject("postgresUrl") });
    await admin.connect();
    const name = `notes_${process.pid}_${Date.now().toString(36)}`;
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(inject("postgresUrl"));
    url.pathname = `/${name}`;
    return url.toString();
  })();
  return fileDatabase;
}

/**
 * A fresh, empty store for one app (or for several apps and processes that share it): on SQLite an
 * in-memory database, or a file in `dir` when it must be shared; on PostgreSQL a new schema in this
 * file's database, named in the URL's search_path.
 */
export async function freshStore(dir?: string): Promise<string> {
  if (STORE === "sqlite") return dir ? join(dir, `notes-${schemas++}.db`) : ":memory:";
  const url = new URL(await postgresDatabase());
  const schema = `s${schemas++}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  url.searchParams.set("options", `-c search_path=${schema}`);
  return url.toString();
}

/** Records every event; fails while `failing` is set. */
export class RecordingPublisher implements Publisher {
  readonly name = "recording";
  events: PublishEvent[] = [];
  failing: string | undefined;
  /** Every call, failed or not. */
  tries = 0;
  async publish(event: PublishEvent): Promise<undefined> {
    this.tries++;
    if (this.failing) throw new Error(this.failing);
    this.events.push(structuredClone(event));
    return undefined;
  }
}

export interface TestApp extends NotesApp {
  publisher: RecordingPublisher;
  time: ManualClock;
}

/** Plain SQL over a store a test (or a killed process) left behind, whichever kind it is. */
export interface StoreInspector {
  all<R>(sql: string): Promise<R[]>;
  /** SQLite's integrity_check; "ok" on PostgreSQL, which has no such whole-file check. */
  integrity(): Promise<string>;
  close(): Promise<void>;
}

export async function inspectStore(location: string): Promise<StoreInspector> {
  if (STORE === "sqlite") {
    const db = new Database(location, { readonly: true });
    return {
      all: async <R>(sql: string) => db.prepare(sql).all() as R[],
      integrity: async () => db.pragma("integrity_check", { simple: true }) as string,
      close: async () => void db.close(),
    };
  }
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  return {
    all: async <R>(sql: string) => (await client.query(sql)).rows as R[],
    integrity: async () => "ok",
    close: () => client.end(),
  };
}

/** An app on a fresh store of the suite's kind (see STORE), unless `db` names one. */
export async function testApp(
  start = "2026-03-02T08:00:00.000Z",
  db?: NotesStatusServerOptions["db"],
): Promise<TestApp> {
  const time = manualClock(start);
  const publisher = new RecordingPublisher();
  const app = await createNotesApp({
    db: db ?? (await freshStore()),
    clock: time.date,
    publisher,
    log: () => undefined,
  });
  return { ...app, publisher, time };
}

export function tempDir(prefix: string): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** The twelve tools, by name, as tools/list orders them. */
export const TOOL_NAMES = [
  "create_note",
  "delete_note",
  "get_next_available_slots",
  "get_note",
  "get_queue",
  "get_queue_slots",
  "list_notes",
  "list_tags",
  "schedule_notes",
  "set_queue_slots",
  "unschedule_note",
  "update_note",
];
