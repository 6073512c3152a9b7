/** read_events and the watch service's status and groups, over the event log. */
import { MailError } from "../errors.js";
import type { EventLog, ReadEventsParams, ReadEventsResult } from "../events/log.js";
import { type Call, type ServiceContext, accountsOf, audit, q } from "./context.js";

export interface WatchStatus {
  last_id: number;
  oldest_id: number | null;
  oldest_time: string | null;
  count: number;
  pruned_through: number;
  retention_seconds: number;
  cache_enabled: boolean;
  groups: number;
}

export interface WatchGroup {
  name: string;
  acked: number;
  /** Events kept after the acknowledged one, whatever filters the group's reader uses. */
  pending: number;
  created: string;
  updated: string;
}

const eventsOf = (ctx: ServiceContext): EventLog => ctx.events;

export async function readEvents(
  ctx: ServiceContext,
  call: Call,
  p: ReadEventsParams & { defer_ack?: boolean },
): Promise<ReadEventsResult> {
  // Unknown account names are NOT_FOUND, as everywhere else.
  const accounts = p.accounts.length ? accountsOf(ctx, p.accounts).map((a) => a.name) : [];
  const { result, commit, release } = await eventsOf(ctx).read({ ...p, accounts }, call.signal);
  const deferred = p.group !== undefined && p.defer_ack === true;
  const who = p.group !== undefined ? ` for group ${q(p.group)}${deferred ? " (ack deferred)" : ""}` : "";
  audit(ctx, call, null, "allowed", `${result.events.length} event(s)${who}, next ${result.next_cursor}`);
  // Deferred: the caller relays the page to its own reader (the MCP server to its client) and
  // acknowledges with watch.ack once that reader has it; a reply that never reaches the caller
  // frees the group for its other readers at once.
  if (call.afterReply) call.afterReply(deferred ? () => undefined : commit, release);
  else if (!deferred) commit();
  return result;
}

/** watch.ack: a deferred group read's acknowledgement, up to the next_cursor it returned. */
export function ackEvents(ctx: ServiceContext, call: Call, group: string, cursor: number) {
  const log = eventsOf(ctx);
  const last = log.store.lastId();
  if (cursor > last)
    throw new MailError(
      "INVALID_ARGUMENT",
      `cursor ${cursor} is past the event log's last id ${last}`,
      "Pass the next_cursor a read of this group returned.",
    );
  log.ack(group, cursor);
  const acked = log.store.group(group)?.acked ?? cursor;
  audit(ctx, call, null, "allowed", `group ${q(group)} acknowledged through ${acked}`);
  return { group, acked };
}

export function watchStatus(ctx: ServiceContext): WatchStatus {
  const s = eventsOf(ctx).store;
  const st = s.stats();
  return {
    last_id: s.lastId(),
    oldest_id: st.oldest,
    oldest_time: st.oldestTime,
    count: st.count,
    pruned_through: s.prunedThrough(),
    retention_seconds: ctx.config.events.retention_seconds,
    cache_enabled: ctx.cache !== undefined,
    groups: s.groups().length,
  };
}

export function watchGroups(ctx: ServiceContext): { groups: WatchGroup[] } {
  return { groups: eventsOf(ctx).store.groups() };
}

export function deleteWatchGroup(ctx: ServiceContext, call: Call, group: string) {
  const deleted = eventsOf(ctx).store.deleteGroup(group);
  audit(ctx, call, null, "allowed", `group ${q(group)} ${deleted ? "deleted" : "not found"}`);
  return { group, deleted };
}
