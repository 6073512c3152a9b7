/**
 * A thread is every message of the account whose References or Message-ID carry the thread's root id
 * (the first References entry, else In-Reply-To, else the message's own id). Trash and Junk are not
 * searched; a message present in several folders appears once, preferring the ref's own folder
 * (./thread-plan.ts has the rules both this and the cache's path follow).
 */
import { headerTime } from "../header-date.js";
import type { ImapFlow, SearchObject } from "imapflow";
import { MailError, toWireError, type WireError } from "../errors.js";
import { encodeRef, type MessageRef } from "../refs.js";
import { listAll, roleOf } from "./folders.js";
import { MESSAGE_GONE_HINT } from "./refusal.js";
import { takeRefusal } from "./connection.js";
import { searchRefused } from "../query/imap-run.js";
import { fetchMessages, fetchRefused, type Message, type ReadOptions } from "./messages.js";
import {
  type ThreadCandidate,
  type ThreadError,
  type ThreadPartial,
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
  // Searched without their brackets (IMAP's HEADER search matches within a value, so a reply that
  // wrote the id bare is found too); a hit is kept when it names an id whole (`namesAnId`)
  const bare = (id: string) => id.replace(/^<(.*)>$/, "$1").toLowerCase();
  const ids = new Set<string>([bare(root)]);
  if (start.message_id) ids.add(bare(start.message_id));
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
  // Members whose envelope the server refused to FETCH: known by UID only, so reported, not shown.
  const unread: ThreadError[] = [];
  // Folders the server would not open or search: their members may be missing, so said, never
  // taken as "no members there" (a dropped connection still fails the call)
  const partial: ThreadPartial[] = [];
  for (const f of threadFolderOrder(
    folders.map((x) => ({ path: x.path, role: roleOf(x) })),
    ref.folder,
  )) {
    try {
      await client.mailboxOpen(f.path, { readOnly: true });
    } catch (err) {
      if (!client.usable) throw err;
      const refusal = takeRefusal(client);
      // deleted since the LIST: nothing of the thread is there to miss
      if (refusal.code?.toUpperCase() !== "NONEXISTENT")
        partial.push({
          account: ref.account,
          folder: f.path,
          error: toWireError(searchRefused(client, "EXAMINE", refusal)),
        });
      continue;
    }
    if (!client.mailbox || client.mailbox.path !== f.path) continue;
    const uidValidity = Number(client.mailbox.uidValidity);
    const uids = await client.search(query, { uid: true });
    if (!Array.isArray(uids)) {
      const refused = searchRefused(client, "SEARCH");
      if (!client.usable) throw refused;
      partial.push({ account: ref.account, folder: f.path, error: toWireError(refused) });
      continue;
    }
    if (uids.length === 0) continue;
    let env: Awaited<ReturnType<typeof client.fetchAll>>;
    try {
      env = await client.fetchAll(
        uids,
        {
          uid: true,
          envelope: true,
          internalDate: true,
          headers: ["message-id", "references", "in-reply-to"],
        },
        { uid: true },
      );
    } catch (err) {
      const refused = fetchRefused(client, ref.account, err);
      if (!(refused instanceof MailError)) throw refused;
      for (const uid of uids)
        unread.push({
          ref: encodeRef({ account: ref.account, folder: f.path, uidValidity, uid }),
          error: toWireError(refused),
        });
      continue;
    }
    for (const m of env) {
      // (the search matched within a value: a longer id holding this one is another message's)
      if (!gmail && !namesAnId(m.headers, ids)) continue;
      hits.push({
        folder: f.path,
        uidValidity,
        uid: m.uid,
        // (a Date no clock holds is the arrival time, as in the cache: not NaN in the sort)
        date: headerTime(m.envelope?.date) ?? headerTime(m.internalDate) ?? 0,
        messageId: m.envelope?.messageId ?? null,
      });
    }
  }
  const { shown, omitted } = planThread(ref, start, hits);
  const read = await threadMessages(ref, start, shown, cached, (folder, uv, uids, failures) =>
    fetchMembers(client, ref.account, folder, uv, uids, opts, labels, failures),
  );
  return threadResult(
    ref,
    root,
    { messages: read.messages, errors: [...read.errors, ...unread] },
    omitted,
    partial,
  );
}

/**
 * Thread members of one folder by UID, as get_message reads its refs: a member that cannot be read
 * (the server refused the FETCH, a header too large) goes in `failures` and the others are still
 * read; a connection that broke fails the read, for the pool to retry it.
 */
export async function fetchMembers(
  client: ImapFlow,
  account: string,
  folder: string,
  uidValidity: number,
  uids: number[],
  opts: ReadOptions,
  labels: boolean,
  failures: Map<number, WireError>,
): Promise<Map<number, Message>> {
  const unreadable = new Map<number, MailError>();
  try {
    const got = await fetchMessages(client, account, folder, uidValidity, uids, opts, labels, unreadable);
    for (const [uid, why] of unreadable) failures.set(uid, toWireError(why));
    return got;
  } catch (err) {
    if (!client.usable) throw err;
    for (const uid of uids) failures.set(uid, toWireError(err));
    return new Map();
  }
}

/**
 * Whether a member's Message-ID, References or In-Reply-To names one of `ids` (bare, lowercase)
 * whole: bracketed, or as a word of its own (a sender who left the brackets off).
 */
function namesAnId(headers: Buffer | undefined, ids: ReadonlySet<string>): boolean {
  if (!headers) return false;
  const words = headers
    .toString("utf8")
    .replace(/\r?\n[ \t]+/g, " ")
    .split(/[\s,]+|(?=<)|(?<=>)/)
    .map((w) => w.replace(/^<(.*)>$/, "$1").toLowerCase());
  return words.some((w) => ids.has(w));
}
