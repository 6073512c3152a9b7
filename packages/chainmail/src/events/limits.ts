/**
 * The event log's vocabulary and read_events' bounds, in a light module (no SQLite, no IMAP) so the
 * operation declaration, the CLI and the MCP tool import the same values.
 */
export const EVENT_KINDS = ["new", "flags", "expunged", "status", "gap", "item", "item_mail"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];
/** Kinds a read returns only when `kinds` names them or `item` is set. */
export const OPT_IN_KINDS: readonly EventKind[] = ["item", "item_mail"];
/** Kinds that pass a `kinds` list that names neither of them. */
export const ALWAYS_KINDS: readonly EventKind[] = ["status", "gap"];
export const EVENTS_LIMIT = { min: 1, max: 200, default: 50 } as const;
export const WAIT_SECONDS = { min: 0, max: 60, default: 0 } as const;
export const MAX_GROUP_NAME = 64;
/** Lowercase letters, digits, dot, dash and underscore; `cache.` is kept for the daemon's own readers. */
export const GROUP_NAME_CHARS = /^[a-z0-9._-]+$/;
export const RESERVED_GROUP_PREFIX = "cache.";
/** The whole group name rule as one pattern, for schemas that advertise it. */
export const GROUP_PATTERN = /^(?!cache\.)[a-z0-9._-]{1,64}$/;
export const MAX_EVENT_CURSOR = Number.MAX_SAFE_INTEGER;
export const MAX_IN_LENGTH = 500;
