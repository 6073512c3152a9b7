/** Events: read_events, over the daemon's event log (watch.read). */
import {
  EVENT_KINDS,
  EVENTS_LIMIT,
  EventCursorField,
  EventKindsField,
  EventsLimitField,
  GROUP_PATTERN,
  GROUP_RULE,
  GroupField,
  InField,
  ITEM_CHANGES,
  ItemIdField,
  type MailEvent,
  WAIT_SECONDS,
  WaitSecondsField,
} from "@mcpforge/chainmail";
import { hints, openWorld, toolFactory, Untrusted, untrusted, untrustedField } from "@mcpforge/toolkit";
import { z } from "zod";
import { type ChainmailContext, GROUPS, type GateState } from "../context.js";
import { SearchRow } from "../schemas.js";
import { accountList } from "../schemas.js";
import { searchRow } from "../shape.js";

const tool = toolFactory<ChainmailContext, GateState>({ group: GROUPS.events, scope: null });

const Event = z.object({
  id: z.number().int().describe("The event's position: pass the last one read as cursor"),
  time: z.string().describe("RFC 3339, when the daemon recorded it"),
  kind: z.enum(EVENT_KINDS),
  account: z.string().nullable().describe("null for a gap of every account and for item events"),
  folder: untrustedField("The folder the event is about").optional(),
  item_id: z.string().optional().describe("item and item_mail: the work item"),
  ref: z.string().optional().describe("new, flags, expunged, item_mail: the message's ref"),
  row: SearchRow.optional().describe("new and item_mail: the message's search row"),
  flags: z.array(z.string()).optional().describe("flags: the message's system flags now"),
  keywords: z.array(Untrusted).optional().describe("flags: the message's other flags now"),
  labels: z.array(Untrusted).optional().describe("Gmail labels, on Google accounts"),
  state: z.enum(["ok", "error"]).optional().describe("status: the account's connection state"),
  error: z.string().optional().describe("status: the reason, such as AUTH_REJECTED"),
  reason: z
    .enum(["first_sync", "uidvalidity", "retention", "cursor"])
    .optional()
    .describe("gap: why events are missing"),
  change: z.enum(ITEM_CHANGES).optional().describe("item: what happened to the item"),
  revision: z
    .number()
    .int()
    .optional()
    .describe("item: the revision of the change (list_items takes it as changed_since)"),
  thread_key: untrustedField("item_mail: the linked thread").optional(),
});

function shapeEvent(e: MailEvent): z.output<typeof Event> {
  return {
    id: e.id,
    time: e.time,
    kind: e.kind,
    account: e.account,
    ...(e.folder !== undefined ? { folder: untrusted(e.folder) } : {}),
    ...(e.item_id !== undefined ? { item_id: e.item_id } : {}),
    ...(e.ref !== undefined ? { ref: e.ref } : {}),
    ...(e.row !== undefined ? { row: searchRow(e.row) } : {}),
    ...(e.flags !== undefined ? { flags: e.flags } : {}),
    ...(e.keywords !== undefined ? { keywords: e.keywords.map(untrusted) } : {}),
    ...(e.labels !== undefined ? { labels: e.labels.map(untrusted) } : {}),
    ...(e.state !== undefined ? { state: e.state } : {}),
    ...(e.error !== undefined ? { error: e.error } : {}),
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    ...(e.change !== undefined ? { change: e.change } : {}),
    ...(e.revision !== undefined ? { revision: e.revision } : {}),
    ...(e.thread_key !== undefined ? { thread_key: untrusted(e.thread_key) } : {}),
  };
}

export const eventTools = [
  tool({
    name: "read_events",
    title: "Read mail events",
    description:
      "Reads mail and item events after a cursor or a group's acknowledged position, oldest first, waiting up to 60 seconds for the first. A group read acknowledges every event up to next_cursor, those its filters (accounts, in, kinds, item) left out too, so readers with different filters need different groups; a group that has never read starts at the log's end at its first read, so it gets what happens from then on (cursor 0 reads from the oldest event kept, after a retention gap when older ones were deleted). New events carry the message's search row as untrusted. item and item_mail events come only when kinds names them or item is set. To wait for mail, call read_events with a group and wait_seconds 60, again and again.",
    input: {
      accounts: accountList("Accounts to return events for; empty means every account"),
      cursor: EventCursorField.optional().describe(
        "next_cursor from an earlier read; reads the events after it; 0 reads from the oldest event kept, after a retention gap when older ones were deleted; not with group",
      ),
      // The pattern advertises the name rule; the daemon's own check words the refusal.
      group: GroupField.regex(GROUP_PATTERN, GROUP_RULE)
        .optional()
        .describe(
          "A consumer group name of lowercase letters, digits, dot, dash and underscore, up to 64 characters, not starting with cache.; reads after the group's acknowledged event (a new group starts at the log's end at its first read) and acknowledges up to next_cursor, events its filters left out included; not with cursor",
        ),
      in: InField.optional().describe(
        "A folder name or Gmail label, in any case; inbox also matches the Gmail label \\Inbox and sent matches \\Sent",
      ),
      item: ItemIdField.optional().describe(
        "A work item ID: only item and item_mail events of that item and of every item that was below it when the event happened (a move into or out of it included, what a moved item does afterwards belongs to its new place), plus status and gap; new, flags and expunged events are left out",
      ),
      kinds: EventKindsField.optional().describe(
        "Event kinds to return: new, flags, expunged, status, gap, item, item_mail; empty means every kind but item and item_mail, which are opt-in, unless item is set, when it means item, item_mail, status and gap; status and gap events pass a list that names neither",
      ),
      limit: EventsLimitField.default(EVENTS_LIMIT.default).describe(
        `Events per read, ${EVENTS_LIMIT.min} to ${EVENTS_LIMIT.max}; default ${EVENTS_LIMIT.default}`,
      ),
      wait_seconds: WaitSecondsField.default(WAIT_SECONDS.default).describe(
        `Seconds to wait for the first event when none is ready, ${WAIT_SECONDS.min} to ${WAIT_SECONDS.max}; default 0 returns at once`,
      ),
    },
    output: {
      events: z.array(Event),
      next_cursor: z.number().int().describe("Pass as cursor for the next read"),
    },
    annotations: openWorld(hints.additive),
    summary: (r) =>
      `${r.events.length} event${r.events.length === 1 ? "" : "s"}; next_cursor ${r.next_cursor}`,
    handler: async (input, { ctx, signal, afterResult }) => {
      const group = input.group;
      // The daemon does not acknowledge a group read from here (defer_ack): the position moves
      // once this result has gone out to the MCP client, so a call cancelled before then, or
      // whose result is never sent, acknowledges nothing. The previous read's acknowledgement
      // reaches the daemon before this read starts.
      if (group !== undefined) await ctx.acks.settled(group);
      // A wait gets a connection of its own, closed when the caller cancels, which ends the wait.
      const client = input.wait_seconds > 0 ? ctx.client.dedicated() : ctx.client;
      const hangUp = () => client.close();
      if (client !== ctx.client) signal.addEventListener("abort", hangUp, { once: true });
      try {
        const r = await client.readEvents({
          accounts: input.accounts ?? [],
          ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
          ...(group !== undefined ? { group, defer_ack: true } : {}),
          ...(input.in !== undefined ? { in: input.in } : {}),
          ...(input.item !== undefined ? { item: input.item } : {}),
          kinds: input.kinds ?? [],
          limit: input.limit,
          wait_seconds: input.wait_seconds,
        });
        if (group !== undefined) afterResult(() => ctx.acks.send(group, r.next_cursor));
        return { events: r.events.map(shapeEvent), next_cursor: r.next_cursor };
      } finally {
        if (client !== ctx.client) {
          signal.removeEventListener("abort", hangUp);
          client.close();
        }
      }
    },
  }),
];
