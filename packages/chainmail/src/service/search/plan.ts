/**
 * Which path answers each account: the server, or the cache when it is complete and fresh for the
 * query (source "auto"); a forced cache answer says in `partial` which folders may lack matches.
 */
import { cacheCanAnswerQuery } from "../../cache/index.js";
import type { QueryNode } from "../../query/ast.js";
import { type ServiceContext, cacheOf } from "../context.js";
import type { Plan, SearchParams, SearchResult } from "./types.js";

export function planAccounts(
  ctx: ServiceContext,
  p: SearchParams,
  perAccount: Map<string, QueryNode>,
  partial: SearchResult["partial"],
): Plan[] {
  const plans: Plan[] = [];
  for (const [name, bound] of perAccount) {
    if (p.source === "server" || !ctx.cache) {
      if (p.source === "cache") cacheOf(ctx);
      plans.push({ name, bound, use: "server" });
      continue;
    }
    const can = cacheCanAnswerQuery(ctx.cache.db, name, bound, {
      freshSeconds: ctx.cache.settings.fresh_seconds,
    });
    if (p.source === "cache") {
      // Forced: answer from what is cached, and say which folders may be missing matches.
      for (const l of can.lacking) {
        partial.push({
          account: name,
          folder: l.folder,
          error: {
            reason: "UNSUPPORTED",
            message: LACKING[l.reason],
            hint: 'Use source "auto" or "server" for a complete answer, or run `chainmail cache sync`.',
          },
        });
      }
      if (can.lacking.length === 0 && !can.complete) {
        partial.push({
          account: name,
          error: {
            reason: "UNSUPPORTED",
            message: LACKING.never_synced,
            hint: "Run `chainmail cache sync`, or use the server.",
          },
        });
      }
      plans.push({ name, bound, use: "cache" });
    } else {
      const use = can.complete && can.fresh && !ctx.cache.isDirty(name) ? "cache" : "server";
      plans.push({ name, bound, use });
    }
  }
  return plans;
}

const LACKING = {
  never_synced: "the cache has not synced this account or folder yet",
  headers: "the cache does not hold every message's headers of this folder yet",
  bodies: "the cache does not hold every body of this folder yet, so word searches may miss messages",
  stale: "the cache of this folder may be out of date",
} as const;
