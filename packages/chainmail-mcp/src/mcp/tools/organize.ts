/**
 * Organizing: the batch tools. Each takes 1 to 500 refs from any accounts, acts on each message's own
 * account, and returns one outcome per ref in order; only when every ref fails is the call an error
 * (the daemon raises it with the first failure's reason).
 */
import { KeywordField, LabelField, MAX_FLAGS_PER_CALL } from "@mcpforge/chainmail";
import { hints, openWorld, toolFactory } from "@mcpforge/toolkit";
import { z } from "zod";
import { type ChainmailContext, GROUPS, type GateState } from "../context.js";
import { BatchOutput, batchRefs, folderName } from "../schemas.js";
import { batch, batchSummary } from "../shape.js";

const tool = toolFactory<ChainmailContext, GateState>({ group: GROUPS.organizing, scope: null });

const OUTCOMES =
  "Returns one outcome per ref in the order given, with succeeded and failed counts; an outcome has new_ref when the message has a new ref afterwards, and error when that ref failed while the others still ran. Only when every ref fails is the call an error, with the first failure's reason.";

const destination = folderName(
  "The destination folder on each message's own account, as list_folders names it",
);

export const organizeTools = [
  tool({
    name: "move",
    title: "Move messages",
    description: `Moves messages to a folder on each message's own account. Use each outcome's new_ref from then on. ${OUTCOMES}`,
    input: { refs: batchRefs(), folder: destination },
    output: BatchOutput,
    annotations: openWorld(hints.idempotentWrite),
    summary: (r) => batchSummary("Moved", r),
    handler: async ({ refs, folder }, { ctx }) => batch(await ctx.client.move({ refs, folder })),
  }),

  tool({
    name: "copy",
    title: "Copy messages",
    description: `Copies messages to a folder on each message's own account; new_ref is the copy's ref. ${OUTCOMES}`,
    input: { refs: batchRefs(), folder: destination },
    output: BatchOutput,
    annotations: openWorld(hints.additive),
    summary: (r) => batchSummary("Copied", r),
    handler: async ({ refs, folder }, { ctx }) => batch(await ctx.client.copy({ refs, folder })),
  }),

  tool({
    name: "archive",
    title: "Archive messages",
    description: `Moves messages out of the inbox into the account's archive: its archive folder on most accounts, and on Google by removing the Inbox label. ${OUTCOMES}`,
    input: { refs: batchRefs() },
    output: BatchOutput,
    annotations: openWorld(hints.idempotentWrite),
    summary: (r) => batchSummary("Archived", r),
    handler: async ({ refs }, { ctx }) => batch(await ctx.client.archive({ refs })),
  }),

  tool({
    name: "trash",
    title: "Move messages to Trash",
    description: `Moves messages to their account's Trash folder. Nothing is deleted for good. ${OUTCOMES}`,
    input: { refs: batchRefs() },
    output: BatchOutput,
    annotations: openWorld(hints.idempotentWrite),
    summary: (r) => batchSummary("Trashed", r),
    handler: async ({ refs }, { ctx }) => batch(await ctx.client.trash({ refs })),
  }),

  tool({
    name: "expunge",
    title: "Expunge messages",
    description: `Deletes messages for good. Listed only while the policy allows expunge on at least one account; the daemon still checks each message's account and refuses with POLICY_DENIED where it is not allowed. ${OUTCOMES}`,
    input: { refs: batchRefs() },
    output: BatchOutput,
    annotations: openWorld(hints.destructiveIdempotent),
    visibleWhen: (s) => s.expungeAllowedSomewhere,
    summary: (r) => batchSummary("Expunged", r),
    handler: async ({ refs }, { ctx }) => batch(await ctx.client.expunge({ refs })),
  }),

  tool({
    name: "set_flags",
    title: "Set flags",
    description: `Adds and removes the flags seen, flagged, answered and draft, and keywords. ${OUTCOMES}`,
    input: {
      refs: batchRefs(),
      add: z
        .array(KeywordField)
        .max(MAX_FLAGS_PER_CALL)
        .optional()
        .describe("Flags to add: seen, flagged, answered, draft, or keywords of A-Z a-z 0-9 $ _ . -"),
      remove: z
        .array(KeywordField)
        .max(MAX_FLAGS_PER_CALL)
        .optional()
        .describe("Flags to remove, named as in add"),
    },
    output: BatchOutput,
    annotations: openWorld(hints.idempotentWrite),
    summary: (r) => batchSummary("Set flags on", r),
    handler: async ({ refs, add, remove }, { ctx }) =>
      batch(await ctx.client.setFlags({ refs, add: add ?? [], remove: remove ?? [] })),
  }),

  tool({
    name: "set_labels",
    title: "Set Gmail labels",
    description: `Adds and removes Gmail labels. Accounts other than Google refuse it; use move there. ${OUTCOMES}`,
    input: {
      refs: batchRefs("1 to 500 refs from search, on Google accounts"),
      add: z
        .array(LabelField)
        .max(MAX_FLAGS_PER_CALL)
        .optional()
        .describe(
          "Labels to add; a missing label is created; the system labels \\Inbox, \\Important, \\Starred, \\Sent and \\Draft are accepted",
        ),
      remove: z.array(LabelField).max(MAX_FLAGS_PER_CALL).optional().describe("Labels to remove"),
    },
    output: BatchOutput,
    annotations: openWorld(hints.idempotentWrite),
    summary: (r) => batchSummary("Set labels on", r),
    handler: async ({ refs, add, remove }, { ctx }) =>
      batch(await ctx.client.setLabels({ refs, add: add ?? [], remove: remove ?? [] })),
  }),
];
