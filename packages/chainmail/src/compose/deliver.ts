/**
 * A send under its idempotency key: the intent is committed before SMTP starts, the outcome when the
 * server accepts, then the Sent copy of the same bytes is appended (not on Google, which files its
 * own). A failed Sent copy is reported in `sent_copy_error`; the send still succeeded.
 */
import type { AccountConfig } from "../config.js";
import { errorText, MailError } from "../errors.js";
import { outboxOf, unconfirmed } from "../outbox/index.js";
import { audit, type Call, type ServiceContext } from "../service/context.js";
import type { OutboxRow } from "../store/outbox.js";
import { appendTo, roleFolder } from "./mailbox.js";
import { holdHint, judgeSend } from "./policy.js";
import type { ComposeResult } from "./result.js";
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
  messageId: string;
  raw: Buffer;
  envelope: Envelope;
  /** Runs after the send is recorded (send_draft removes the draft); a failure is only logged. */
  after?: () => Promise<void>;
  /** Bytes of attachments and inline images, for the policy's max_attachment_bytes. */
  attachmentBytes: number;
  /** Saves the held message to Drafts and returns its ref ("" when the server did not say). */
  hold: () => Promise<string>;
}

const heldAgain = (row: OutboxRow): ComposeResult => JSON.parse(row.result ?? "{}") as ComposeResult;

export async function deliver(ctx: ServiceContext, call: Call, out: Outgoing): Promise<ComposeResult> {
  const outbox = outboxOf(ctx.state);
  const { account, key } = out;
  let replayedHold = true;
  const result = await outbox.exclusive<ComposeResult>(key, heldAgain, async () => {
    replayedHold = false;
    const verdict = judgeSend(account.policy, out.envelope.to, out.attachmentBytes);
    if (verdict) {
      const held: ComposeResult = {
        status: "held",
        draft_ref: await out.hold(),
        blocked: verdict.blocked,
        too_many_recipients: verdict.tooManyRecipients,
        hint: holdHint(verdict, account.name) + pendingHint(ctx, account.name),
        message_id: out.messageId,
        idempotency_key: key,
      };
      outbox.store.begin({
        key,
        account: account.name,
        tool: out.tool,
        message_id: out.messageId,
        status: "held",
        created: new Date().toISOString(),
      });
      outbox.store.finish(key, "held", held);
      return held;
    }
    if (
      !outbox.store.begin({
        key,
        account: account.name,
        tool: out.tool,
        message_id: out.messageId,
        status: "pending",
        created: new Date().toISOString(),
      })
    )
      throw unconfirmed(key);
    crashPoint("intent");
    let refused: Refused[] = [];
    try {
      ({ refused } = await sendRaw(account, ctx.home.secretsDir, out.envelope, out.raw));
    } catch (err) {
      const maybe = err instanceof SmtpFailure && err.maybeSent;
      if (!maybe) outbox.store.remove(key);
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
    if (out.after) {
      try {
        await out.after();
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
      `sent to ${n - refused.length} recipient(s)${refused.length ? `; the SMTP server refused ${refused.length}` : ""}${sent.sent_copy_error ? "; Sent copy failed" : ""}${note}`,
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
      `held by the send policy${replayedHold ? " again (a replay)" : ""}: ${result.blocked?.length ?? 0} blocked recipient(s)${result.too_many_recipients ? ", too many recipients" : ""}`,
    );
  return result;
}
