/**
 * Changing messages in one folder of one account: move, copy, expunge, flags and Gmail labels.
 *
 * imapflow answers a MOVE, COPY, STORE or EXPUNGE the server refused with `false` (or `undefined`)
 * instead of throwing, so every result is checked here and a refusal throws: a batch outcome says
 * what the server did, never what was asked.
 */
import type { ImapFlow } from "imapflow";
import { detailOf, MailError } from "../errors.js";
import { encodeRef } from "../refs.js";
import { takeRefusal, takeRefusalText } from "./connection.js";
import { MESSAGE_GONE_HINT, refusalOf } from "./refusal.js";
import { select } from "./messages.js";

export interface FolderBatch {
  account: string;
  folder: string;
  uidValidity: number;
  uids: number[];
}

const REFUSED_HINT =
  "The mail server refused the change for these messages (a read-only folder, missing rights or a folder deleted meanwhile). Check the folder on the server, or search again for fresh refs.";

/**
 * The error for a command imapflow reported as failed. A connection that dropped during the command
 * leaves its outcome unknown, and says so, since the server may have carried it out.
 */
function refused(client: ImapFlow, account: string, what: string, folder?: string): MailError {
  const { text, code } = takeRefusal(client);
  const folderLine = folder === undefined ? undefined : `folder: ${folder}`;
  if (!client.usable) {
    return new MailError(
      "SERVER_UNAVAILABLE",
      `the connection to the IMAP server of account ${account} dropped during ${what}; the server may or may not have done it${folder === undefined ? "" : " (the folder is in detail)"}`,
      "Search again to see where the messages are now before retrying.",
      folderLine,
    );
  }
  // The server answered: a refusal it marks as temporary (INUSE, UNAVAILABLE) may pass on retry,
  // any other comes back the same, so it is not SERVER_UNAVAILABLE's "try again later".
  const { reason, hint } = refusalOf(code, { reason: "UNSUPPORTED", hint: REFUSED_HINT });
  const inDetail = [folder !== undefined && "the folder", text && "the server's reply"].filter(Boolean);
  return new MailError(
    reason,
    `the IMAP server of account ${account} refused ${what}${inDetail.length ? `; ${inDetail.join(" and ")} ${inDetail.length > 1 ? "are" : "is"} in detail` : ""}`,
    hint,
    detailOf(folderLine, text && `server: ${text}`),
  );
}

/**
 * Whether imapflow took the last command's NO for a success. It does for "Some of the requested
 * messages no longer exist" (meant for a FETCH), which Dovecot answers a COPY or MOVE naming a
 * message another session expunged since this one last heard: the command did nothing (RFC 9051: a
 * failed COPY leaves the destination as it was), yet imapflow returns a result.
 */
function expungedMeanwhile(client: ImapFlow): boolean {
  const text = takeRefusalText(client);
  return text !== undefined && /no longer exist/i.test(text);
}

/** Selects the folder and splits the UIDs into those that exist and those that do not. */
export async function existing(
  client: ImapFlow,
  b: FolderBatch,
): Promise<{ present: number[]; missing: number[] }> {
  // (a SEARCH answers from what the session last heard: ImapPool.write sends a NOOP before a
  // change, so mail another client added or expunged since is known here)
  await select(client, b.account, b.folder, b.uidValidity);
  takeRefusalText(client);
  const res = await client.search({ uid: b.uids.join(",") }, { uid: true });
  // A failed SEARCH is not "no such messages": it says nothing about them.
  if (!Array.isArray(res)) throw refused(client, b.account, "SEARCH");
  const found = new Set(res);
  return { present: b.uids.filter((u) => found.has(u)), missing: b.uids.filter((u) => !found.has(u)) };
}

/**
 * Moves or copies; returns each source UID's new ref (undefined when the server did not report it),
 * or a MailError for a UID the server's COPYUID leaves out: that message was not moved or copied
 * (another client expunged it since the batch looked).
 */
export async function transfer(
  client: ImapFlow,
  b: FolderBatch,
  destPath: string,
  mode: "move" | "copy",
  retried = false,
): Promise<Map<number, string | MailError | undefined>> {
  // Mail moved where no ref can name it would be out of the caller's reach: refuse before moving.
  encodeRef({ account: b.account, folder: destPath, uidValidity: 0xffffffff, uid: 0xffffffff });
  takeRefusalText(client);
  let res: Awaited<ReturnType<ImapFlow["messageCopy"]>> | "expunged";
  if (mode === "copy") {
    res = await client.messageCopy(b.uids, destPath, { uid: true });
    if (!res) throw refused(client, b.account, "COPY to the destination folder", destPath);
  } else if (client.capabilities.has("MOVE")) {
    res = await client.messageMove(b.uids, destPath, { uid: true });
    if (!res) throw refused(client, b.account, "MOVE to the destination folder", destPath);
  } else {
    res = await moveByCopy(client, b, destPath);
  }
  if (res === "expunged" || expungedMeanwhile(client)) {
    // Nothing was moved or copied. Hear of the expunges, then do the rest, once
    if (retried)
      throw new MailError(
        "SERVER_UNAVAILABLE",
        `the IMAP server of account ${b.account} refused the ${mode} twice because messages were being expunged meanwhile; nothing was ${mode === "move" ? "moved" : "copied"}`,
        "Search again for fresh refs, then retry.",
      );
    // (Dovecot reports the expunges along with its refusal; the NOOP makes sure on any server)
    await client.noop();
    const { present, missing } = await existing(client, b);
    const out =
      present.length > 0
        ? await transfer(client, { ...b, uids: present }, destPath, mode, true)
        : new Map<number, string | MailError | undefined>();
    for (const uid of missing)
      out.set(
        uid,
        new MailError("NOT_FOUND", "the message is no longer in its folder on the server", MESSAGE_GONE_HINT),
      );
    return out;
  }
  const out = new Map<number, string | MailError | undefined>();
  const uv = res.uidValidity !== undefined ? Number(res.uidValidity) : undefined;
  for (const uid of b.uids) {
    const n = res.uidMap?.get(uid);
    if (n === undefined && res.uidMap && uv) {
      out.set(
        uid,
        new MailError("NOT_FOUND", "the message is no longer in its folder on the server", MESSAGE_GONE_HINT),
      );
      continue;
    }
    out.set(
      uid,
      n !== undefined && uv
        ? encodeRef({ account: b.account, folder: destPath, uidValidity: uv, uid: n })
        : undefined,
    );
  }
  return out;
}

function needUidPlus(client: ImapFlow, account: string, what: string): void {
  if (client.capabilities.has("UIDPLUS")) return;
  // Without UIDPLUS there is only the plain EXPUNGE, which removes every \Deleted message of the
  // folder, including ones another client marked and this call never named.
  throw new MailError(
    "UNSUPPORTED",
    `the IMAP server of account ${account} lacks UIDPLUS, so ${what} would expunge every message marked deleted in the folder, not only these`,
    "Nothing was changed. Use trash, or a mail client that shows which messages are marked deleted.",
  );
}

/**
 * MOVE for servers without it (RFC 6851 section 3.3): COPY, then STORE \Deleted and UID EXPUNGE of
 * exactly these UIDs. imapflow's own fallback uses a plain EXPUNGE when UIDPLUS is missing, which
 * would remove other messages too, so that case is refused before anything is copied.
 */
async function moveByCopy(client: ImapFlow, b: FolderBatch, destPath: string) {
  needUidPlus(client, b.account, "a move (COPY + EXPUNGE, as the server has no MOVE)");
  const res = await client.messageCopy(b.uids, destPath, { uid: true });
  if (!res) throw refused(client, b.account, "COPY to the destination folder (for a move)", destPath);
  // Nothing was copied: removing the messages now would lose them
  if (expungedMeanwhile(client)) return "expunged" as const;
  if (!(await client.messageDelete(b.uids, { uid: true }))) {
    const err = refused(client, b.account, "removing the moved messages from the source folder");
    throw new MailError(
      err.reason,
      `${err.message}: they were copied to the destination folder (named in detail) and are still in the source folder too`,
      err.hint,
      detailOf(`destination: ${destPath}`, err.detail),
    );
  }
  // The copy is done: a message another client expunged from the source meanwhile (a swallowed
  // refusal of the STORE) is moved all the same, so the caller must not take it for a failed copy
  takeRefusalText(client);
  return res;
}

export async function expungeUids(client: ImapFlow, b: FolderBatch): Promise<void> {
  needUidPlus(client, b.account, "expunge");
  takeRefusalText(client);
  // With UIDPLUS, imapflow sends UID EXPUNGE for exactly these UIDs.
  if (!(await client.messageDelete(b.uids, { uid: true }))) throw refused(client, b.account, "EXPUNGE");
}

export async function changeFlags(
  client: ImapFlow,
  b: FolderBatch,
  add: string[],
  remove: string[],
  labels: boolean,
): Promise<void> {
  const opts = { uid: true, ...(labels ? { useLabels: true } : {}) };
  const kind = labels ? "X-GM-LABELS" : "FLAGS";
  // imapflow silently drops the flags a folder's PERMANENTFLAGS does not list and stores the rest,
  // so a flag the folder cannot keep would be reported as set.
  const permanent = client.mailbox ? client.mailbox.permanentFlags : undefined;
  const unkept =
    labels || !permanent?.size || permanent.has("\\*") ? [] : add.filter((f) => !permanent.has(f));
  if (unkept.length) {
    throw new MailError(
      "UNSUPPORTED",
      `a folder of account ${b.account} cannot keep ${unkept.length} of the flags asked for; the folder and the flags are in detail`,
      "Nothing was changed. The server decides which flags a folder keeps.",
      detailOf(`folder: ${b.folder}`, `flags: ${unkept.join(" ")}`),
    );
  }
  takeRefusalText(client);
  // imapflow also answers false without asking the server when the folder accepts none of the
  // flags (a read-only folder has no PERMANENTFLAGS): that too is a change that did not happen.
  if (add.length && !(await client.messageFlagsAdd(b.uids, add, opts)))
    throw refused(client, b.account, `STORE +${kind}`);
  if (remove.length && !(await client.messageFlagsRemove(b.uids, remove, opts))) {
    const err = refused(client, b.account, `STORE -${kind}`);
    throw add.length
      ? new MailError(err.reason, `${err.message}; the additions were stored`, err.hint, err.detail)
      : err;
  }
}
