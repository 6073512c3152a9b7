export * from "./ast.js";
export { QueryParseError, QueryCompileError } from "./errors.js";
export { parseQuery, parseDate, MAX_DEPTH } from "./parser.js";
export { formatQuery } from "./format.js";
export {
  type FolderInfo,
  type FolderRole,
  type QueryNeeds,
  bindQuery,
  cacheCanAnswer,
  evaluate,
  folderInScope,
  inMatchesFolder,
  mentionsIn,
  queryNeeds,
  roleFromSpecialUse,
  splitAccounts,
} from "./analyze.js";
export {
  type AddrDriver,
  type FtsTable,
  type SqlWhere,
  type SqlOptions,
  compileToSql,
  exactAddress,
  dateFloor,
  listColumn,
  listItem,
  ftsString,
} from "./sql.js";
export { type ImapPlan, compileToImap, compileToGmailRaw } from "./imap.js";
export { imapSearchFolder } from "./imap-run.js";
export { type AttachmentInfo, attachmentsFromStructure } from "./structure.js";
export { ageCutoffMs, dayStartMs } from "./time.js";
