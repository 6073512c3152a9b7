/**
 * The daemon's wire protocol: one JSON object per line over a Unix socket.
 *   request  {"v":1,"id":<string|number>,"method":"folders.list","params":{...},"client":"cli"|"mcp"}
 *   response {"v":1,"id":...,"result":{...}}  or  {"v":1,"id":...,"error":{"reason","message","hint"}}
 * A request with another `v` gets an INVALID_ARGUMENT error naming the supported version.
 */
import type { WireError } from "../errors.js";

export const PROTOCOL_VERSION = 1;
/** Longest request line the daemon reads; longer ones are refused and the connection closed. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

export type ClientKind = "cli" | "mcp";

export interface Request {
  v: number;
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
  client: ClientKind;
}

export type Response =
  | { v: number; id: string | number | null; result: unknown }
  | { v: number; id: string | number | null; error: WireError };

export const METHODS = [
  "ping",
  "accounts.list",
  "account.test",
  "folders.list",
  "folders.create",
  "folders.rename",
  "folders.delete",
  "search",
  "messages.get",
  "thread.get",
  "attachment.download",
  "raw.save",
  "move",
  "copy",
  "archive",
  "trash",
  "expunge",
  "flags",
  "labels",
  "cache.status",
  "cache.sync",
  "audit.read",
] as const;

export type Method = (typeof METHODS)[number];
