/**
 * After a reply or a forward went out, the original is marked as mail clients mark it: `\Answered`
 * for a reply, the `$Forwarded` keyword for a forward (RFC 5788's registry), so the owner's other
 * clients show it answered. Best effort: the send already happened, so a mark the server refuses or
 * a folder that cannot keep the keyword is logged and never turns the send into a failure.
 */
import type { AccountConfig } from "../config.js";
import { changeFlags, existing, type FolderBatch } from "../imap/organize.js";
import type { MessageRef } from "../refs.js";
import type { ServiceContext } from "../service/context.js";

export type OriginalMark = "\\Answered" | "$Forwarded";

export async function markOriginal(
  ctx: ServiceContext,
  account: AccountConfig,
  ref: MessageRef,
  flag: OriginalMark,
): Promise<boolean> {
  try {
    return await ctx.pool.write(account, async (client) => {
      const batch: FolderBatch = {
        account: account.name,
        folder: ref.folder,
        uidValidity: ref.uidValidity,
        uids: [ref.uid],
      };
      // Moved or deleted meanwhile (by another client): there is nothing here to mark.
      const { present } = await existing(client, batch);
      if (present.length === 0) return false;
      // A keyword the folder cannot keep is skipped, not forced: changeFlags would refuse it anyway.
      const permanent = client.mailbox ? client.mailbox.permanentFlags : undefined;
      if (flag.startsWith("$") && permanent?.size && !permanent.has("\\*") && !permanent.has(flag))
        return false;
      await changeFlags(client, batch, [flag], [], false);
      return true;
    });
  } catch (err) {
    process.stderr.write(`could not mark the original ${flag} after sending: ${(err as Error).message}\n`);
    return false;
  }
}
