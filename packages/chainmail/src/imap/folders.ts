/**
 * Folder operations. Names travel with "/" between levels (as every call and tool writes them) and
 * are converted to the server's delimiter here; a name as list_folders gives it is always accepted
 * back unchanged.
 */
import type { ImapFlow, ListResponse } from "imapflow";
import { MailError } from "../errors.js";

export type FolderRole = "inbox" | "sent" | "drafts" | "trash" | "junk" | "archive" | "all" | "flagged";

const ROLES: Record<string, FolderRole> = {
  "\\Inbox": "inbox",
  "\\Sent": "sent",
  "\\Drafts": "drafts",
  "\\Trash": "trash",
  "\\Junk": "junk",
  "\\Archive": "archive",
  "\\All": "all",
  "\\Flagged": "flagged",
};

export interface FolderInfo {
  /** The name other calls take ("/" between levels). */
  name: string;
  /** The server's path (internal; refs store it). */
  path: string;
  role: FolderRole | null;
  messages: number | null;
  unseen: number | null;
  selectable: boolean;
}

export function roleOf(f: Pick<ListResponse, "specialUse" | "path">): FolderRole | null {
  if (f.path.toUpperCase() === "INBOX") return "inbox";
  return (f.specialUse && ROLES[f.specialUse]) || null;
}

export function displayName(path: string, delimiter: string | undefined): string {
  return !delimiter || delimiter === "/" ? path : path.split(delimiter).join("/");
}

function toPath(name: string, delimiter: string | undefined): string {
  return !delimiter || delimiter === "/" ? name : name.split("/").join(delimiter);
}

export function validateFolderName(name: string, what = "folder name"): void {
  if (typeof name !== "string" || name.length === 0)
    throw new MailError("INVALID_ARGUMENT", `the ${what} is empty`);
  if (name.length > 500) throw new MailError("INVALID_ARGUMENT", `the ${what} is longer than 500 characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\x00-\x1f\x7f]/.test(name))
    throw new MailError("INVALID_ARGUMENT", `the ${what} contains a control character`);
  if (/[*%]/.test(name)) throw new MailError("INVALID_ARGUMENT", `the ${what} contains a wildcard (* or %)`);
  if (name.startsWith("/") || name.endsWith("/") || name.includes("//")) {
    throw new MailError(
      "INVALID_ARGUMENT",
      `the ${what} has an empty level (a leading, trailing or double /); the name is in detail`,
      undefined,
      `folder: ${name}`,
    );
  }
}

export async function listAll(client: ImapFlow, status: boolean): Promise<ListResponse[]> {
  return client.list(status ? { statusQuery: { messages: true, unseen: true } } : {});
}

export function toInfo(f: ListResponse): FolderInfo {
  const selectable = !f.flags.has("\\Noselect") && !f.flags.has("\\NonExistent");
  return {
    name: displayName(f.path, f.delimiter),
    path: f.path,
    role: roleOf(f),
    messages: f.status?.messages ?? null,
    unseen: f.status?.unseen ?? null,
    selectable,
  };
}

/** Finds a folder by the name list_folders gives (INBOX in any case). */
export async function findFolder(client: ImapFlow, name: string): Promise<ListResponse | undefined> {
  const all = await listAll(client, false);
  return matchFolder(all, name);
}

export function matchFolder(all: ListResponse[], name: string): ListResponse | undefined {
  if (name.toUpperCase() === "INBOX") return all.find((f) => f.path.toUpperCase() === "INBOX");
  return all.find((f) => displayName(f.path, f.delimiter) === name) ?? all.find((f) => f.path === name);
}

export async function requireFolder(client: ImapFlow, name: string): Promise<ListResponse> {
  const f = await findFolder(client, name);
  if (!f)
    throw new MailError(
      "NOT_FOUND",
      "no folder of that name; the name is in detail",
      "list_folders gives the folder names.",
      `folder: ${name}`,
    );
  return f;
}

export async function findByRole(client: ImapFlow, role: FolderRole): Promise<ListResponse | undefined> {
  const all = await listAll(client, false);
  return all.find((f) => roleOf(f) === role);
}

function serverPathFor(client: ImapFlow, name: string): string {
  const ns = client.namespace;
  const delimiter = ns?.delimiter ?? "/";
  const prefix = ns?.prefix ?? "";
  const displayPrefix = displayName(prefix, delimiter);
  let path = toPath(name, delimiter);
  if (prefix && name.toUpperCase() !== "INBOX" && !name.startsWith(displayPrefix)) path = prefix + path;
  return path;
}

/** Creates the folder and any missing parents; returns its name as list_folders will give it. */
export async function createFolder(
  client: ImapFlow,
  name: string,
): Promise<{ name: string; created: boolean }> {
  validateFolderName(name);
  const path = serverPathFor(client, name);
  const delimiter = client.namespace?.delimiter ?? "/";
  const parts = path.split(delimiter);
  let created = false;
  const existing = new Set((await listAll(client, false)).map((f) => f.path));
  for (let i = 1; i <= parts.length; i++) {
    const p = parts.slice(0, i).join(delimiter);
    if (existing.has(p) || (i < parts.length && p + delimiter === (client.namespace?.prefix ?? ""))) continue;
    const res = await client.mailboxCreate(p);
    if (i === parts.length) created = res.created;
  }
  // A client that shows subscribed folders only (Thunderbird, iOS Mail) would not show a folder
  // nobody subscribed; imapflow subscribes what it creates, and a folder that already existed
  // unsubscribed is subscribed here too, so create_folder's answer matches what such a client shows.
  if (!created) await client.mailboxSubscribe(path);
  return { name: displayName(path, delimiter), created };
}

export async function renameFolder(client: ImapFlow, from: string, to: string): Promise<{ name: string }> {
  validateFolderName(from, "from name");
  validateFolderName(to, "to name");
  const src = await requireFolder(client, from);
  if (src.path.toUpperCase() === "INBOX") {
    throw new MailError("INVALID_ARGUMENT", "INBOX cannot be renamed", "Move its messages instead.");
  }
  const all = await listAll(client, false);
  const dest = serverPathFor(client, to);
  if (all.some((f) => f.path === dest)) {
    throw new MailError(
      "CONFLICT",
      "a folder of the new name already exists; the name is in detail",
      undefined,
      `folder: ${to}`,
    );
  }
  // Create missing parents of the new name first, as create_folder does.
  const delimiter = src.delimiter || "/";
  const parts = dest.split(delimiter);
  for (let i = 1; i < parts.length; i++) {
    const p = parts.slice(0, i).join(delimiter);
    if (!all.some((f) => f.path === p) && p + delimiter !== (client.namespace?.prefix ?? ""))
      await client.mailboxCreate(p);
  }
  // RENAME leaves the subscription list alone (RFC 3501 6.3.5: subscriptions are names, not
  // folders), so the renamed folder and its subfolders would vanish from clients that show
  // subscribed folders only while the old names stay listed. They move with the folder here: the
  // folder itself is subscribed under its new name, a subfolder keeps the state it had.
  const under = src.path + delimiter;
  const subscribedChildren = all.filter((f) => f.subscribed && f.path.startsWith(under)).map((f) => f.path);
  const res = await client.mailboxRename(src.path, dest);
  await client.mailboxUnsubscribe(src.path);
  await client.mailboxSubscribe(res.newPath);
  for (const old of subscribedChildren) {
    await client.mailboxUnsubscribe(old);
    await client.mailboxSubscribe(res.newPath + delimiter + old.slice(under.length));
  }
  return { name: displayName(res.newPath, delimiter) };
}

/** Refuses INBOX, role folders and folders with subfolders; a folder holding mail needs force. */
export async function deleteFolder(
  client: ImapFlow,
  name: string,
  force: boolean,
): Promise<{ name: string; deleted: boolean }> {
  validateFolderName(name);
  const all = await listAll(client, false);
  const f = matchFolder(all, name);
  if (!f) {
    // Gone already (another client deleted it), but its subscription may be left behind, and LIST
    // does not show it: drop it, so clients showing subscribed folders stop listing a ghost.
    await client.mailboxUnsubscribe(serverPathFor(client, name));
    return { name, deleted: false };
  }
  const shown = displayName(f.path, f.delimiter);
  if (f.path.toUpperCase() === "INBOX") throw new MailError("INVALID_ARGUMENT", "INBOX cannot be deleted");
  const role = roleOf(f);
  if (role)
    throw new MailError(
      "INVALID_ARGUMENT",
      `the folder is the ${role} folder and cannot be deleted; its name is in detail`,
      undefined,
      `folder: ${shown}`,
    );
  const prefix = f.path + (f.delimiter || "/");
  if (all.some((x) => x.path.startsWith(prefix))) {
    throw new MailError(
      "CONFLICT",
      "the folder has subfolders; its name is in detail",
      "Delete or move its subfolders first.",
      `folder: ${shown}`,
    );
  }
  if (!force) {
    const st = await client.status(f.path, { messages: true });
    if (st && (st.messages ?? 0) > 0) {
      throw new MailError(
        "CONFLICT",
        `the folder holds ${st.messages} message(s); its name is in detail`,
        "Move the mail out first, or pass force to delete it with the folder.",
        `folder: ${shown}`,
      );
    }
  }
  await client.mailboxDelete(f.path);
  // DELETE leaves the subscription behind (RFC 3501 6.3.4); a client showing subscribed folders
  // would list a folder that no longer exists.
  await client.mailboxUnsubscribe(f.path);
  return { name: shown, deleted: true };
}
