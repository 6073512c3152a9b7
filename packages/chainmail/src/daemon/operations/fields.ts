/**
 * The parameter pieces operations share, as zod schemas with their bounds. The daemon checks params
 * with them; the MCP server builds its tool inputs from the same pieces (adding descriptions), so a
 * bound is written once, in src/limits.ts.
 */
import { z } from "zod";
import {
  IDEMPOTENCY_KEY_CHARS,
  KEYWORD_CHARS,
  MAX_ACCOUNT_NAME,
  MAX_UPLOAD_ID,
  MAX_ACCOUNTS_PER_CALL,
  MAX_BATCH,
  MAX_CURSOR_LENGTH,
  MAX_FLAGS_PER_CALL,
  MAX_FOLDER_NAME,
  MAX_GET_REFS,
  MAX_IDEMPOTENCY_KEY,
  MAX_KEYWORD_LENGTH,
  MAX_LABEL_LENGTH,
  MAX_PART_LENGTH,
  MAX_PATH_LENGTH,
  MAX_QUERY_LENGTH,
  MAX_REF_LENGTH,
  SEARCH_LIMIT,
  SEARCH_SOURCES,
} from "../../limits.js";

export const RefField = z.string().min(1).max(MAX_REF_LENGTH);
export const BatchRefsField = z.array(RefField).min(1).max(MAX_BATCH);
export const GetRefsField = z.array(RefField).min(1).max(MAX_GET_REFS);
export const AccountField = z.string().min(1).max(MAX_ACCOUNT_NAME);
export const AccountsField = z.array(AccountField).max(MAX_ACCOUNTS_PER_CALL);
export const FolderField = z.string().min(1).max(MAX_FOLDER_NAME);
export const PartField = z.string().min(1).max(MAX_PART_LENGTH);
export const DirField = z.string().min(1).max(MAX_PATH_LENGTH);
export const QueryField = z.string().max(MAX_QUERY_LENGTH);
export const CursorField = z.string().min(1).max(MAX_CURSOR_LENGTH);
export const SearchLimitField = z.number().int().min(SEARCH_LIMIT.min).max(SEARCH_LIMIT.max);
export const SourceField = z.enum(SEARCH_SOURCES);
export const LabelField = z.string().min(1).max(MAX_LABEL_LENGTH);
export const LabelsField = z.array(LabelField).max(MAX_FLAGS_PER_CALL);
/**
 * A flag as a tool takes it: seen, flagged, answered, draft or a keyword. The daemon reads flags
 * more loosely (MAX_FLAG_PARAM) and refuses a bad one itself with a message that says why.
 */
export const KeywordField = z
  .string()
  .min(1)
  .max(MAX_KEYWORD_LENGTH)
  .regex(KEYWORD_CHARS, "seen, flagged, answered, draft, or a keyword of A-Z a-z 0-9 $ _ . -");

/** A caller's idempotency key (create_item, the sending calls): one rule, so both name it the same way. */
export const IdempotencyKeyField = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY)
  .regex(IDEMPOTENCY_KEY_CHARS, "idempotency_key must be 1 to 128 of A-Z a-z 0-9 . _ : -");

/** An upload's id (upload.begin gives it), as upload.chunk/finish and send.raw name it. */
export const UploadIdField = z.string().min(1).max(MAX_UPLOAD_ID);
