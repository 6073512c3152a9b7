/**
 * A thread is every message of the account whose References or Message-ID carry the thread's root id
 * (the first References entry, else In-Reply-To, else the message's own id). Trash and Junk are not
 * searched; a message present in several folders appears once, preferring the ref's own folder.
 */
import type { ImapFlow, SearchObject } from "imapflow";
import { MailError } from "../errors.js";
import type { MessageRef } from "../refs.js";
import { encodeRef } from "../refs.js";
import { listAll, roleOf } from "./folders.js";
import { fetchMessages, type Message, type ReadOptions } from "./messages.js";

export const THREAD_MAX_MESSAGES = 50;

export interface ThreadResult {
  thread_id: string;
  messages: Message[];
  truncated: boolean;
  omitted_refs: string[];
}

export async function readThread(
  client: ImapFlow,
  ref: MessageRef,
  opts: ReadOptions,
  labels: boolean,
  /** A message from the local cache when its cached copy suffices; the server is asked for the rest. */
  cached: (folder: string, uidValidity: number, uid: number) => Message | null = () => null,
): Promise<ThreadResult> {
  const start =
    cached(ref.folder, ref.uidValidity, ref.uid) ??
    (await fetchMessages(client, ref.account, ref.folder, ref.uidValidity, [ref.uid], opts, labels)).get(
      ref.uid,
    );
  if (!start) {
    throw new MailError("NOT_FOUND", "the message no longer exists on the server");
  }
  const root = start.thread_id;
  const ids = new Set<string>([root]);
  if (start.message_id) ids.add(start.message_id);
  // On Gmail, X-GM-THRID names the thread: every message of it is in All Mail.
  const gmail = labels && client.capabilities.has("X-GM-EXT-1") && /^[0-9]+$/.test(root);
  const query: SearchObject = gmail
    ? { threadId: root }
    : {
        or: [...ids].flatMap((id): SearchObject[] => [
          { header: { "message-id": id } },
          { header: { references: id } },
          { header: { "in-reply-to": id } },
        ]),
      };
  let folders = (await listAll(client, false)).filter(
    (f) =>
      !f.flags.has("\\Noselect") &&
      !f.flags.has("\\NonExistent") &&
      roleOf(f) !== "trash" &&
      roleOf(f) !== "junk",
  );
  if (gmail) {
    const all = folders.filter((f) => roleOf(f) === "all");
    if (all.length) folders = all;
  }
  // The ref's own folder first, so its copy wins the de-duplication.
  folders.sort((a, b) => Number(b.path === ref.folder) - Number(a.path === ref.folder));
  type Hit = { folder: string; uidValidity: number; uid: number; date: number; id: string };
  const hits: Hit[] = [];
  const seenIds = new Set<string>();
  for (const f of folders) {
    const box = await client.mailboxOpen(f.path, { readOnly: true }).catch(() => undefined);
    if (!box || !client.mailbox || client.mailbox.path !== f.path) continue;
    const uidValidity = Number(client.mailbox.uidValidity);
    const uids = (await client.search(query, { uid: true })) || [];
    if (uids.length === 0) continue;
    const env = await client.fetchAll(uids, { uid: true, envelope: true, internalDate: true }, { uid: true });
    for (const m of env) {
      const id = m.envelope?.messageId ?? `${f.path}/${uidValidity}/${m.uid}`;
      if (seenIds.has(id)) continue;
      seenIds.add(id);
      const date = m.envelope?.date ?? m.internalDate;
      hits.push({ folder: f.path, uidValidity, uid: m.uid, date: date ? new Date(date).getTime() : 0, id });
    }
  }
  // A message with no Message-ID, References or In-Reply-To is named by nothing the search can
  // match (its thread id is its own ref), and one in Trash or Junk is outside the folders searched:
  // its thread is still at least the message itself.
  const startKey = `${ref.folder}\u0000${ref.uid}`;
  if (
    !hits.some((h) => h.folder === ref.folder && h.uid === ref.uid) &&
    !(start.message_id && seenIds.has(start.message_id))
  ) {
    hits.push({
      folder: ref.folder,
      uidValidity: ref.uidValidity,
      uid: ref.uid,
      date: start.date ? Date.parse(start.date) : 0,
      id: start.message_id ?? startKey,
    });
  }
  hits.sort((a, b) => a.date - b.date || a.uid - b.uid);
  const shown = hits.slice(-THREAD_MAX_MESSAGES);
  const omitted = hits.slice(0, Math.max(0, hits.length - THREAD_MAX_MESSAGES));
  const messages: Message[] = [];
  const byFolder = new Map<string, Hit[]>();
  for (const h of shown) byFolder.set(h.folder, [...(byFolder.get(h.folder) ?? []), h]);
  // The message asked for is already read.
  const got = new Map<string, Message>([[startKey, start]]);
  for (const [folder, all] of byFolder) {
    const uv = all[0]!.uidValidity;
    const list: Hit[] = [];
    for (const h of all) {
      if (got.has(`${folder}\u0000${h.uid}`)) continue;
      const m = cached(folder, uv, h.uid);
      if (m) got.set(`${folder}\u0000${h.uid}`, m);
      else list.push(h);
    }
    if (list.length === 0) continue;
    const map = await fetchMessages(
      client,
      ref.account,
      folder,
      uv,
      list.map((h) => h.uid),
      opts,
      labels,
    );
    for (const h of list) {
      const m = map.get(h.uid);
      if (m) got.set(`${folder}\u0000${h.uid}`, m);
    }
  }
  for (const h of shown) {
    const m = got.get(`${h.folder}\u0000${h.uid}`);
    if (m) messages.push(m);
  }
  return {
    thread_id: root,
    messages,
    truncated: omitted.length > 0,
    omitted_refs: omitted.map((h) =>
      encodeRef({ account: ref.account, folder: h.folder, uidValidity: h.uidValidity, uid: h.uid }),
    ),
  };
}
