/**
 * A search's next_cursor: what it holds (the query's hash and where the next page starts), and its
 * decoding.
 */
import crypto from "node:crypto";
import { MailError } from "../../errors.js";
import type { SearchParams } from "./types.js";

function cursorKey(p: SearchParams): string {
  const basis = JSON.stringify([p.query, [...p.accounts].sort(), p.threads, p.source]);
  return crypto.createHash("sha256").update(basis).digest("base64url").slice(0, 16);
}

/**
 * Where the next page starts. `s`: per stream (a server folder, "account\u0000path", or a cache
 * account, "account"), how many of its rows earlier pages took, and for a server folder the UID of
 * the last one ([taken, uid]): the next page resumes after that UID in the folder's new answer, so
 * mail that arrived between pages does not shift it, and falls back to the count when the message
 * is gone. A page of N merged from several folders so fetches at most N envelopes per folder. `o`: an offset into the whole collapsed list (threads: true,
 * which needs every match's thread to collapse). `c`: the cache's keyset cursor (cache-only searches).
 */
/** A stream's position: rows taken, and the UID of the last one (server folders). */
export interface StreamPos {
  taken: number;
  uid?: number;
}

type CursorPos = { o: number } | { c: string } | { s: Record<string, number | [number, number]> };

/** A cursor holds the query's hash and its position (CursorPos). */
export function encodeCursor(p: SearchParams, pos: CursorPos): string {
  return `c1.${Buffer.from(JSON.stringify({ k: cursorKey(p), ...pos })).toString("base64url")}`;
}

export function badCursor(): MailError {
  return new MailError(
    "INVALID_ARGUMENT",
    "cursor is not a next_cursor of this search",
    "Pass next_cursor unchanged, with the same query and arguments.",
  );
}

export type DecodedCursor =
  | { kind: "none"; cache: null }
  | { kind: "offset"; offset: number }
  | { kind: "cache"; cache: string }
  | { kind: "streams"; streams: Map<string, StreamPos> };

export function decodeCursor(p: SearchParams): DecodedCursor {
  if (!p.cursor) return { kind: "none", cache: null };
  if (!p.cursor.startsWith("c1.")) throw badCursor();
  let v: { k?: unknown; o?: unknown; c?: unknown; s?: unknown };
  try {
    v = JSON.parse(Buffer.from(p.cursor.slice(3), "base64url").toString("utf8")) as typeof v;
  } catch {
    throw badCursor();
  }
  if (typeof v !== "object" || v === null || v.k !== cursorKey(p)) throw badCursor();
  if (typeof v.o === "number" && Number.isInteger(v.o) && v.o >= 0) return { kind: "offset", offset: v.o };
  if (typeof v.c === "string" && v.c.length > 0) return { kind: "cache", cache: v.c };
  if (typeof v.s === "object" && v.s !== null && !Array.isArray(v.s)) {
    const streams = new Map<string, StreamPos>();
    const count = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0;
    for (const [key, v2] of Object.entries(v.s)) {
      if (count(v2)) streams.set(key, { taken: v2 });
      else if (Array.isArray(v2) && v2.length === 2 && count(v2[0]) && count(v2[1]))
        streams.set(key, { taken: v2[0], uid: v2[1] });
      else throw badCursor();
    }
    return { kind: "streams", streams };
  }
  throw badCursor();
}
