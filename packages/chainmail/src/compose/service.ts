/**
 * The compose operations over the account's IMAP and SMTP: each builds its MIME message once, then
 * sends it (under its idempotency key, see deliver.ts) or saves it to Drafts.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import type { AccountConfig } from "../config.js";
import { MailError } from "../errors.js";
import { fetchRaw } from "../imap/messages.js";
import { deriveKey } from "../outbox/index.js";
import { decodeRef, type MessageRef } from "../refs.js";
import { accountOf, audit, audited, type Call, type ServiceContext } from "../service/context.js";
import type {
  CreateDraftParams,
  ForwardParams,
  ReplyParams,
  SendParams,
  UpdateDraftParams,
} from "../daemon/operations/compose.js";
import { type MailAddress, parseAddresses, uniqueAddresses } from "./addresses.js";
import { type BodyParts, bodyParts, type Quote } from "./body.js";
import { deliver } from "./deliver.js";
import { markOriginal } from "./mark.js";
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
import type { ComposeResult, DeleteDraftResult } from "./result.js";
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

async function sendBuilt(
  ctx: ServiceContext,
  call: Call,
  account: AccountConfig,
  tool: string,
  keys: Keys,
  built: Built,
  unreadable: string[] = [],
): Promise<ComposeResult> {
  const raw = await buildMime({ ...built.spec, keepBcc: false });
  return deliver(ctx, call, {
    account,
    tool,
    ...keys,
    facts: { unreadable },
    messageId: built.spec.messageId,
    raw,
    envelope: envelopeOf(account, built.spec),
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

export async function sendEmail(ctx: ServiceContext, call: Call, p: SendParams): Promise<ComposeResult> {
  const account = accountOf(ctx, p.account);
  const c = content(ctx, account, p);
  const keys = keysOf(p.idempotency_key, deriveKey("send_email", { ...p, ...c.paths }, c.fileHashes));
  return sendBuilt(ctx, call, account, "send_email", keys, {
    spec: {
      from: from(account),
      ...recipients(p),
      subject: p.subject,
      ...c,
      messageId: newMessageId(account.address),
      date: new Date(),
    },
    fileHashes: c.fileHashes,
  });
}

/**
 * The original a reply or forward answers, and its identity for a derived key: the account and its
 * Message-ID, or the SHA-256 of its bytes when it has none. Never the ref, which changes whenever the
 * message is moved (archived by the agent, a phone or a server rule), so a retry after a move derives
 * the same key and is not sent twice.
 */
async function readOriginal(
  ctx: ServiceContext,
  ref: string,
): Promise<{ account: AccountConfig; original: Original; identity: string }> {
  const r = decodeRef(ref);
  const account = accountOf(ctx, r.account);
  const raw = await ctx.pool.read(account, (client) => fetchRaw(client, r));
  const original = await parseOriginal(raw);
  const identity = `${account.name}\n${original.messageId ?? `sha256:${createHash("sha256").update(raw).digest("hex")}`}`;
  return { account, original, identity };
}

/** A reply's or forward's input for its derived key: the original named by identity, not by ref. */
const keyInput = (p: { ref: string }, identity: string, paths: object) => ({
  ...p,
  ref: undefined,
  original: identity,
  ...paths,
});

export async function reply(ctx: ServiceContext, call: Call, p: ReplyParams): Promise<ComposeResult> {
  const { account, original, identity } = await readOriginal(ctx, p.ref);
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
  const result = await sendBuilt(
    ctx,
    call,
    account,
    "reply",
    keys,
    { spec, fileHashes: c.fileHashes },
    unreadable,
  );
  if (result.status === "sent") await markOriginal(ctx, account, decodeRef(p.ref), "\\Answered");
  return result;
}

export async function forward(ctx: ServiceContext, call: Call, p: ForwardParams): Promise<ComposeResult> {
  const { account, original, identity } = await readOriginal(ctx, p.ref);
  const c = content(ctx, account, p, forwardQuote(original));
  const carried: ForwardedPart[] = p.no_attachments ? [] : original.attachments;
  // The message's whole file payload: the original's attachments, the new ones and inline images.
  if (totalSize([...carried, ...c.attachments, ...c.inline]) > MAX_ATTACHMENT_TOTAL)
    throw new MailError(
      "INVALID_ARGUMENT",
      `the attachments add up to more than ${MAX_ATTACHMENT_TOTAL} bytes`,
      "Leave out the original's attachments (no_attachments) or some of the files.",
    );
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
  const result = await sendBuilt(ctx, call, account, "forward", keys, { spec, fileHashes: c.fileHashes });
  if (result.status === "sent") await markOriginal(ctx, account, decodeRef(p.ref), "$Forwarded");
  return result;
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

export async function sendDraft(
  ctx: ServiceContext,
  call: Call,
  p: { ref: string; idempotency_key?: string | undefined },
): Promise<ComposeResult> {
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
  return deliver(ctx, call, {
    account,
    tool: "send_draft",
    ...keys,
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

export { audit };
