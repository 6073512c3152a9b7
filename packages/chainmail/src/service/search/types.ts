/**
 * The search service's shapes: its parameters, the rows and result it answers, and the internal
 * hit/stream/plan records the paths pass around.
 */
import type { WireError } from "../../errors.js";
import type { SearchSource } from "../../limits.js";
import type { QueryNode } from "../../query/ast.js";

export type { SearchSource };

export interface SearchParams {
  query: string;
  accounts: string[];
  limit: number;
  cursor?: string | undefined;
  count_only: boolean;
  snippets: boolean;
  threads: boolean;
  source: SearchSource;
}

export interface SearchRow {
  ref: string;
  account: string;
  folder: string;
  date: string | null;
  from: { name: string; address: string } | null;
  subject: string;
  flags: string[];
  keywords: string[];
  size: number;
  has_attachment: boolean;
  message_id: string | null;
  thread_id: string;
  snippet?: string;
}

export interface SearchResult {
  rows: SearchRow[];
  count: number;
  next_cursor: string | null;
  source: "server" | "cache" | "mixed";
  account_counts: Array<{ account: string; count: number; source: "server" | "cache" }>;
  partial: Array<{ account: string; folder?: string; error: WireError }>;
}

/** A row with what merging and snippets need; stripped before the result leaves the service. */
export interface Hit extends SearchRow {
  sortDate: number;
  uid: number;
  path: string;
}

/** One server folder's matches, newest first: a stream the page is merged from. */
export interface Stream {
  key: string;
  path: string;
  name: string;
  count: number;
  uids: number[];
}

/** How one account is answered. */
export type Plan = { name: string; bound: QueryNode; use: "cache" | "server" };
