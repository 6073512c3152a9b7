/**
 * The bounds of every daemon parameter, in one light module (no IMAP, MIME or SQLite code): the
 * operation declarations check params against them, the services rely on them, and the MCP server
 * advertises the same numbers in its tool schemas.
 */
export { MAX_REF_LENGTH } from "./refs.js";

/** Account names are 1-64 characters (config.toml's rule for `name`). */
export const MAX_ACCOUNT_NAME = 64;
/** At most this many account names in one call's `accounts`. */
export const MAX_ACCOUNTS_PER_CALL = 100;
/** The longest folder name a call takes (a namespace prefix may be added on the server). */
export const MAX_FOLDER_NAME = 500;
/** Refs per batch call (move, copy, archive, trash, expunge, flags, labels). */
export const MAX_BATCH = 500;
/** Refs per get_message call. */
export const MAX_GET_REFS = 50;
/** Flags or labels in one call's `add` (and again in `remove`). */
export const MAX_FLAGS_PER_CALL = 50;
/** The longest flag name the daemon reads; the service then checks the keyword rule below. */
export const MAX_FLAG_PARAM = 200;
/** Keywords: 1-100 of A-Z a-z 0-9 $ _ . - */
export const MAX_KEYWORD_LENGTH = 100;
export const KEYWORD_CHARS = /^[A-Za-z0-9$_.-]+$/;
/** The longest Gmail label name. */
export const MAX_LABEL_LENGTH = 225;
export const MAX_QUERY_LENGTH = 2000;
export const MAX_CURSOR_LENGTH = 1000;
export const SEARCH_LIMIT = { min: 1, max: 200, default: 25 } as const;
export const SEARCH_SOURCES = ["auto", "cache", "server"] as const;
export type SearchSource = (typeof SEARCH_SOURCES)[number];
/** A MIME part number such as 2 or 1.2.3. */
export const MAX_PART_LENGTH = 64;
/** The longest directory path a file-saving call takes (Linux's PATH_MAX). */
export const MAX_PATH_LENGTH = 4096;
export const AUDIT_LIMIT = { min: 1, max: 10_000, default: 1000 } as const;
/** audit.read's `action` and `since`. */
export const MAX_AUDIT_FILTER = 64;

// ---- composing and sending (send_email, reply, forward, drafts) ----
/** The most bytes of attachments and inline images one message carries (files read in full). */
export const MAX_ATTACHMENT_TOTAL = 25 * 1024 * 1024;
/** Files in one call's attachments (and again in inline). */
export const MAX_FILES_PER_CALL = 50;
/** Extra headers in one call, and the longest value of one. */
export const MAX_HEADERS = 20;
export const MAX_HEADER_VALUE = 998;
export const MAX_HEADER_NAME = 76;
/** Recipients in each of to, cc and bcc (the policy's max_recipients may hold a send below it). */
export const MAX_RECIPIENTS_PER_FIELD = 500;
export const MAX_ADDRESS_LENGTH = 998;
export const MAX_SUBJECT_LENGTH = 998;
/** The longest body (characters) a call takes: it travels in one protocol line. */
export const MAX_BODY_LENGTH = 1024 * 1024;
export const BODY_FORMATS = ["markdown", "text", "html"] as const;
export const IDEMPOTENCY_KEY_CHARS = /^[A-Za-z0-9._:-]{1,128}$/;
export const MAX_IDEMPOTENCY_KEY = 128;
/** A send with the same key within this window is a duplicate. */
export const IDEMPOTENCY_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** An inline image's name, as the body refers to it. */
export const MAX_INLINE_NAME = 255;

// ---- uploads (the MCP server hands files to the daemon before a compose call) ----
/** Bytes of one upload chunk before base64: well under the protocol's 4 MiB line. */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;
/** The longest base64 text of one chunk. */
export const MAX_UPLOAD_CHUNK_TEXT = Math.ceil(UPLOAD_CHUNK_BYTES / 3) * 4;
/** An upload no compose call used within this long is deleted. */
export const UPLOAD_TTL_MS = 10 * 60_000;
/** Bytes the spool holds at most, reserved at upload.begin (a few messages' worth). */
export const MAX_UPLOAD_SPOOL_BYTES = 4 * MAX_ATTACHMENT_TOTAL;
export const MAX_UPLOAD_ID = 64;
