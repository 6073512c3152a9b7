/**
 * What get_thread does with a thread's members once they are found, whether the server found them
 * (IMAP SEARCH in every folder) or the cache did (its thread key index): one folder order, one
 * de-duplication, one oldest-first order and one cut at THREAD_MAX_MESSAGES, so both paths give
 * the same result for the same members.
 */
import type { WireError } from "../errors.js";
import type { FolderRole } from "../query/index.js";
import { encodeRef, type MessageRef } from "../refs.js";
import type { Message } from "./messages.js";

export const THREAD_MAX_MESSAGES = 50;

export interface ThreadResult {
  thread_id: string;
  messages: Message[];
  truncated: boolean;
  omitted_refs: string[];
  /**
   * Members found but not read (the server refused their FETCH, a header too large to read, the
   * connection to fetch them failed): one entry per ref, as get_message reports its failed refs.
   */
  errors: ThreadError[];
  /**
   * Folders the server would not open or search for members (their members may be missing): the
   * shape of search's `partial`. Always empty when the cache named every member.
   */
  partial: ThreadPartial[];
}

export interface ThreadPartial {
  account: string;
  folder: string;
  error: WireError;
}

export interface ThreadError {
  ref: string;
  error: WireError;
}

/** Fetches members of one folder by UID; a member that cannot be read goes in `failures` with why. */
export type FetchMembers = (
  folder: string,
  uidValidity: number,
  uids: number[],
  failures: Map<number, WireError>,
) => Promise<Map<number, Message>>;

/** A message that names the thread, in the folder order of `threadFolderOrder`, UIDs ascending. */
export interface ThreadCandidate {
  folder: string;
  uidValidity: number;
  uid: number;
  /** Epoch ms of the Date header, else of the arrival time; 0 when neither is known. */
  date: number;
  messageId: string | null;
}

// imapflow's LIST order for special-use folders: keeping it leaves the server path's choice of copy
// as it was before the cache could answer.
const ROLE_ORDER: FolderRole[] = ["inbox", "flagged", "sent", "drafts", "all", "archive", "junk", "trash"];

/**
 * The order in which folders are searched, which decides which copy of a message present in several
 * folders is shown: the ref's own folder, then folders with a role (in ROLE_ORDER), then the others
 * by path (code-point order, so it does not depend on the locale).
 */
export function threadFolderOrder<F extends { path: string; role: FolderRole | null }>(
  folders: F[],
  refFolder: string,
): F[] {
  const rank = (f: F) =>
    f.path === refFolder ? -1 : f.role ? ROLE_ORDER.indexOf(f.role) : ROLE_ORDER.length;
  return [...folders].sort((a, b) => rank(a) - rank(b) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Keeps each Message-ID once (the first copy in folder order), adds the ref's own message when no
 * copy of it was found (no ids to search by, or it is in Trash or Junk), orders oldest first (ties
 * by UID) and keeps the newest THREAD_MAX_MESSAGES.
 */
export function planThread(
  ref: MessageRef,
  start: Message,
  candidates: ThreadCandidate[],
): { shown: ThreadCandidate[]; omitted: ThreadCandidate[] } {
  const hits: ThreadCandidate[] = [];
  const seenIds = new Set<string>();
  for (const c of candidates) {
    const id = c.messageId ?? `${c.folder}/${c.uidValidity}/${c.uid}`;
    if (seenIds.has(id)) continue;
    seenIds.add(id);
    hits.push(c);
  }
  if (
    !hits.some((h) => h.folder === ref.folder && h.uid === ref.uid) &&
    !(start.message_id && seenIds.has(start.message_id))
  ) {
    hits.push({
      folder: ref.folder,
      uidValidity: ref.uidValidity,
      uid: ref.uid,
      date: start.date ? Date.parse(start.date) : 0,
      messageId: start.message_id,
    });
  }
  hits.sort((a, b) => a.date - b.date || a.uid - b.uid);
  return {
    shown: hits.slice(-THREAD_MAX_MESSAGES),
    omitted: hits.slice(0, Math.max(0, hits.length - THREAD_MAX_MESSAGES)),
  };
}

/**
 * The shown members' messages, in order: the ref's own (already read), each one the cache can give,
 * and the rest through `fetch` (one call per folder). A member that no longer exists is left out; a
 * member that could not be read is an entry of `errors`.
 */
export async function threadMessages(
  ref: MessageRef,
  start: Message,
  shown: ThreadCandidate[],
  cached: (folder: string, uidValidity: number, uid: number) => Message | null,
  fetch: FetchMembers,
): Promise<{ messages: Message[]; errors: ThreadError[] }> {
  const key = (folder: string, uid: number) => `${folder}\u0000${uid}`;
  const got = new Map<string, Message>([[key(ref.folder, ref.uid), start]]);
  const failed = new Map<string, WireError>();
  const byFolder = new Map<string, ThreadCandidate[]>();
  for (const h of shown) byFolder.set(h.folder, [...(byFolder.get(h.folder) ?? []), h]);
  for (const [folder, all] of byFolder) {
    const uv = all[0]!.uidValidity;
    const missing: number[] = [];
    for (const h of all) {
      if (got.has(key(folder, h.uid))) continue;
      const m = cached(folder, uv, h.uid);
      if (m) got.set(key(folder, h.uid), m);
      else missing.push(h.uid);
    }
    if (missing.length === 0) continue;
    const failures = new Map<number, WireError>();
    const map = await fetch(folder, uv, missing, failures);
    for (const uid of missing) {
      const m = map.get(uid);
      if (m) got.set(key(folder, uid), m);
      else if (failures.has(uid)) failed.set(key(folder, uid), failures.get(uid)!);
    }
  }
  return {
    messages: shown.flatMap((h) => got.get(key(h.folder, h.uid)) ?? []),
    errors: shown.flatMap((h) => {
      const error = failed.get(key(h.folder, h.uid));
      return error ? [{ ref: memberRef(ref, h), error }] : [];
    }),
  };
}

const memberRef = (ref: MessageRef, h: ThreadCandidate) =>
  encodeRef({ account: ref.account, folder: h.folder, uidValidity: h.uidValidity, uid: h.uid });

export function threadResult(
  ref: MessageRef,
  threadId: string,
  read: { messages: Message[]; errors: ThreadError[] },
  omitted: ThreadCandidate[],
  partial: ThreadPartial[] = [],
): ThreadResult {
  return {
    thread_id: threadId,
    messages: read.messages,
    truncated: omitted.length > 0,
    omitted_refs: omitted.map((h) => memberRef(ref, h)),
    errors: read.errors,
    partial,
  };
}
