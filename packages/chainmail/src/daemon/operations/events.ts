/** The event log's operations: read_events and the watch service's status and groups. */
import { z } from "zod";
import {
  EVENT_KINDS,
  EVENTS_LIMIT,
  GROUP_NAME_CHARS,
  MAX_EVENT_CURSOR,
  MAX_GROUP_NAME,
  MAX_IN_LENGTH,
  RESERVED_GROUP_PREFIX,
  WAIT_SECONDS,
} from "../../events/limits.js";
import type { ReadEventsResult } from "../../events/log.js";
import type { WatchGroup, WatchStatus } from "../../service/events.js";
import { operation } from "./define.js";
import { AccountsField } from "./fields.js";
import { ItemIdField } from "./items.js";

export const GROUP_RULE = `group must be 1 to ${MAX_GROUP_NAME} of lowercase letters, digits, dot, dash and underscore, not starting with ${RESERVED_GROUP_PREFIX}`;

export const GroupField = z
  .string()
  .max(MAX_GROUP_NAME)
  .refine((s) => GROUP_NAME_CHARS.test(s) && !s.startsWith(RESERVED_GROUP_PREFIX), { error: GROUP_RULE });
export const EventCursorField = z.number().int().min(0).max(MAX_EVENT_CURSOR);
export const EventKindsField = z.array(z.enum(EVENT_KINDS)).max(EVENT_KINDS.length);
export const EventsLimitField = z.number().int().min(EVENTS_LIMIT.min).max(EVENTS_LIMIT.max);
export const WaitSecondsField = z.number().int().min(WAIT_SECONDS.min).max(WAIT_SECONDS.max);
export const InField = z.string().min(1).max(MAX_IN_LENGTH);

export const eventOperations = {
  /**
   * A group read acknowledges what it returns once the reply is written, or, with `defer_ack`, not
   * at all: the caller sends `watch.ack` once its own reader has the page (see the README).
   */
  "watch.read": operation<ReadEventsResult>()({
    params: z.object({
      accounts: AccountsField.default([]),
      cursor: EventCursorField.optional(),
      group: GroupField.optional(),
      defer_ack: z.boolean().default(false),
      // The client's own name for itself (DaemonClient sends one): see src/events/leases.ts.
      reader: z.string().min(1).max(64).optional(),
      in: InField.optional(),
      item: ItemIdField.optional(),
      kinds: EventKindsField.default([]),
      limit: EventsLimitField.default(EVENTS_LIMIT.default),
      wait_seconds: WaitSecondsField.default(WAIT_SECONDS.default),
    }),
    audit: "watch.read",
    mutates: false,
  }),
  /** Moves a group to a deferred read's next_cursor (never back, never past the log's end). */
  "watch.ack": operation<{ group: string; acked: number }>()({
    params: z.object({ group: GroupField, cursor: EventCursorField }),
    audit: "watch.ack",
    mutates: false,
  }),
  "watch.status": operation<WatchStatus>()({ params: z.object({}), audit: null, mutates: false }),
  "watch.groups": operation<{ groups: WatchGroup[] }>()({
    params: z.object({}),
    audit: null,
    mutates: false,
  }),
  "watch.groups.delete": operation<{ group: string; deleted: boolean }>()({
    params: z.object({ group: GroupField }),
    audit: "watch.groups.delete",
    mutates: false,
  }),
};
