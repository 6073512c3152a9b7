/**
 * The query as the search service takes it: parsed (a parse error as INVALID_ARGUMENT), with item:
 * terms bound to their threads.
 */
import { MailError } from "../../errors.js";
import { leaves, mapLeaves, type QueryNode } from "../../query/ast.js";
import { QueryParseError } from "../../query/errors.js";
import { FIELDS } from "../../query/lexer.js";
import { parseQuery } from "../../query/parser.js";
import { type ServiceContext, cacheOf } from "../context.js";
import { itemsOf } from "../items.js";
import type { SearchParams } from "./types.js";

/** Fills each item: term with the threads linked to that item and the live items below it. */
export function withItemThreads(
  ctx: ServiceContext,
  ast: QueryNode,
  source: SearchParams["source"],
): QueryNode {
  if (!leaves(ast).some((l) => l.kind === "item")) return ast;
  if (source === "server")
    throw new MailError(
      "UNSUPPORTED",
      'item: searches need the cache, so source "server" refuses them',
      'Use source "auto" or "cache".',
    );
  cacheOf(ctx);
  const items = itemsOf(ctx);
  return mapLeaves(ast, (leaf) =>
    leaf.kind === "item"
      ? {
          ...leaf,
          threads: items.threadsUnder(leaf.value).map((t): [string, string] => [t.account, t.thread_key]),
        }
      : leaf,
  );
}

export function parse(query: string): QueryNode {
  try {
    return parseQuery(query);
  } catch (err) {
    if (err instanceof QueryParseError)
      throw new MailError(
        "INVALID_ARGUMENT",
        `query: ${err.message}`,
        err.expected === "a known field"
          ? `The fields are ${[...FIELDS].map((f) => `${f}:`).join(", ")}. To search for the word itself, put it in quotes.`
          : undefined,
      );
    throw new MailError("INVALID_ARGUMENT", `query: ${(err as Error).message}`);
  }
}
