/**
 * The compose side of IMAP: the account's Drafts, Sent and Trash (config names first, else the
 * folder's SPECIAL-USE role), appending a message and naming it by ref, and removing a draft.
 */
import type { ImapFlow } from "imapflow";
import type { AccountConfig } from "../config.js";
import { detailOf, MailError } from "../errors.js";
import { takeRefusal, takeRefusalText } from "../imap/connection.js";
import { refusalOf } from "../imap/refusal.js";
import { findByRole, findFolder } from "../imap/folders.js";
import { existing, expungeUids, transfer } from "../imap/organize.js";
import { encodeRef, type MessageRef } from "../refs.js";

export type ComposeRole = "drafts" | "sent" | "trash";

const CONFIG_KEY = { drafts: "drafts_folder", sent: "sent_folder", trash: "trash_folder" } as const;
const SPECIAL = { drafts: "\\Drafts", sent: "\\Sent", trash: "\\Trash" } as const;

export async function roleFolder(
  client: ImapFlow,
  account: AccountConfig,
  role: ComposeRole,
): Promise<string> {
  const named = account[CONFIG_KEY[role]];
  const f = named ? await findFolder(client, named) : await findByRole(client, role);
  if (!f)
    throw new MailError(
      "NOT_FOUND",
      named
        ? `account ${account.name} has no folder named as its ${CONFIG_KEY[role]}; the name is in detail`
        : `account ${account.name} has no ${role} folder (special-use ${SPECIAL[role]})`,
      `Set ${CONFIG_KEY[role]} for the account in config.toml.`,
      named ? `folder: ${named}` : undefined,
    );
  return f.path;
}

/** Appends a message; returns its ref, or "" when the server did not say its UID (no UIDPLUS). */
export async function appendTo(
  client: ImapFlow,
  account: AccountConfig,
  path: string,
  raw: Buffer,
  flags: string[],
): Promise<string> {
  takeRefusalText(client);
  const res = await client.append(path, raw, flags);
  if (!res) {
    const { text, code } = takeRefusal(client);
    // A dropped connection is an outage; a NO (no rights, over quota) is the server's answer, and
    // the same APPEND would be refused again.
    const { reason, hint } = client.usable
      ? refusalOf(code)
      : { reason: "SERVER_UNAVAILABLE" as const, hint: undefined };
    throw new MailError(
      reason,
      `the IMAP server of account ${account.name} refused APPEND to a folder; the folder${text ? " and the server's reply are" : " is"} in detail`,
      hint,
      detailOf(`folder: ${path}`, text && `server: ${text}`),
    );
  }
  if (res.uid === undefined || res.uidValidity === undefined) return "";
  return encodeRef({
    account: account.name,
    folder: path,
    uidValidity: Number(res.uidValidity),
    uid: res.uid,
  });
}

/** Refuses a ref that is not in the account's Drafts (judged by the folder's role or config name). */
export async function requireDraft(client: ImapFlow, account: AccountConfig, ref: MessageRef): Promise<void> {
  const drafts = await roleFolder(client, account, "drafts");
  if (ref.folder !== drafts)
    throw new MailError(
      "INVALID_ARGUMENT",
      "ref is not a message in the account's Drafts folder",
      "Pass a draft_ref from create_draft, or a ref search finds in Drafts.",
    );
}

/**
 * Takes a draft out of Drafts: expunged where the policy allows expunge and the server has UIDPLUS
 * (so only this message goes), otherwise moved to Trash. Returns false when it was already gone.
 */
export async function removeDraft(
  client: ImapFlow,
  account: AccountConfig,
  ref: MessageRef,
): Promise<boolean> {
  const batch = { account: account.name, folder: ref.folder, uidValidity: ref.uidValidity, uids: [ref.uid] };
  const { present } = await existing(client, batch);
  if (present.length === 0) return false;
  if (account.policy.allow_expunge && client.capabilities.has("UIDPLUS")) {
    await expungeUids(client, batch);
    return true;
  }
  const trash = await roleFolder(client, account, "trash");
  const moved = await transfer(client, batch, trash, "move");
  const r = moved.get(ref.uid);
  if (r instanceof MailError) throw r;
  return true;
}

/** The ref of a message with this Message-ID in a folder, or undefined. */
export async function findMessageId(
  client: ImapFlow,
  account: AccountConfig,
  path: string,
  messageId: string,
): Promise<string | undefined> {
  await client.mailboxOpen(path, { readOnly: true });
  const query =
    account.provider === "google"
      ? // Gmail's search documents rfc822msgid: with the Message-ID without its angle brackets.
        { gmraw: `rfc822msgid:${messageId.replace(/^<|>$/g, "")}` }
      : { header: { "message-id": messageId } };
  const uids = await client.search(query, { uid: true });
  if (!Array.isArray(uids))
    throw new MailError("SERVER_UNAVAILABLE", `the IMAP server of account ${account.name} refused SEARCH`);
  if (uids.length === 0) return undefined;
  const uv = client.mailbox ? Number(client.mailbox.uidValidity) : 0;
  return encodeRef({ account: account.name, folder: path, uidValidity: uv, uid: uids[0]! });
}
