/** Events and the cache: cache_status (read_events comes with the events issue). */
import { hints, toolFactory, untrusted, untrustedField } from "@mcpforge/toolkit";
import { z } from "zod";
import { type ChainmailContext, GROUPS, type GateState } from "../context.js";
import { accountList } from "../schemas.js";

const tool = toolFactory<ChainmailContext, GateState>({ group: GROUPS.events, scope: null });

const CacheFolder = z.object({
  name: untrustedField("The folder's name"),
  role: z.string().nullable(),
  messages: z.number().int().describe("Messages on the server at the last sync"),
  headers_cached: z.number().int(),
  backfill: z.number().describe("Share of the server's messages whose headers are cached, 0 to 1"),
  bodies_cached: z.number().int(),
  body_coverage: z.number().describe("Share of cached messages with a body indexed, 0 to 1"),
  complete: z.boolean(),
  fresh: z.boolean(),
  watching: z.boolean().describe("An IDLE connection keeps this folder fresh"),
  last_sync: z.string().nullable().describe("RFC 3339"),
  error: untrustedField("The last sync error, which may quote the server").nullable(),
});

/**
 * The folder's last sync error, else its watch's (a failed sync, IDLE or connection of the watch),
 * which is why a watched folder is not fresh; both may quote the server.
 */
function lastError(f: { error: string | null; watch_error: string | null }) {
  const text = f.error ?? f.watch_error;
  return text === null ? null : untrusted(text);
}

export const cacheTools = [
  tool({
    name: "cache_status",
    title: "Show the mail cache",
    description:
      "Reports each account's local cache: its state, backfill and body coverage per folder, today's download against the daily budget, and the cache's size against its maximum. It holds no message content; folder names are untrusted. Not audited.",
    input: { accounts: accountList("Accounts to report; empty means every account") },
    output: {
      accounts: z.array(
        z.object({
          account: z.string(),
          state: z.enum(["empty", "syncing", "ready", "stale", "error"]),
          last_sync: z.string().nullable().describe("RFC 3339"),
          download_today: z.object({ bytes: z.number().int(), budget_bytes: z.number().int() }),
          bodies_since: z
            .string()
            .nullable()
            .describe(
              "RFC 3339. Every cached message that arrived from then on has its body words indexed, so word searches of newer mail are complete in the cache; null when no body is indexed",
            ),
          body_budget_reached: z
            .boolean()
            .describe(
              "The cache's size bound stopped the body backfill: older bodies stay on the server, and word searches that may reach them go to the server",
            ),
          folders: z.array(CacheFolder),
        }),
      ),
      size_bytes: z.number().int(),
      max_size_bytes: z.number().int(),
    },
    annotations: hints.readOnly,
    summary: (r) =>
      `Cache of ${r.accounts.length} account${r.accounts.length === 1 ? "" : "s"}: ${r.size_bytes} of ${r.max_size_bytes} bytes`,
    handler: async ({ accounts }, { ctx }) => {
      const r = await ctx.client.cacheStatus({ accounts: accounts ?? [] });
      return {
        accounts: r.accounts.map((a) => ({
          account: a.account,
          state: a.state,
          last_sync: a.last_sync,
          download_today: { bytes: a.download_today.bytes, budget_bytes: a.download_today.budget_bytes },
          bodies_since: a.bodies_since,
          body_budget_reached: a.body_budget_reached,
          folders: a.folders.map((f) => ({
            name: untrusted(f.name),
            role: f.role,
            messages: f.messages,
            headers_cached: f.headers_cached,
            backfill: f.backfill,
            bodies_cached: f.bodies_cached,
            body_coverage: f.body_coverage,
            complete: f.complete,
            fresh: f.fresh,
            watching: f.watching,
            last_sync: f.last_sync,
            error: lastError(f),
          })),
        })),
        size_bytes: r.size_bytes,
        max_size_bytes: r.max_size_bytes,
      };
    },
  }),
];
