/**
 * A thread is every message of the account whose References or Message-ID carry the thread's root id
 * (the first References entry, else In-Reply-To, else the message's own id). Trash and Junk are not
 * searched; a message present in several folders appears once, preferring the ref's own folder
 * (./thread-plan.ts has the rules both this and the cache's path follow).
 */
import type { ImapFlow, SearchObject } from "imapflow";
import { MailError } from "../errors.js";
import type { MessageRef } from "../refs.js";
import { listAll, roleOf } from "./folders.js";
import { MESSAGE_GONE_HINT } from "./refusal.js";
import { fetchMessages, type Message, type ReadOptions } from "./messages.js";
import {
  type ThreadCandidate,
  type ThreadResult,
  planThread,
  threadFolderOrder,
  threadMessages,
  threadResult,
} from "./thread-plan.js";

export { THREAD_MAX_MESSAGES, type ThreadResult } from "./thread-plan.js";

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
    throw new MailError(
      "NOT_FOUND",
      "the message is no longer in its folder on the server",
      MESSAGE_GONE_HINT,
    );
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
  const hits: ThreadCandidate[] = [];
  for (const f of threadFolderOrder(
    folders.map((x) => ({ path: x.path, role: roleOf(x) })),
    ref.folder,
  )) {
    const box = await client.mailboxOpen(f.path, { readOnly: true }).catch(() => undefined);
    if (!box || !client.mailbox || client.mailbox.path !== f.path) continue;
    const uidValidity = Number(client.mailbox.uidValidity);
    const uids = (await client.search(query, { uid: true })) || [];
    if (uids.length === 0) continue;
    const env = await client.fetchAll(uids, { uid: true, envelope: true, internalDate: true }, { uid: true });
    for (const m of env) {
      const date = m.envelope?.date ?? m.internalDate;
      hits.push({
        folder: f.path,
        uidValidity,
        uid: m.uid,
        date: date ? new Date(date).getTime() : 0,
        messageId: m.envelope?.messageId ?? null,
      });
    }
  }
  const { shown, omitted } = planThread(ref, start, hits);
  const messages = await threadMessages(ref, start, shown, cached, (folder, uv, uids) =>
    fetchMessages(client, ref.account, folder, uv, uids, opts, labels),
  );
  return threadResult(ref, root, messages, omitted);
}
