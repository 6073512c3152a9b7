export { NOTES_REASONS, NotesError, type NotesReason } from "./domain/errors.js";
export { NotesService } from "./domain/notes.js";
export { OutboxPublisher } from "./domain/publishers/outbox.js";
export { PublishError, type PublishEvent, type Publisher, payloadOf } from "./domain/publishers/types.js";
export {
  SIGNATURE_HEADER,
  signBody,
  type WebhookOptions,
  WebhookPublisher,
} from "./domain/publishers/webhook.js";
export { QueueService } from "./domain/queue.js";
export { type PublishReport, Scheduler, type TickReport } from "./domain/scheduler.js";
export { canTransition, NOTE_STATUSES, type NoteStatus, TRANSITIONS } from "./domain/status.js";
export { type Clock, fromLocal, systemClock } from "./domain/time.js";
export type { Note, NoteDetail, NotesRepository, StoreKind } from "./domain/types.js";
export { defaultDataDir, defaultDbPath, openDatabase } from "./store/db.js";
export { describeStore, isPostgresUrl, openStore } from "./store/open.js";
export { migratePostgres, openPostgres, PgNotesRepository } from "./store/postgres.js";
export { SqliteNotesRepository } from "./store/repository.js";
export {
  createNotesApp,
  createNotesStatusServer,
  type NotesApp,
  type NotesStatusServerOptions,
} from "./app.js";
export { notesReasons, notesTools, SERVER_NAME, SERVER_VERSION } from "./mcp/server.js";
