/**
 * A send under its idempotency key: the intent is committed before SMTP starts, the outcome when the
 * server accepts, then the Sent copy of the same bytes is appended (not on Google, which files its
 * own). A failed Sent copy is reported in `sent_copy_error`; the send still succeeded.
 */
import { createHash } from "node:crypto";
import type { AccountConfig } from "../config.js";
import { htmlToText } from "../imap/body.js";
import { htmlLinks } from "./html-links.js";
import { errorText, MailError } from "../errors.js";
import { conflict, outboxOf, unconfirmed } from "../outbox/index.js";
import { audit, type Call, type ServiceContext } from "../service/context.js";
import type { OutboxRow } from "../store/outbox.js";
import { existing } from "../imap/organize.js";
import { decodeRef, type MessageRef } from "../refs.js";
import { appendTo, removeDraft, roleFolder } from "./mailbox.js";
import { foreignEnvelopeFrom, holdHint, judgeSend, type SendFacts } from "./policy.js";
import type { Approval } from "../daemon/operations/compose.js";
import type { ClientJudgement, ComposeResult } from "./result.js";
import { type Envelope, type Refused, SmtpFailure, sendRaw } from "./smtp.js";
import { pendingHint } from "../policy/service.js";

/**
 * Test failpoints: CHAINMAIL_TEST_CRASH_AT names a step at which the daemon kills itself with
 * SIGKILL, so the crash tests can stop a send at each step without timing tricks.
 */
export type CrashPoint = "intent" | "accepted" | "recorded" | "sent-copy";
function crashPoint(step: CrashPoint): void {
  if (process.env["CHAINMAIL_TEST_CRASH_AT"] === step) process.kill(process.pid, "SIGKILL");
}

export interface Outgoing {
  account: AccountConfig;
  tool: string;
  key: string;
  /** The key this input derives (its content): a caller's key reused for another input is CONFLICT. */
  fingerprint: string;
  /**
   * What a judgement shows as its fingerprint and an approval must name, when more than the input
   * makes the message (the account's config for a message built here); else the fingerprint.
   */
  judged?: string;
  messageId: string;
  raw: Buffer;
  /** What SMTP is handed, as it is handed: the policy judges exactly this. */
  envelope: Envelope;
  /** Addresses the message names that are not one valid address each, and a From not the account's. */
  facts?: SendFacts;
  /** send_draft: the draft being sent (a hold leaves it where it is, as its held copy). */
  source?: string;
  /** Runs after the send is recorded (send_draft removes the draft); a failure is only logged. */
  after?: () => Promise<void>;
  /** Bytes of attachments and inline images, for the policy's max_attachment_bytes. */
  attachmentBytes: number;
  /** Saves the held message to Drafts and returns its ref ("" when the server did not say). */
  hold: () => Promise<string>;
  /** What `send.judge` shows the person of the message (see `Preview`). */
  preview: Preview;
  /** The person's OK given in the MCP client: a send the policy holds goes out (see `approvalOf`). */
  approved?: Approval | undefined;
}

/**
 * What a judgement shows the person of the message: its subject, the text of its text part, the
 * text its HTML part reads as (when it has one), and the files it carries (attachments, inline
 * images, a forward's original attachments) with their bytes.
 */
export interface Preview {
  subject: string;
  /** The Reply-To header's text, when the message has one: where the recipients' answers go. */
  replyTo?: string | undefined;
  text: string;
  html?: string | undefined;
  files: ReadonlyArray<{ filename?: string | undefined; content: Buffer }>;
}

/** How many lines of the text a judgement shows, and at most how many characters of them. */
const EXCERPT_LINES = 8;
const EXCERPT_CHARS = 800;

/** A line that shows nothing: white space, format characters and the blank-looking fillers. */
const BLANK_LINE = /^[\s\p{Cf}\u2800\u3164\uffa0\u115f\u1160]*$/u;

/**
 * The first lines of a text as a judgement shows them, and how many lines it leaves out. A run of
 * blank lines is shown as one and a run of spaces as one space, so text cannot be pushed out of
 * the question by white space the person would scroll past (or never see) in the question.
 */
export function excerptOf(text: string): { excerpt: string; more: number } {
  const lines: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/[ \t\u00a0]{2,}/g, " ");
    const blank = BLANK_LINE.test(line);
    if (blank && (lines.length === 0 || lines.at(-1) === "")) continue;
    lines.push(blank ? "" : line);
  }
  while (lines.at(-1) === "") lines.pop();
  const shown = lines.slice(0, EXCERPT_LINES).join("\n");
  const excerpt = shown.slice(0, EXCERPT_CHARS);
  const cut = excerpt.length < shown.length ? 1 : 0;
  const more = lines.slice(EXCERPT_LINES).filter((l) => l !== "").length + cut;
  return { excerpt, more };
}

/** A text's words (letters and digits), for telling whether two parts say the same. */
const wordsOf = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(" ");

/** Where the HTML part links to or loads from, when anywhere (./html-links.ts). */
function linksOf(html: string | undefined): { html_links?: string[]; html_links_more?: number } {
  if (html === undefined) return {};
  const { links, more } = htmlLinks(html);
  return links.length > 0 ? { html_links: links, html_links_more: more } : {};
}

/** What the preview's files are, as a judgement names them (SHA-256 of the bytes, hex). */
const filesOf = (p: Preview) =>
  p.files.map((f) => ({
    name: f.filename ?? "",
    bytes: f.content.length,
    sha256: createHash("sha256").update(f.content).digest("hex"),
  }));

/**
 * What `deliver` would do with `out` now, without sending, saving or recording anything. A key
 * whose input differs is CONFLICT and a send never recorded SEND_UNCONFIRMED, as `deliver` says.
 */
export function judgeOutgoing(ctx: ServiceContext, out: Outgoing): ClientJudgement {
  const outbox = outboxOf(ctx.state);
  const { account, key } = out;
  const row = outbox.lookup(key);
  if (row?.fingerprint && row.fingerprint !== out.fingerprint) throw conflict(key);
  if (row?.status === "pending") throw unconfirmed(key);
  const verdict = judgeSend(account.policy, out.envelope.to, out.attachmentBytes, factsOf(out));
  const text = excerptOf(out.preview.text);
  const htmlText = out.preview.html === undefined ? undefined : htmlToText(out.preview.html);
  // The HTML part, which most mail programs show instead of the text part, when it says something
  // else than the text part (an html_text of the sender's choosing, a draft's parts)
  const html =
    htmlText !== undefined && wordsOf(htmlText) !== wordsOf(out.preview.text)
      ? excerptOf(htmlText)
      : undefined;
  return {
    outcome: row?.status === "sent" ? "duplicate" : verdict ? "hold" : "send",
    hold_approval: "client",
    idempotency_key: key,
    blocked: verdict?.blocked ?? [],
    too_many_recipients: verdict?.tooManyRecipients ?? false,
    too_large: verdict?.tooLarge ?? false,
    recipients: out.envelope.to,
    subject: out.preview.subject,
    ...(out.preview.replyTo ? { reply_to: out.preview.replyTo } : {}),
    excerpt: text.excerpt,
    more_lines: text.more,
    ...(html ? { html_excerpt: html.excerpt, html_more_lines: html.more } : {}),
    ...linksOf(out.preview.html),
    files: filesOf(out.preview),
    fingerprint: out.judged ?? out.fingerprint,
    hint: verdict ? holdHint(verdict, account.name) : "",
  };
}

/**
 * An approval is taken only where the owner allowed it: from the `mcp` client (the one that can
 * ask the person through elicitation) on an account whose confirmed policy says hold_approval
 * "client". Anything else is refused before anything is sent or saved, and audited as denied.
 */
function approvalOf(ctx: ServiceContext, call: Call, out: Outgoing): Approval | undefined {
  const a = out.approved;
  if (!a) return undefined;
  const mode = out.account.policy.hold_approval ?? "owner";
  if (call.client === "mcp" && mode === "client") {
    if (a.judged === (out.judged ?? out.fingerprint)) return a;
    // The person approved the message a judgement showed them; this one was built from other input
    // (a file changed on disk since) or config (another signature, From name or address): it is not
    // what they approved, so nothing is sent or saved.
    audit(ctx, call, out.account.name, "denied", `${out.tool}: approval refused (not the message judged)`);
    throw new MailError(
      "CONFLICT",
      "approved is refused: the message is not the one the person was shown (its input, or the account's config, changed after send.judge)",
      "Nothing was sent. Call the tool again: the person is asked about the message as it is now.",
    );
  }
  const why =
    mode !== "client"
      ? `account ${out.account.name} has hold_approval "${mode}": only the account owner lets a held send go`
      : `an approval is taken only from the MCP client, which asks the person; this call came from ${call.client}`;
  audit(ctx, call, out.account.name, "denied", `${out.tool}: approval refused (${why})`);
  throw new MailError(
    "POLICY_DENIED",
    `approved is refused: ${why}`,
    `Send without approved; a send the policy holds is saved to Drafts for the owner. Only the owner can set hold_approval = "client" (config.toml, then chainmail policy confirm).`,
  );
}

/**
 * What holds the send besides its envelope's recipients: the facts its operation found, and an
 * envelope From (the account's `address`) that is not one of the account's own addresses the owner
 * confirmed, as after an `address` written into config.toml that awaits `chainmail policy confirm`.
 */
function factsOf(out: Outgoing): SendFacts {
  const facts = out.facts ?? {};
  return facts.foreignFrom !== undefined
    ? facts
    : { ...facts, foreignFrom: foreignEnvelopeFrom(out.account, out.envelope.from) };
}

const storedResult = (row: OutboxRow): ComposeResult => JSON.parse(row.result ?? "{}") as ComposeResult;

/** Whether a held copy is still in Drafts (undefined: cannot tell, as for a ref the server never gave). */
async function heldCopyPresent(ctx: ServiceContext, account: AccountConfig, ref: string) {
  let r: MessageRef;
  try {
    r = decodeRef(ref);
  } catch {
    return undefined;
  }
  return ctx.pool.read(account, async (client) => {
    const { present } = await existing(client, {
      account: account.name,
      folder: r.folder,
      uidValidity: r.uidValidity,
      uids: [r.uid],
    });
    return present.length > 0;
  });
}

/**
 * A send under its key. A key held before sent nothing, so it is judged again under the policy in
 * force now: still held, it answers `held` with its first copy in Drafts (no second copy); now
 * allowed, it is sent once and the held copy is removed from Drafts, so the owner cannot send it a
 * second time. If the owner already took the held copy over (sent, edited or deleted it: it is no
 * longer in Drafts), the retry sends nothing and says so.
 */
export async function deliver(ctx: ServiceContext, call: Call, out: Outgoing): Promise<ComposeResult> {
  const outbox = outboxOf(ctx.state);
  const { account, key } = out;
  const approved = approvalOf(ctx, call, out);
  let retried = false;
  let overruled = "";
  const result = await outbox.exclusive<ComposeResult>(key, out.fingerprint, async (held) => {
    retried = held !== undefined;
    const before = held ? storedResult(held) : undefined;
    const verdict = judgeSend(account.policy, out.envelope.to, out.attachmentBytes, factsOf(out));
    // The person's OK in the client sends what the policy holds; the audit row says so.
    if (verdict && approved)
      overruled = `approved in the client by the person (answer ${approved.answer_id}) over the send policy: ${verdict.blocked.length} blocked recipient(s)${verdict.tooManyRecipients ? ", too many recipients" : ""}${verdict.tooLarge ? ", attachments too large" : ""}; `;
    if (verdict && !approved) {
      const result: ComposeResult = {
        status: "held",
        draft_ref: before ? (before.draft_ref ?? "") : await out.hold(),
        blocked: verdict.blocked,
        too_many_recipients: verdict.tooManyRecipients,
        hint: holdHint(verdict, account.name) + pendingHint(ctx, account.name),
        message_id: before?.message_id ?? out.messageId,
        idempotency_key: key,
      };
      if (!held)
        outbox.store.begin({
          key,
          account: account.name,
          tool: out.tool,
          message_id: out.messageId,
          status: "held",
          created: new Date().toISOString(),
          fingerprint: out.fingerprint,
        });
      outbox.store.finish(key, "held", result);
      return result;
    }
    const heldCopy = before?.draft_ref && before.draft_ref !== out.source ? before.draft_ref : undefined;
    if (heldCopy && (await heldCopyPresent(ctx, account, heldCopy)) === false) {
      return {
        ...(before as ComposeResult),
        hint: "The held message is no longer in Drafts: the account owner sent, changed or deleted it, so this retry sent nothing. Do not retry it.",
      };
    }
    const now = new Date().toISOString();
    const intent = held
      ? outbox.store.retake(key, out.messageId, now)
      : outbox.store.begin({
          key,
          account: account.name,
          tool: out.tool,
          message_id: out.messageId,
          status: "pending",
          created: now,
          fingerprint: out.fingerprint,
        });
    if (!intent) throw unconfirmed(key);
    crashPoint("intent");
    let refused: Refused[] = [];
    try {
      ({ refused } = await sendRaw(account, ctx.home.secretsDir, out.envelope, out.raw));
    } catch (err) {
      const maybe = err instanceof SmtpFailure && err.maybeSent;
      // Nothing went out: the key is free again; a retried hold goes back to its hold, so its held
      // copy in Drafts is still known (and removed) when a later retry sends.
      if (!maybe) {
        if (before) outbox.store.finish(key, "held", before);
        else outbox.store.remove(key);
      }
      audit(ctx, call, account.name, "error", `${out.tool}: ${(err as MailError).reason ?? "INTERNAL"}`);
      if (maybe)
        throw new MailError(
          "SERVER_UNAVAILABLE",
          `${(err as Error).message}; the connection ended after the message was handed over, so it may have been sent`,
          unconfirmed(key).hint,
          (err as MailError).detail,
        );
      throw err;
    }
    crashPoint("accepted");
    const sent: ComposeResult = {
      status: "sent",
      message_id: out.messageId,
      sent_ref: "",
      idempotency_key: key,
      // Still `sent`: the accepted recipients have it, so a retry must not send it to them again.
      ...(refused.length
        ? { refused_recipients: refused.map((r) => `${r.address} (${r.response.slice(0, 300)})`) }
        : {}),
    };
    outbox.store.finish(key, "sent", sent);
    crashPoint("recorded");
    if (account.provider !== "google") {
      try {
        sent.sent_ref = await ctx.pool.write(account, async (c) =>
          appendTo(c, account, await roleFolder(c, account, "sent"), out.raw, ["\\Seen"]),
        );
      } catch (err) {
        sent.sent_copy_error = errorText(err);
      }
      outbox.store.finish(key, "sent", sent);
    }
    crashPoint("sent-copy");
    let note = "";
    const removals = [
      ...(out.after ? [out.after] : []),
      ...(heldCopy
        ? [
            () =>
              ctx.pool
                .write(account, (client) => removeDraft(client, account, decodeRef(heldCopy)))
                .then(() => undefined),
          ]
        : []),
    ];
    for (const remove of removals) {
      try {
        await remove();
      } catch (err) {
        note = `; removing the draft failed: ${(err as MailError).reason ?? "INTERNAL"}`;
      }
    }
    const n = out.envelope.to.length;
    audit(
      ctx,
      call,
      account.name,
      "allowed",
      `${overruled}sent to ${n - refused.length} recipient(s)${refused.length ? `; the SMTP server refused ${refused.length}` : ""}${sent.sent_copy_error ? "; Sent copy failed" : ""}${note}`,
    );
    return sent;
  });
  if (result.status === "duplicate")
    audit(ctx, call, account.name, "duplicate", "an earlier send with this key went out; nothing sent");
  if (result.status === "held")
    audit(
      ctx,
      call,
      account.name,
      "held",
      `held by the send policy${retried ? " again (a retry, judged again)" : ""}: ${result.blocked?.length ?? 0} blocked recipient(s)${result.too_many_recipients ? ", too many recipients" : ""}`,
    );
  return result;
}
