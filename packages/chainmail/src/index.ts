export { DaemonClient, type ClientOptions } from "./client/index.js";
export { uploadFile, withUploads } from "./client/upload.js";
export {
  exitCodeOf,
  isMailError,
  MailError,
  type MailReasonSpec,
  type Reason,
  REASONS,
  type WireError,
} from "./errors.js";
export {
  METHODS,
  type Method,
  type ParamsOf,
  PROTOCOL_VERSION,
  type ResultOf,
} from "./daemon/protocol.js";
export {
  AccountField,
  AccountsField,
  BatchRefsField,
  CursorField,
  DirField,
  EventCursorField,
  EventKindsField,
  EventsLimitField,
  GROUP_RULE,
  GroupField,
  InField,
  ItemIdField,
  WaitSecondsField,
  FolderField,
  GetRefsField,
  KeywordField,
  LabelField,
  LabelsField,
  OPERATIONS,
  type Operation,
  PartField,
  QueryField,
  RefField,
  SearchLimitField,
  SourceField,
} from "./daemon/operations/index.js";
export * from "./limits.js";
export * from "./events/limits.js";
export type { MailEvent, ReadEventsResult } from "./events/log.js";
export type { WatchGroup, WatchStatus } from "./service/events.js";
export { type Daemon, startDaemon } from "./daemon/server.js";
export { type Home, resolveHome } from "./home.js";
export { type AccountConfig, type Config, loadConfig, parseConfig } from "./config.js";
export { PRESETS, PROVIDERS, type Provider, type ProviderPreset } from "./providers/presets.js";
export { decodeRef, encodeRef, type MessageRef } from "./refs.js";
export type { AccountSummary } from "./service/accounts.js";
export type { ListFoldersResult, FolderRow } from "./service/folders.js";
export type { BatchResult, Outcome } from "./service/organize.js";
export type { GetMessagesResult, SavedFile } from "./service/reading.js";
export type { SearchResult, SearchRow } from "./service/search/index.js";
export type { Message, AttachmentInfo, Address } from "./imap/messages.js";
export type { ThreadResult } from "./imap/thread.js";
export type { AuditRow } from "./store/state.js";
export type { CacheStatus } from "./cache/index.js";
export * from "./items/model.js";
export * from "./daemon/operations/items.js";
export { MAX_THREAD_KEY, type ThreadKeyInput, threadKeyOf } from "./items/thread-key.js";
export {
  AddressField,
  BodyField,
  BodyFormatField,
  FilePathField,
  FilesField,
  HeadersField,
  InlineField,
  RecipientsField,
  SubjectField,
} from "./daemon/operations/compose.js";
export { IdempotencyKeyField } from "./daemon/operations/fields.js";
export {
  COMPOSE_STATUSES,
  type ComposeResult,
  type ComposeStatus,
  type DeleteDraftResult,
  type ClientJudgement,
  type SendJudgement,
} from "./compose/result.js";
