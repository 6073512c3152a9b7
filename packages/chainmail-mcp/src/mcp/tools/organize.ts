/**
 * Organizing: the batch tools. Each takes 1 to 500 refs from any accounts, acts on each message's own
 * account, and returns one outcome per ref in order; only when every ref fails is the call an error
 * (the daemon raises it with the first failure's reason).
 */
import { MAX_LABEL_LENGTH } from "@mcpforge/chainmail";
import { z } from "zod";
import { defineTool, GROUPS } from "../context.js";
import { BatchOutput, batchRefs, folderName } from "../schemas.js";
import { batch, batchSummary } from "../shape.js";

const group = GROUPS.organizing;

const OUTCOMES =
  "Returns one outcome per ref in the order given, with succeeded and failed counts; an outcome has new_ref when the message has a new ref afterwards, and error when that ref failed while the others still ran. Only when every ref fails is the call an error, with the first failure's reason.";

const destination = folderName(
  "The destination folder on each message's own account, as list_folders names it",
);

const FLAG = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9$_.-]+$/, "seen, flagged, answered, draft, or a keyword of A-Z a-z 0-9 $ _ . -");

const LABEL = z.string().min(1).max(MAX_LABEL_LENGTH);

export const organizeTools = [
  defineTool({
    name: "move",
    title: "Move messages",
    group,
    description: `Moves messages to a folder on each message's own account. Use each outcome's new_ref from then on. ${OUTCOMES}`,
    scope: null,
    input: { refs: batchRefs(), folder: destination },
    output: BatchOutput,
    annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
    summary: (r) => batchSummary("Moved", r),
    handler: async ({ refs, folder }, { ctx }) => batch(await ctx.client.move({ refs, folder })),
  }),

  defineTool({
    name: "copy",
    title: "Copy messages",
    group,
    description: `Copies messages to a folder on each message's own account; new_ref is the copy's ref. ${OUTCOMES}`,
    scope: null,
    input: { refs: batchRefs(), folder: destination },
    output: BatchOutput,
    annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
    summary: (r) => batchSummary("Copied", r),
    handler: async ({ refs, folder }, { ctx }) => batch(await ctx.client.copy({ refs, folder })),
  }),

  defineTool({
    name: "archive",
    title: "Archive messages",
    group,
    description: `Moves messages out of the inbox into the account's archive: its archive folder on most accounts, and on Google by removing the Inbox label. ${OUTCOMES}`,
    scope: null,
    input: { refs: batchRefs() },
    output: BatchOutput,
    annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
    summary: (r) => batchSummary("Archived", r),
    handler: async ({ refs }, { ctx }) => batch(await ctx.client.archive({ refs })),
  }),

  defineTool({
    name: "trash",
    title: "Move messages to Trash",
    group,
    description: `Moves messages to their account's Trash folder. Nothing is deleted for good. ${OUTCOMES}`,
    scope: null,
    input: { refs: batchRefs() },
    output: BatchOutput,
    annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
    summary: (r) => batchSummary("Trashed", r),
    handler: async ({ refs }, { ctx }) => batch(await ctx.client.trash({ refs })),
  }),

  defineTool({
    name: "expunge",
    title: "Expunge messages",
    group,
    description: `Deletes messages for good. Listed only while the policy allows expunge on at least one account; the daemon still checks each message's account and refuses with POLICY_DENIED where it is not allowed. ${OUTCOMES}`,
    scope: null,
    input: { refs: batchRefs() },
    output: BatchOutput,
    annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: true },
    visibleWhen: (s) => s.expungeAllowedSomewhere,
    summary: (r) => batchSummary("Expunged", r),
    handler: async ({ refs }, { ctx }) => batch(await ctx.client.expunge({ refs })),
  }),

  defineTool({
    name: "set_flags",
    title: "Set flags",
    group,
    description: `Adds and removes the flags seen, flagged, answered and draft, and keywords. ${OUTCOMES}`,
    scope: null,
    input: {
      refs: batchRefs(),
      add: z
        .array(FLAG)
        .max(50)
        .optional()
        .describe("Flags to add: seen, flagged, answered, draft, or keywords of A-Z a-z 0-9 $ _ . -"),
      remove: z.array(FLAG).max(50).optional().describe("Flags to remove, named as in add"),
    },
    output: BatchOutput,
    annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
    summary: (r) => batchSummary("Set flags on", r),
    handler: async ({ refs, add, remove }, { ctx }) =>
      batch(await ctx.client.setFlags({ refs, add: add ?? [], remove: remove ?? [] })),
  }),

  defineTool({
    name: "set_labels",
    title: "Set Gmail labels",
    group,
    description: `Adds and removes Gmail labels. Accounts other than Google refuse it; use move there. ${OUTCOMES}`,
    scope: null,
    input: {
      refs: batchRefs("1 to 500 refs from search, on Google accounts"),
      add: z
        .array(LABEL)
        .max(50)
        .optional()
        .describe(
          "Labels to add; a missing label is created; the system labels \\Inbox, \\Important, \\Starred, \\Sent and \\Draft are accepted",
        ),
      remove: z.array(LABEL).max(50).optional().describe("Labels to remove"),
    },
    output: BatchOutput,
    annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
    summary: (r) => batchSummary("Set labels on", r),
    handler: async ({ refs, add, remove }, { ctx }) =>
      batch(await ctx.client.setLabels({ refs, add: add ?? [], remove: remove ?? [] })),
  }),
];
