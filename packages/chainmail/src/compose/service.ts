/**
 * The compose operations over the account's IMAP and SMTP: each builds its MIME message once, then
 * sends it (under its idempotency key, see deliver.ts) or saves it to Drafts.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import type { AccountConfig } from "../config.js";
import { MailError } from "../errors.js";
import { attachedBytesAtLeast, fetchForQuote, fetchRaw } from "../imap/messages.js";
import { deriveKey, outboxOf } from "../outbox/index.js";
import { decodeRef, type MessageRef } from "../refs.js";
import { accountOf, audit, audited, type Call, type ServiceContext } from "../service/context.js";
import {
  type Approval,
  type CreateDraftParams,
  type ForwardParams,
  type JudgeParams,
  judgedParams,
  type ReplyParams,
  type SendParams,
  type UpdateDraftParams,
} from "../daemon/operations/compose.js";
import { parseParams } from "../daemon/operations/define.js";
import { type MailAddress, parseAddresses, uniqueAddresses } from "./addresses.js";
import { type BodyParts, bodyParts, type Quote } from "./body.js";
import { deliver, judgeOutgoing, type Outgoing } from "./deliver.js";
import { markOriginal, type OriginalMark } from "./mark.js";
import { attachRules, type LoadedFile, loadFile, totalSize } from "./files.js";
import { spoolOf } from "../service/uploads.js";
import { type Upload, UPLOAD_PREFIX } from "../uploads/spool.js";

import { checkHeaders } from "./headers.js";
import { ownAddresses } from "./policy.js";
import { appendTo, removeDraft, requireDraft, roleFolder } from "./mailbox.js";
import {
  buildMime,
  type ForwardedPart,
  type InlineImage,
  type MimeSpec,
  newCid,
  newMessageId,
} from "./mime.js";
import {
  forwardQuote,
  type Original,
  parseOriginal,
  prefixed,
  replyQuote,
  threadReferences,
} from "./original.js";
import type { ClientJudgement, ComposeResult, DeleteDraftResult, SendJudgement } from "./result.js";
import { MAX_ATTACHMENT_TOTAL } from "../limits.js";
import { draftForSending } from "./raw.js";

const fromUpload = (u: Upload): LoadedFile => ({
  filename: path.basename(u.source),
  content: u.content,
  sha256: u.sha256,
});

type Content = Pick<SendParams, "body" | "body_format" | "html_text" | "headers" | "no_signature"> & {
  attachments: string[];
  inline: Array<{ name: string; path: string }>;
};

interface Built {
  spec: Omit<MimeSpec, "keepBcc">;
  fileHashes: string[];
}

const refusedRoots = (ctx: ServiceContext) => attachRules(ctx.home, ctx.config.files);

/** The files, headers and body parts of a new message, checked before anything is sent or saved. */
function content(ctx: ServiceContext, account: AccountConfig, c: Content, quote?: Quote) {
  const headers = checkHeaders(c.headers);
  const roots = refusedRoots(ctx);
  // `upload:ID` names a file the client uploaded (src/uploads); anything else is a path to read.
  const load = (f: string, what: string) =>
    f.startsWith(UPLOAD_PREFIX)
      ? fromUpload(spoolOf(ctx).take(f.slice(UPLOAD_PREFIX.length)))
      : loadFile(f, what, roots);
  // A derived key sees the path the client read each upload from, so a retry that uploads the same
  // files again derives the same key.
  const sourceOf = (f: string) =>
    f.startsWith(UPLOAD_PREFIX) ? spoolOf(ctx).source(f.slice(UPLOAD_PREFIX.length)) : f;
  const paths = {
    attachments: c.attachments.map(sourceOf),
    inline: c.inline.map((img) => ({ ...img, path: sourceOf(img.path) })),
  };
  const attachments = c.attachments.map((f, i) => load(f, `attachments[${i}]`));
  const inline: Array<InlineImage & { name: string }> = c.inline.map((img, i) => ({
    ...load(img.path, `inline[${i}].path`),
    name: img.name,
    cid: newCid(),
  }));
  if (totalSize([...attachments, ...inline]) > MAX_ATTACHMENT_TOTAL)
    throw new MailError("INVALID_ARGUMENT", `the files add up to more than ${MAX_ATTACHMENT_TOTAL} bytes`);
  const body = bodyParts({
    body: c.body ?? "",
    format: c.body_format,
    htmlText: c.html_text,
    signature: c.no_signature ? undefined : account.signature,
    quote,
    cids: new Map(inline.map((i) => [i.name, i.cid])),
  });
  return {
    headers,
    attachments,
    inline,
    body,
    paths,
    fileHashes: [...attachments, ...inline].map((f) => f.sha256),
  };
}

const from = (a: AccountConfig): MailAddress => ({ name: a.display_name ?? "", address: a.address });

function recipients(lists: { to: string[]; cc: string[]; bcc: string[] }) {
  return {
    to: parseAddresses(lists.to, "to"),
    cc: parseAddresses(lists.cc, "cc"),
    bcc: parseAddresses(lists.bcc, "bcc"),
  };
}

const envelopeOf = (a: AccountConfig, s: Pick<MimeSpec, "to" | "cc" | "bcc">) => ({
  from: a.address,
  to: uniqueAddresses([...s.to, ...s.cc, ...s.bcc]).map((x) => x.address),
});

/** The caller's key, else the derived one; the derived one is the row's fingerprint either way. */
interface Keys {
  key: string;
  fingerprint: string;
}
const keysOf = (given: string | undefined, derived: string): Keys => ({
  key: given ?? derived,
  fingerprint: derived,
});

/**
 * What an approval of a message built here names: its input (the fingerprint) and what the account's
 * config adds to it (From's name and address, the signature, the envelope): the owner may change
 * config.toml between the question and the send, and the person approved the message they were shown.
 */
const judgedPrint = (fingerprint: string, config: unknown[]): string =>
  `j1.${createHash("sha256")
    .update(JSON.stringify([fingerprint, ...config]))
    .digest("hex")}`;

/**
 * What becomes of a send once it is built: delivered (the compose operations) or only judged
 * (`send.judge`, which sends and saves nothing). One build for both, so the judgement is of the
 * very envelope a send would hand to SMTP.
 */
type Sink<T> = (out: Outgoing) => Promise<T>;
const delivering =
  (ctx: ServiceContext, call: Call): Sink<ComposeResult> =>
  (out) =>
    deliver(ctx, call, out);

async function sendBuilt<T>(
  ctx: ServiceContext,
  sink: Sink<T>,
  account: AccountConfig,
  tool: string,
  keys: Keys,
  built: Built,
  approved: Approval | undefined,
  unreadable: string[] = [],
): Promise<T> {
  const raw = await buildMime({ ...built.spec, keepBcc: false });
  const envelope = envelopeOf(account, built.spec);
  return sink({
    account,
    tool,
    ...keys,
    judged: judgedPrint(keys.fingerprint, [built.spec.from, account.signature ?? null, envelope]),
    approved,
    preview: {
      subject: built.spec.subject,
      replyTo: built.spec.headers.find(([name]) => name.toLowerCase() === "reply-to")?.[1],
      text: built.spec.body.text,
      html: built.spec.body.html,
      files: [...built.spec.attachments, ...built.spec.inline],
    },
    facts: { unreadable },
    messageId: built.spec.messageId,
    raw,
    envelope,
    attachmentBytes: totalSize([...built.spec.attachments, ...built.spec.inline]),
    hold: async () => {
      const draft = await buildMime({ ...built.spec, keepBcc: true });
      return ctx.pool.write(account, async (client) =>
        appendTo(client, account, await roleFolder(client, account, "drafts"), draft, ["\\Draft"]),
      );
    },
  });
}

async function saveDraft(
  ctx: ServiceContext,
  call: Call,
  account: AccountConfig,
  spec: Omit<MimeSpec, "keepBcc">,
  summary: string,
  replacing?: MessageRef,
): Promise<ComposeResult> {
  const raw = await buildMime({ ...spec, keepBcc: true });
  return audited(ctx, call, account.name, summary, () =>
    ctx.pool.write(account, async (client) => {
      const ref = await appendTo(client, account, await roleFolder(client, account, "drafts"), raw, [
        "\\Draft",
        "\\Seen",
      ]);
      if (replacing) await removeDraft(client, account, replacing);
      return { status: "draft" as const, draft_ref: ref };
    }),
  );
}

/** A call's input for its derived key: the approval is about the send, not part of the message. */
const keyed = <P extends { approved?: Approval | undefined }>(p: P) => ({ ...p, approved: undefined });

export const sendEmail = (ctx: ServiceContext, call: Call, p: SendParams) =>
  sendEmailTo(ctx, delivering(ctx, call), p);

async function sendEmailTo<T>(ctx: ServiceContext, sink: Sink<T>, p: SendParams): Promise<T> {
  const account = accountOf(ctx, p.account);
  const c = content(ctx, account, p);
  const keys = keysOf(p.idempotency_key, deriveKey("send_email", { ...keyed(p), ...c.paths }, c.fileHashes));
  return sendBuilt(
    ctx,
    sink,
    account,
    "send_email",
    keys,
    {
      spec: {
        from: from(account),
        ...recipients(p),
        subject: p.subject,
        ...c,
        messageId: newMessageId(account.address),
        date: new Date(),
      },
      fileHashes: c.fileHashes,
    },
    p.approved,
  );
}

/** A forward whose original's attachments and the call's files add up past MAX_ATTACHMENT_TOTAL. */
const attachmentsTooLarge = () =>
  new MailError(
    "INVALID_ARGUMENT",
    `the attachments add up to more than ${MAX_ATTACHMENT_TOTAL} bytes`,
    "Leave out the original's attachments (no_attachments) or some of the files.",
  );

/**
 * The original a reply or forward answers, and its identity for a derived key: the account and its
 * Message-ID, or the SHA-256 of its bytes when it has none (of its header, for a large message read
 * by its text part: the same for every retry, as the way it is read depends on the message alone).
 * Never the ref, which changes whenever the message is moved (archived by the agent, a phone or a
 * server rule), so a retry after a move derives the same key and is not sent twice. Only a forward
 * that carries the original's attachments reads it whole; a reply, or a forward without them,
 * reads what it quotes (fetchForQuote: not a large message's attachments).
 */
async function readOriginal(
  ctx: ServiceContext,
  ref: string,
  attachments: boolean,
): Promise<{ account: AccountConfig; original: Original; identity: string }> {
  const r = decodeRef(ref);
  const account = accountOf(ctx, r.account);
  const read: { source: Buffer; text?: string } = await ctx.pool.read(account, async (client) => {
    if (!attachments) return fetchForQuote(client, r);
    // Its attachments alone past the bound: refused before it is read, as it would be after
    if ((await attachedBytesAtLeast(client, r)) > MAX_ATTACHMENT_TOTAL) throw attachmentsTooLarge();
    return { source: await fetchRaw(client, r) };
  });
  const parsed = await parseOriginal(read.source);
  const original = read.text === undefined ? parsed : { ...parsed, text: read.text };
  const identity = `${account.name}\n${original.messageId ?? `sha256:${createHash("sha256").update(read.source).digest("hex")}`}`;
  return { account, original, identity };
}

/** A reply's or forward's input for its derived key: the original named by identity, not by ref. */
const keyInput = (p: { ref: string; approved?: Approval | undefined }, identity: string, paths: object) => ({
  ...keyed(p),
  ref: undefined,
  original: identity,
  ...paths,
});

/** Marks the original of a reply or forward that went out (only then: never on a judgement). */
async function markSent(ctx: ServiceContext, ref: string, flag: OriginalMark): Promise<void> {
  const r = decodeRef(ref);
  await markOriginal(ctx, accountOf(ctx, r.account), r, flag);
}

export async function reply(ctx: ServiceContext, call: Call, p: ReplyParams): Promise<ComposeResult> {
  const result = await replyTo(ctx, call, delivering(ctx, call), p);
  if (result.status === "sent") await markSent(ctx, p.ref, "\\Answered");
  return result;
}

async function replyTo<T>(
  ctx: ServiceContext,
  call: Call,
  sink: Sink<T>,
  p: ReplyParams,
): Promise<T | ComposeResult> {
  const { account, original, identity } = await readOriginal(ctx, p.ref, false);
  const own = ownAddresses(account);
  // The original's addresses come from the address model (compose/original.ts); what it could not
  // read holds the send, with the text in `blocked`.
  const useReplyTo = original.replyTo.length > 0 || original.unreadable.replyTo.length > 0;
  const base = useReplyTo ? original.replyTo : original.from;
  const unreadable = [
    ...(useReplyTo ? original.unreadable.replyTo : original.unreadable.from),
    ...(p.all ? [...original.unreadable.to, ...original.unreadable.cc] : []),
  ];
  const extra = recipients(p);
  const to = uniqueAddresses([...base, ...(p.all ? original.to : []), ...extra.to], p.all ? own : []);
  const cc = uniqueAddresses(
    [...(p.all ? original.cc : []), ...extra.cc],
    [...own, ...to.map((a) => a.address)],
  );
  if (to.length + cc.length + extra.bcc.length + unreadable.length === 0)
    throw new MailError("INVALID_ARGUMENT", "the reply has no recipients: the original names no sender");
  const c = content(ctx, account, p, replyQuote(original));
  const spec: Omit<MimeSpec, "keepBcc"> = {
    from: from(account),
    to,
    cc,
    bcc: extra.bcc,
    subject: prefixed("Re", original.subject),
    ...c,
    messageId: newMessageId(account.address),
    date: new Date(),
    inReplyTo: original.messageId,
    references: threadReferences(original),
  };
  if (p.draft)
    return saveDraft(ctx, { ...call, action: "draft.create" }, account, spec, "reply saved as a draft");
  const keys = keysOf(p.idempotency_key, deriveKey("reply", keyInput(p, identity, c.paths), c.fileHashes));
  return sendBuilt(
    ctx,
    sink,
    account,
    "reply",
    keys,
    { spec, fileHashes: c.fileHashes },
    p.approved,
    unreadable,
  );
}

export async function forward(ctx: ServiceContext, call: Call, p: ForwardParams): Promise<ComposeResult> {
  const result = await forwardTo(ctx, call, delivering(ctx, call), p);
  if (result.status === "sent") await markSent(ctx, p.ref, "$Forwarded");
  return result;
}

async function forwardTo<T>(
  ctx: ServiceContext,
  call: Call,
  sink: Sink<T>,
  p: ForwardParams,
): Promise<T | ComposeResult> {
  const { account, original, identity } = await readOriginal(ctx, p.ref, !p.no_attachments);
  const c = content(ctx, account, p, forwardQuote(original));
  const carried: ForwardedPart[] = p.no_attachments ? [] : original.attachments;
  // The message's whole file payload: the original's attachments, the new ones and inline images.
  if (totalSize([...carried, ...c.attachments, ...c.inline]) > MAX_ATTACHMENT_TOTAL)
    throw attachmentsTooLarge();
  const spec: Omit<MimeSpec, "keepBcc"> = {
    from: from(account),
    ...recipients(p),
    subject: prefixed("Fwd", original.subject),
    ...c,
    attachments: [...carried, ...c.attachments],
    messageId: newMessageId(account.address),
    date: new Date(),
    references: threadReferences(original),
  };
  if (p.draft)
    return saveDraft(ctx, { ...call, action: "draft.create" }, account, spec, "forward saved as a draft");
  const keys = keysOf(p.idempotency_key, deriveKey("forward", keyInput(p, identity, c.paths), c.fileHashes));
  return sendBuilt(ctx, sink, account, "forward", keys, { spec, fileHashes: c.fileHashes }, p.approved);
}

export async function createDraft(
  ctx: ServiceContext,
  call: Call,
  p: CreateDraftParams,
): Promise<ComposeResult> {
  const account = accountOf(ctx, p.account);
  const c = content(ctx, account, p);
  return saveDraft(
    ctx,
    call,
    account,
    {
      from: from(account),
      ...recipients(p),
      subject: p.subject ?? "",
      ...c,
      messageId: newMessageId(account.address),
      date: new Date(),
    },
    "draft saved",
  );
}

async function readDraft(ctx: ServiceContext, ref: string) {
  const r = decodeRef(ref);
  const account = accountOf(ctx, r.account);
  const raw = await ctx.pool.read(account, async (client) => {
    await requireDraft(client, account, r);
    return fetchRaw(client, r);
  });
  return { r, account, raw };
}

/** The new version: what the call gives, and the old draft's value for each field it leaves out. */
export async function updateDraft(
  ctx: ServiceContext,
  call: Call,
  p: UpdateDraftParams,
): Promise<ComposeResult> {
  const { r, account, raw } = await readDraft(ctx, p.ref);
  const old = await parseOriginal(raw);
  const c = content(ctx, account, { ...p, attachments: p.attachments ?? [], inline: p.inline ?? [] });
  const keptBody: BodyParts | undefined =
    p.body === undefined ? { text: old.text, html: old.html } : undefined;
  const given = recipients({ to: p.to ?? [], cc: p.cc ?? [], bcc: p.bcc ?? [] });
  // A field the call keeps is carried over only when the address model reads all of it: a draft is
  // not rewritten with an address quietly dropped or read another way.
  for (const field of ["to", "cc", "bcc"] as const) {
    const bad = old.unreadable[field];
    if (p[field] === undefined && bad.length)
      throw new MailError(
        "INVALID_ARGUMENT",
        `the draft's ${field} holds text that is not one email address (in detail); pass ${field} to replace it`,
        undefined,
        bad.join(", "),
      );
  }
  const spec: Omit<MimeSpec, "keepBcc"> = {
    from: from(account),
    to: p.to ? given.to : old.to,
    cc: p.cc ? given.cc : old.cc,
    bcc: p.bcc ? given.bcc : old.bcc,
    subject: p.subject ?? old.subject,
    headers: p.headers
      ? c.headers
      : old.replyTo.length
        ? [["Reply-To", old.replyTo.map((a) => a.address).join(", ")]]
        : [],
    body: keptBody ?? c.body,
    attachments: p.attachments ? c.attachments : old.attachments,
    inline: p.inline
      ? c.inline
      : old.related.map((x) => ({
          filename: x.filename ?? "image",
          content: x.content,
          sha256: "",
          cid: x.cid,
        })),
    messageId: newMessageId(account.address),
    date: new Date(),
    inReplyTo: old.inReplyTo,
    references: old.references,
  };
  return saveDraft(ctx, call, account, spec, "draft replaced", r);
}

interface SendDraftParams {
  ref: string;
  idempotency_key?: string | undefined;
  approved?: Approval | undefined;
}

export const sendDraft = (ctx: ServiceContext, call: Call, p: SendDraftParams) =>
  sendDraftTo(ctx, delivering(ctx, call), p);

async function sendDraftTo<T>(ctx: ServiceContext, sink: Sink<T>, p: SendDraftParams): Promise<T> {
  const { r, account, raw } = await readDraft(ctx, p.ref);
  const out = await draftForSending(raw, account);
  if (out.envelope.length === 0 && out.unreadable.length === 0)
    throw new MailError(
      "INVALID_ARGUMENT",
      "the draft has no recipients",
      "Add recipients with update_draft first.",
    );
  // Keyed on the account and the draft's bytes, not the ref: the same draft is the same send.
  const keys = keysOf(p.idempotency_key, deriveKey("send_draft", { account: account.name }, [out.sha256]));
  return sink({
    account,
    tool: "send_draft",
    ...keys,
    approved: p.approved,
    preview: out.preview,
    facts: { unreadable: out.unreadable, foreignFrom: out.foreignFrom },
    source: p.ref,
    messageId: out.messageId,
    raw: out.raw,
    envelope: { from: account.address, to: out.envelope },
    attachmentBytes: out.attachmentBytes,
    // A held draft stays where it is, for the owner.
    hold: async () => p.ref,
    after: () => ctx.pool.write(account, (client) => removeDraft(client, account, r)).then(() => undefined),
  });
}

/**
 * `chainmail send-raw`: an operator's prepared RFC 5322 message, uploaded by the CLI, sent as it is
 * but for its Bcc and Resent-Bcc, through the same path as send_draft (the envelope from its To, Cc
 * and Bcc by the one address model, a From not the account's held, the policy judged on the exact
 * envelope, the outbox's key). Keyed on the account and the file's bytes. A held message is saved to
 * Drafts as it was given (Bcc kept), so the owner can send it later with `draft send`.
 */
export async function sendRawMessage(
  ctx: ServiceContext,
  call: Call,
  p: { account: string; upload_id: string; idempotency_key?: string | undefined },
): Promise<ComposeResult> {
  if (call.client !== "cli") {
    audit(ctx, call, p.account, "denied", "send.raw is an operator command: only the CLI may call it");
    throw new MailError(
      "POLICY_DENIED",
      "send.raw is an operator command: only the chainmail CLI may call it",
      "Ask the account owner to run chainmail send-raw, or use send_email.",
    );
  }
  const account = accountOf(ctx, p.account);
  const upload = spoolOf(ctx).take(p.upload_id);
  const out = await draftForSending(upload.content, account, { asPrepared: true });
  if (out.envelope.length === 0 && out.unreadable.length === 0)
    throw new MailError(
      "INVALID_ARGUMENT",
      "the message has no recipients (no To, Cc or Bcc header with an address)",
      "Add a To header to the file.",
    );
  const keys = keysOf(p.idempotency_key, deriveKey("send_raw", { account: account.name }, [out.sha256]));
  return deliver(ctx, call, {
    account,
    tool: "send_raw",
    ...keys,
    facts: { unreadable: out.unreadable, foreignFrom: out.foreignFrom },
    messageId: out.messageId,
    raw: out.raw,
    envelope: { from: account.address, to: out.envelope },
    attachmentBytes: out.attachmentBytes,
    preview: out.preview,
    hold: () =>
      ctx.pool.write(account, async (client) =>
        appendTo(client, account, await roleFolder(client, account, "drafts"), out.held, ["\\Draft"]),
      ),
  });
}

export async function deleteDraft(ctx: ServiceContext, call: Call, ref: string): Promise<DeleteDraftResult> {
  const r = decodeRef(ref);
  const account = accountOf(ctx, r.account);
  return audited(ctx, call, account.name, "delete draft", () =>
    ctx.pool.write(account, async (client) => {
      await requireDraft(client, account, r);
      return { ref, deleted: await removeDraft(client, account, r) };
    }),
  );
}

/**
 * `send.judge`: the send built exactly as its operation builds it, judged by the policy, and nothing
 * sent, saved or recorded. Uploads it names are used up, as by any compose call.
 */
export async function judgeCompose(ctx: ServiceContext, call: Call, p: JudgeParams): Promise<SendJudgement> {
  const given = parseParams(judgedParams[p.op], p.params);
  const name = "account" in given ? given.account : decodeRef(given.ref).account;
  if ((accountOf(ctx, name).policy.hold_approval ?? "owner") !== "client") return { hold_approval: "owner" };
  // (a send of the same key in flight here is waited for: its row says pending until it ends, which
  // read as SEND_UNCONFIRMED, a send whose outcome was never recorded, to a second call racing it)
  const judging: Sink<ClientJudgement> = async (out) => {
    await outboxOf(ctx.state).settled(out.key);
    return judgeOutgoing(ctx, out);
  };
  const judged =
    p.op === "send"
      ? await sendEmailTo(ctx, judging, parseParams(judgedParams.send, p.params))
      : p.op === "reply"
        ? await replyTo(ctx, call, judging, { ...parseParams(judgedParams.reply, p.params), draft: false })
        : p.op === "forward"
          ? await forwardTo(ctx, call, judging, {
              ...parseParams(judgedParams.forward, p.params),
              draft: false,
            })
          : await sendDraftTo(ctx, judging, parseParams(judgedParams["draft.send"], p.params));
  // With draft false, reply and forward always reach the sink.
  if (!("outcome" in judged)) throw new MailError("INTERNAL", "send.judge built no send");
  return judged;
}

export { audit };
