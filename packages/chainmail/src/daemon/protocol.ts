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

/** The method names and their types come from the operation table (src/daemon/operations). */
export { METHODS, type Method, type ParamsOf, type ResultOf } from "./operations/index.js";
