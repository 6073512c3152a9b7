/**
 * The account owner's outbox commands (CLI only) and the recovery pass at daemon start: a send whose
 * outcome was never recorded is looked up in Sent (All Mail with X-GM-RAW rfc822msgid: on Google) by
 * its Message-ID and recorded as sent when found; otherwise it stays unconfirmed.
 */
import { findMessageId, roleFolder } from "../compose/mailbox.js";
import type { ComposeResult } from "../compose/result.js";
import { MailError } from "../errors.js";
import { findByRole } from "../imap/folders.js";
import { audit, type Call, type ServiceContext } from "../service/context.js";
import { outboxOf } from "./index.js";

function ownerOnly(call: Call): void {
  if (call.client !== "cli")
    throw new MailError(
      "POLICY_DENIED",
      "only the account owner settles the outbox, with the chainmail CLI",
      "Ask the user to run `chainmail outbox`.",
    );
}

export function listOutbox(ctx: ServiceContext, call: Call, status?: "pending" | "sent" | "held") {
  ownerOnly(call);
  return { rows: outboxOf(ctx.state).store.list(status) };
}

/** The owner says an unconfirmed send went out: a retry now answers `duplicate`. */
export function confirmSend(ctx: ServiceContext, call: Call, key: string) {
  ownerOnly(call);
  const outbox = outboxOf(ctx.state);
  const row = outbox.store.get(key);
  if (!row) throw new MailError("NOT_FOUND", `the outbox has no send with key ${key}`);
  if (row.status !== "pending") return { key, confirmed: false };
  const result: ComposeResult = {
    status: "sent",
    message_id: row.message_id,
    sent_ref: "",
    idempotency_key: key,
  };
  outbox.store.finish(key, "sent", result);
  audit(ctx, call, row.account, "allowed", "unconfirmed send confirmed by the owner");
  return { key, confirmed: true };
}

/** The owner says an unconfirmed send did not go out: the next call with the key sends. */
export function releaseSend(ctx: ServiceContext, call: Call, key: string) {
  ownerOnly(call);
  const outbox = outboxOf(ctx.state);
  const row = outbox.store.get(key);
  if (!row) throw new MailError("NOT_FOUND", `the outbox has no send with key ${key}`);
  if (row.status !== "pending")
    throw new MailError("CONFLICT", `the send with key ${key} is ${row.status}, not unconfirmed`);
  outbox.store.remove(key);
  audit(ctx, call, row.account, "allowed", "unconfirmed send released by the owner");
  return { key, released: true };
}

export async function recoverOutbox(ctx: ServiceContext, log: (line: string) => void): Promise<number> {
  const outbox = outboxOf(ctx.state);
  let found = 0;
  // Every key is locked before the first lookup starts (lock() takes it synchronously), so a retry
  // that arrives meanwhile waits for its lookup instead of seeing the row unconfirmed.
  const lookups = outbox.store.list("pending").map((row) => {
    const account = ctx.config.accounts.find((a) => a.name === row.account);
    if (!account) return Promise.resolve();
    return outbox.lock(row.key, async () => {
      try {
        const ref = await ctx.pool.read(account, async (client) => {
          const folder =
            account.provider === "google"
              ? ((await findByRole(client, "all"))?.path ?? "[Gmail]/All Mail")
              : await roleFolder(client, account, "sent");
          return findMessageId(client, account, folder, row.message_id);
        });
        if (ref === undefined) return;
        const result: ComposeResult = {
          status: "sent",
          message_id: row.message_id,
          sent_ref: account.provider === "google" ? "" : ref,
          idempotency_key: row.key,
        };
        outbox.store.finish(row.key, "sent", result);
        found++;
      } catch (err) {
        log(
          `outbox: cannot look for an unconfirmed send of ${account.name} in Sent: ${(err as Error).message}`,
        );
      }
    });
  });
  await Promise.all(lookups);
  return found;
}
