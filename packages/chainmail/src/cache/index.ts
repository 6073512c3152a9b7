export { type CacheDb, SCHEMA_VERSION, defaultCachePath, migrate, openCache } from "./schema.js";
export {
  type SyncEvents,
  type SyncFolder,
  type SyncOptions,
  type SyncResult,
  syncAccount,
  syncFolder,
} from "./sync.js";
export {
  type BackfillOptions,
  type BackfillResult,
  DEFAULT_DAILY_BUDGET,
  backfillBodies,
  cacheSizeBytes,
  downloadedToday,
  evictBodies,
  evictOldestBodies,
  evictStep,
  dropAccount,
  type EvictChoice,
  type Evicted,
} from "./backfill.js";
export {
  CACHE_WRITE_WAIT_MS,
  CacheBusyError,
  endWaits,
  isBusy,
  waitOnTimers,
  writeWhenFree,
} from "./busy.js";
export {
  type Address,
  type CacheRow,
  CursorError,
  type SearchCacheOptions,
  type SearchCacheResult,
  makeSnippet,
  searchCache,
} from "./search.js";
export {
  type AccountCacheState,
  type CacheAnswerability,
  type CacheStatus,
  type CacheStatusOptions,
  DEFAULT_FRESH_SECONDS,
  DEFAULT_MAX_SIZE,
  cacheCanAnswerQuery,
  cacheStatus,
  folderFresh,
} from "./status.js";
export {
  type InboxWatch,
  isWatched,
  newMailFolder,
  recordWatchError,
  watchError,
  watchInbox,
  watchKeepsFresh,
  watchFolderFor,
  watchMode,
  type WatchMode,
  noteCacheRead,
} from "./watch.js";
export { compactFts, ftsNeedsMerge } from "./fts.js";
export { truncateWal } from "./checkpoint.js";
export { REPACK_MIN_ADDED, repackIndexes } from "./repack.js";
export { type FolderRow, getFolder } from "./store.js";
export { canonicalThreadKey } from "../thread-key.js";
export { htmlToPlain, textFromSource } from "./body.js";
