import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ManualClock, manualClock } from "@mcpforge/toolkit/testing";
import { createNotesApp, type NotesApp } from "../src/app.js";
import type { PublishEvent, Publisher } from "../src/domain/publishers/types.js";

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

export function testApp(start = "2026-03-02T08:00:00.000Z", db = ":memory:"): TestApp {
  const time = manualClock(start);
  const publisher = new RecordingPublisher();
  const app = createNotesApp({ db, clock: time.date, publisher, log: () => undefined });
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
