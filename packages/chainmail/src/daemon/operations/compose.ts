/** Sending and drafts: send, reply, forward and the draft.* operations, plus the CLI's outbox.* calls. */
import { z } from "zod";
import type { ComposeResult, DeleteDraftResult, SendJudgement } from "../../compose/result.js";
import {
  BODY_FORMATS,
  MAX_ADDRESS_LENGTH,
  MAX_BODY_LENGTH,
  MAX_FILES_PER_CALL,
  MAX_HEADER_NAME,
  MAX_HEADER_VALUE,
  MAX_INLINE_NAME,
  MAX_PATH_LENGTH,
  MAX_RECIPIENTS_PER_FIELD,
  MAX_SUBJECT_LENGTH,
} from "../../limits.js";
import type { OutboxRow } from "../../store/outbox.js";
import { operation } from "./define.js";
import { AccountField, IdempotencyKeyField, RefField, UploadIdField } from "./fields.js";

export const AddressField = z.string().min(1).max(MAX_ADDRESS_LENGTH);
export const RecipientsField = z.array(AddressField).max(MAX_RECIPIENTS_PER_FIELD);
export const SubjectField = z.string().max(MAX_SUBJECT_LENGTH);
export const BodyField = z.string().max(MAX_BODY_LENGTH);
export const BodyFormatField = z.enum(BODY_FORMATS);
export const FilePathField = z.string().min(1).max(MAX_PATH_LENGTH);
export const FilesField = z.array(FilePathField).max(MAX_FILES_PER_CALL);
export const InlineField = z
  .array(z.object({ name: z.string().min(1).max(MAX_INLINE_NAME), path: FilePathField }))
  .max(MAX_FILES_PER_CALL);
/** Names and values are checked by the compose module, which explains each refusal. */
export const HeadersField = z.record(z.string().max(MAX_HEADER_NAME), z.string().max(MAX_HEADER_VALUE));

/** What every composing call takes about the new text. */
export const contentFields = {
  cc: RecipientsField.default([]),
  bcc: RecipientsField.default([]),
  body: BodyField.optional(),
  body_format: BodyFormatField.default("markdown"),
  html_text: BodyField.optional(),
  headers: HeadersField.optional(),
  attachments: FilesField.default([]),
  inline: InlineField.default([]),
  no_signature: z.boolean().default(false),
};

const compose = operation<ComposeResult>();
const key = { idempotency_key: IdempotencyKeyField.optional() };

/**
 * The person's OK to send what the policy would hold, given in the MCP client (elicitation) and
 * taken only from the `mcp` client on an account with hold_approval "client". The answer's id goes
 * to the audit row; the send itself stays under its idempotency key.
 */
export const ApprovalField = z.strictObject({
  by: z.literal("client"),
  answer_id: z.string().min(1).max(200),
  /** The judgement's `fingerprint`: the message approved is the one built from the same input. */
  judged: z.string().min(1).max(200),
});
export type Approval = z.output<typeof ApprovalField>;
const approval = { approved: ApprovalField.optional() };

export const sendParams = z.object({
  account: AccountField,
  to: RecipientsField.min(1),
  subject: SubjectField,
  ...contentFields,
  ...key,
  ...approval,
});
export const replyParams = z.object({
  ref: RefField,
  all: z.boolean().default(false),
  draft: z.boolean().default(false),
  to: RecipientsField.default([]),
  ...contentFields,
  ...key,
  ...approval,
});
export const forwardParams = z.object({
  ref: RefField,
  to: RecipientsField.min(1),
  draft: z.boolean().default(false),
  no_attachments: z.boolean().default(false),
  ...contentFields,
  ...key,
  ...approval,
});
export const createDraftParams = z.object({
  account: AccountField,
  to: RecipientsField.default([]),
  subject: SubjectField.optional(),
  ...contentFields,
});
export const updateDraftParams = z.object({
  ref: RefField,
  to: RecipientsField.optional(),
  subject: SubjectField.optional(),
  ...contentFields,
  cc: RecipientsField.optional(),
  bcc: RecipientsField.optional(),
  attachments: FilesField.optional(),
  inline: InlineField.optional(),
});
export const sendDraftParams = z.object({ ref: RefField, ...key, ...approval });

/**
 * `send.judge`: a sending operation (`op`) and its params, judged as that operation would send
 * them, without sending or saving (no draft, no outbox row). The params are checked against `op`'s
 * own, less `approved` and `draft` (a judgement is never a draft and never approved).
 */
export const judgedParams = {
  send: sendParams.omit({ approved: true }),
  reply: replyParams.omit({ approved: true, draft: true }),
  forward: forwardParams.omit({ approved: true, draft: true }),
  "draft.send": sendDraftParams.omit({ approved: true }),
};
export const judgeParams = z.object({
  op: z.enum(["send", "reply", "forward", "draft.send"]),
  params: z.record(z.string(), z.unknown()),
});
export type JudgeParams = z.output<typeof judgeParams>;

export type SendParams = z.output<typeof sendParams>;
export type ReplyParams = z.output<typeof replyParams>;
export type ForwardParams = z.output<typeof forwardParams>;
export type CreateDraftParams = z.output<typeof createDraftParams>;
export type UpdateDraftParams = z.output<typeof updateDraftParams>;

const outboxKey = z.object({ key: IdempotencyKeyField });

export const composeOperations = {
  send: compose({ params: sendParams, audit: "send", mutates: true }),
  reply: compose({ params: replyParams, audit: "reply", mutates: true }),
  forward: compose({ params: forwardParams, audit: "forward", mutates: true }),
  "draft.create": compose({ params: createDraftParams, audit: "draft.create", mutates: true }),
  "draft.update": compose({ params: updateDraftParams, audit: "draft.update", mutates: true }),
  "draft.send": compose({ params: sendDraftParams, audit: "draft.send", mutates: true }),
  // Reads the original or draft and any uploads; sends and saves nothing, so no audit row.
  "send.judge": operation<SendJudgement>()({ params: judgeParams, audit: null, mutates: false }),
  /**
   * `chainmail send-raw`: a prepared message the CLI uploaded first (upload.begin/chunk/finish), so
   * no path crosses to the daemon and a message of up to 25 MiB fits; only the `cli` client may call it.
   */
  "send.raw": compose({
    params: z.object({ account: AccountField, upload_id: UploadIdField, ...key }),
    audit: "send.raw",
    mutates: true,
  }),
  "draft.delete": operation<DeleteDraftResult>()({
    params: z.object({ ref: RefField }),
    audit: "draft.delete",
    mutates: true,
  }),
  "outbox.list": operation<{ rows: OutboxRow[] }>()({
    params: z.object({ status: z.enum(["pending", "sent", "held"]).optional() }),
    audit: null,
    mutates: false,
  }),
  "outbox.confirm": operation<{ key: string; confirmed: boolean }>()({
    params: outboxKey,
    audit: "outbox.confirm",
    mutates: false,
  }),
  "outbox.release": operation<{ key: string; released: boolean }>()({
    params: outboxKey,
    audit: "outbox.release",
    mutates: false,
  }),
};
