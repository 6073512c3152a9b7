/**
 * Sending and drafts: send_email, reply, forward, create_draft, update_draft, send_draft and
 * delete_draft. Each is a thin call of the daemon's operation (the daemon builds the message once,
 * keeps the outbox and checks the policy); this file only describes the inputs and wraps the text
 * that came from a mail server as untrusted.
 */
import {
  BodyField,
  BodyFormatField,
  type ComposeResult,
  COMPOSE_STATUSES,
  FilesField,
  HeadersField,
  IDEMPOTENCY_KEY_CHARS,
  InlineField,
  MAX_IDEMPOTENCY_KEY,
  RecipientsField,
  SubjectField,
} from "@mcpforge/chainmail";
import { hints, openWorld, toolFactory, untrusted, Untrusted, untrustedField } from "@mcpforge/toolkit";
import { z } from "zod";
import { type ChainmailContext, GROUPS, type GateState } from "../context.js";
import { account, ref } from "../schemas.js";
import { type ClientApproval, sendWithApproval } from "../approval.js";

const tool = toolFactory<ChainmailContext, GateState>({ group: GROUPS.sending, scope: null });

const recipients = (d: string) => RecipientsField.optional().describe(d);
const BODY = "The new text, Markdown unless body_format says otherwise";

/** The inputs every composing tool takes about the new text. */
const content = {
  attachments: FilesField.optional().describe("Absolute paths of files to attach, in order"),
  bcc: recipients("Blind-copied recipients"),
  body: BodyField.optional().describe(BODY),
  body_format: BodyFormatField.optional().describe("markdown (the default), text or html"),
  cc: recipients("Copied recipients"),
  headers: HeadersField.optional().describe("Extra headers: Reply-To and X- headers only"),
  html_text: BodyField.optional().describe(
    "With body_format html: the plain-text part; empty means derived from the HTML",
  ),
  inline: InlineField.optional().describe(
    "Images the body shows inline: each with name (how the body refers to it, as in ![chart](chart.png)) and path (its absolute path)",
  ),
  no_signature: z.boolean().optional().describe("Leave out the account's configured signature"),
};

/**
 * The seed gives an empty key a meaning ("derived from the input when empty"), so "" is taken as well
 * (the daemon reads it as absent); any other value is 1 to 128 of the key's characters.
 */
const KeyOrEmpty = z
  .string()
  .max(MAX_IDEMPOTENCY_KEY)
  // redos-ok: a fixed character class, anchored, under a 128-character bound
  .regex(new RegExp(`^(?:${IDEMPOTENCY_KEY_CHARS.source.replace(/^\^|\$$/g, "")})?$`));
const key = KeyOrEmpty.optional().describe(
  "1 to 128 of A-Z a-z 0-9 . _ : -; a repeat with the same key does not send twice; derived from the input when empty",
);
const keyAsInSend = KeyOrEmpty.optional().describe("As in send_email");

const ComposeOutput = {
  status: z
    .enum(COMPOSE_STATUSES)
    .describe(
      "sent: the server accepted it; draft: saved to Drafts; held: held by the policy, not sent, in Drafts for the account owner (do not retry); duplicate: a replay of an earlier send, nothing sent again",
    ),
  message_id: untrustedField("The Message-ID (sent, held)").optional(),
  sent_ref: z
    .string()
    .optional()
    .describe("The Sent copy's ref (sent); empty on Google or when the copy failed"),
  sent_copy_error: untrustedField("Why the Sent copy failed; the send itself succeeded").optional(),
  refused_recipients: z
    .array(Untrusted)
    .optional()
    .describe(
      "sent: recipients the SMTP server refused (address and its reply); the message went to every other recipient, and a retry sends nothing",
    ),
  idempotency_key: z.string().optional().describe("The key the send ran under (sent, held, duplicate)"),
  draft_ref: z
    .string()
    .optional()
    .describe("The draft's ref (draft, held); empty when the server did not report it"),
  blocked: z.array(Untrusted).optional().describe("held: the recipients the policy does not allow"),
  too_many_recipients: z.boolean().optional().describe("held: more recipients than the policy allows"),
  hint: z.string().optional().describe("held: what the account owner can do"),
  original_status: z.literal("sent").optional().describe("duplicate: the first call's status"),
};

/** Fails to compile when the output schema and the daemon's ComposeResult name different fields. */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
const composeOutputMatches: SameKeys<typeof ComposeOutput, Required<ComposeResult>> = true;
void composeOutputMatches;

function shaped(r: ComposeResult) {
  return {
    status: r.status,
    ...(r.message_id !== undefined ? { message_id: untrusted(r.message_id) } : {}),
    ...(r.sent_ref !== undefined ? { sent_ref: r.sent_ref } : {}),
    ...(r.sent_copy_error !== undefined ? { sent_copy_error: untrusted(r.sent_copy_error) } : {}),
    ...(r.refused_recipients !== undefined
      ? { refused_recipients: r.refused_recipients.map(untrusted) }
      : {}),
    ...(r.idempotency_key !== undefined ? { idempotency_key: r.idempotency_key } : {}),
    ...(r.draft_ref !== undefined ? { draft_ref: r.draft_ref } : {}),
    ...(r.blocked !== undefined ? { blocked: r.blocked.map(untrusted) } : {}),
    ...(r.too_many_recipients !== undefined ? { too_many_recipients: r.too_many_recipients } : {}),
    ...(r.hint !== undefined ? { hint: r.hint } : {}),
    ...(r.original_status !== undefined ? { original_status: r.original_status } : {}),
  };
}

const summary = (r: { status: string; refused_recipients?: unknown[] | undefined }) =>
  r.refused_recipients?.length
    ? `Sent to the other recipients; the SMTP server refused ${r.refused_recipients.length}`
    : ({
        sent: "Sent",
        draft: "Saved to Drafts",
        held: "Held by the policy: not sent, saved to Drafts for the account owner",
        duplicate: "Already sent with this idempotency key; nothing was sent again",
      }[r.status] ?? r.status);

/** Drops absent values, so the daemon fills its own defaults. */
const given = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** The draft tools expunge the old draft only while the policy allows expunge somewhere. */
const draftDestructive = (s: GateState) => ({ destructive: s.expungeAllowedSomewhere });
/** What the reference pages say of that live hint (the seed: destructive only with expunge allowed). */
const draftDestructiveWhen = {
  destructive:
    "while the policy allows expunge on at least one account (the daemon then expunges the old draft instead of moving it to Trash)",
};

const COMPOSE_RESULT =
  "Returns a compose result: status sent (message_id, sent_ref, sent_copy_error when the Sent copy failed, refused_recipients when the SMTP server refused some of them, idempotency_key), draft (draft_ref), held (draft_ref, blocked, too_many_recipients, hint, message_id, idempotency_key) or duplicate (original_status, idempotency_key).";

export const composeTools = [
  tool({
    name: "send_email",
    title: "Send an email",
    description: `Sends a new message from an account. Without idempotency_key, a key is derived from the tool, the input and the files' contents, so an identical call within 7 days returns duplicate and sends nothing. ${COMPOSE_RESULT}`,
    input: {
      account: account("The account to send from, as list_accounts names it"),
      ...content,
      idempotency_key: key,
      subject: SubjectField.describe("The subject line"),
      to: RecipientsField.min(1).describe("Recipients, each Name <a@b> or a@b"),
    },
    output: ComposeOutput,
    annotations: openWorld(hints.additive),
    summary,
    handler: async (input, { ctx, ask }) =>
      shaped(
        await sendWithApproval(ctx, ask, "send", given(input), ctx.upload, async (approved) =>
          ctx.client.call("send", { ...(await ctx.upload(given(input))), approved }),
        ),
      ),
  }),

  tool({
    name: "reply",
    title: "Reply to a message",
    description: `Replies to a message, quoting it, with In-Reply-To, References and Re: set so it stays in its thread. all replies to everyone; draft saves the reply instead of sending it. ${COMPOSE_RESULT}`,
    input: {
      all: z
        .boolean()
        .optional()
        .describe("Reply to everyone: add the original To and Cc, less this account's own address"),
      ...content,
      cc: recipients("More copied recipients"),
      draft: z.boolean().optional().describe("Save the reply to Drafts instead of sending it"),
      idempotency_key: keyAsInSend,
      ref: ref("The message to reply to"),
      to: recipients("More recipients, added to the ones the reply goes to"),
    },
    output: ComposeOutput,
    annotations: openWorld(hints.additive),
    summary,
    handler: async (input, { ctx, ask }) => {
      const send = async (approved?: ClientApproval) =>
        ctx.client.call("reply", { ...(await ctx.upload(given(input))), approved });
      // A reply saved as a draft sends nothing: nothing to judge or ask.
      if (input.draft) return shaped(await send());
      return shaped(await sendWithApproval(ctx, ask, "reply", given(input), ctx.upload, send));
    },
  }),

  tool({
    name: "forward",
    title: "Forward a message",
    description: `Forwards a message with its attachments unless no_attachments. draft saves the forward instead of sending it. ${COMPOSE_RESULT}`,
    input: {
      ...content,
      draft: z.boolean().optional().describe("Save the forward to Drafts instead of sending it"),
      idempotency_key: keyAsInSend,
      no_attachments: z.boolean().optional().describe("Leave out the original's attachments"),
      ref: ref("The message to forward"),
      to: RecipientsField.min(1).describe("Recipients, each Name <a@b> or a@b"),
    },
    output: ComposeOutput,
    annotations: openWorld(hints.additive),
    summary,
    handler: async (input, { ctx, ask }) => {
      const send = async (approved?: ClientApproval) =>
        ctx.client.call("forward", { ...(await ctx.upload(given(input))), approved });
      // A forward saved as a draft sends nothing: nothing to judge or ask.
      if (input.draft) return shaped(await send());
      return shaped(await sendWithApproval(ctx, ask, "forward", given(input), ctx.upload, send));
    },
  }),

  tool({
    name: "create_draft",
    title: "Create a draft",
    description: `Saves a new message to the account's Drafts without sending it. Each call saves a new draft. ${COMPOSE_RESULT}`,
    input: {
      account: account("The account whose Drafts folder gets it"),
      ...content,
      bcc: recipients("Blind-copied recipients, kept in a Bcc header until sent"),
      subject: SubjectField.optional().describe("The subject line"),
      to: recipients("Recipients, each Name <a@b> or a@b"),
    },
    output: ComposeOutput,
    annotations: openWorld(hints.additive),
    summary,
    handler: async (input, { ctx }) =>
      shaped(await ctx.client.call("draft.create", await ctx.upload(given(input)))),
  }),

  tool({
    name: "update_draft",
    title: "Update a draft",
    description: `Replaces a draft with a new version: what the call gives replaces the draft's value, what it leaves out is kept. The result's draft_ref is the new ref, and the old one is gone (expunged while the policy allows expunge, otherwise moved to Trash). ${COMPOSE_RESULT}`,
    input: {
      ...content,
      ref: ref("The draft to replace; it must be in Drafts"),
      subject: SubjectField.optional().describe("The subject line"),
      to: recipients("Recipients of the new version"),
    },
    output: ComposeOutput,
    annotations: openWorld(hints.additive),
    liveAnnotations: draftDestructive,
    annotationConditions: draftDestructiveWhen,
    summary,
    handler: async (input, { ctx }) =>
      shaped(await ctx.client.call("draft.update", await ctx.upload(given(input)))),
  }),

  tool({
    name: "send_draft",
    title: "Send a draft",
    description: `Sends a draft as it is (its Bcc header removed) and removes it from Drafts. ${COMPOSE_RESULT}`,
    input: {
      idempotency_key: keyAsInSend,
      ref: ref("The draft to send; it must be in Drafts"),
    },
    output: ComposeOutput,
    annotations: openWorld(hints.additive),
    liveAnnotations: draftDestructive,
    annotationConditions: draftDestructiveWhen,
    summary,
    handler: async (input, { ctx, ask }) =>
      shaped(
        await sendWithApproval(
          ctx,
          ask,
          "draft.send",
          given(input),
          async (p) => p,
          (approved) => ctx.client.call("draft.send", { ...given(input), approved }),
        ),
      ),
  }),

  tool({
    name: "delete_draft",
    title: "Delete a draft",
    description:
      "Deletes a draft. While allow_expunge is off, the daemon moves it to Trash. Returns ref and deleted (false when it was already gone).",
    input: { ref: ref("The draft to delete; it must be in Drafts") },
    output: {
      ref: z.string().describe("The ref as given"),
      deleted: z.boolean().describe("false when the draft was already gone"),
    },
    annotations: openWorld(hints.idempotentWrite),
    liveAnnotations: draftDestructive,
    annotationConditions: draftDestructiveWhen,
    summary: (r) => (r.deleted ? "Deleted the draft" : "The draft was already gone"),
    handler: async ({ ref }, { ctx }) => ctx.client.call("draft.delete", { ref }),
  }),
];
