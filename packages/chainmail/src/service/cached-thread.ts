/**
 * get_thread answered by the cache: the thread's members come from the thread key index instead of
 * an IMAP SEARCH in every folder (one per folder, each reading headers; about 400 ms at 100,000
 * messages). It answers only when the cache knows every member: an account that is not Google (there
 * a ref's INBOX or label folder is a view of All Mail, which is all the cache holds), not changed
 * by the daemon since its last sync, every folder outside Trash and Junk with complete headers and
 * fresh, and the ref's own message readable from the cache. Otherwise the caller asks the server.
 */
import { cacheCanAnswerQuery } from "../cache/index.js";
import { stmt } from "../cache/schema.js";
import type { Message } from "../imap/messages.js";
import { type ThreadCandidate, planThread, threadFolderOrder } from "../imap/thread-plan.js";
import type { FolderRole } from "../query/index.js";
import { parseQuery } from "../query/parser.js";
import type { MessageRef } from "../refs.js";
import { canonicalThreadKey } from "../thread-key.js";
import { readCached } from "./cached-read.js";
import type { ServiceContext } from "./context.js";

const EVERYTHING = parseQuery("");

/**
 * The thread's members outside Trash and Junk: by thread key (the root's, the ref's own id's) and by
 * Message-ID. Each side has its own index; `+m.account` keeps SQLite from walking the account's
 * thread index instead (test/cache-plans.test.ts).
 */
export const THREAD_MEMBERS = `SELECT f.path, f.role, f.uidvalidity, m.uid, coalesce(x.date, m.internal_date) AS date, x.message_id
  FROM messages m JOIN folders f ON f.id = m.folder_id JOIN message_meta x ON x.id = m.id
  WHERE m.id IN (SELECT id FROM messages WHERE account = ? AND thread_key IN (?, ?)
      UNION SELECT id FROM message_meta WHERE message_id IN (?, ?))
    AND +m.account = ? AND (f.role IS NULL OR f.role NOT IN ('trash', 'junk'))
  ORDER BY f.path, m.uid`;

/** Whether the root's own message (by Message-ID, in the account) replies to something. */
export const ROOT_REPLIES = `SELECT 1 FROM message_meta x JOIN messages m ON m.id = x.id
  WHERE x.message_id = ? AND +m.account = ? AND (x.refs != '[]' OR x.in_reply_to IS NOT NULL) LIMIT 1`;

export interface CachedThreadPlan {
  start: Message;
  shown: ThreadCandidate[];
  omitted: ThreadCandidate[];
}

interface MemberRow {
  path: string;
  role: FolderRole | null;
  uidvalidity: string;
  uid: number;
  date: number;
  message_id: string | null;
}

/**
 * The members the server path would find for this ref, or null when the cache cannot tell. The
 * server searches the headers Message-ID, References and In-Reply-To for the thread's root and the
 * ref's own Message-ID; every message whose thread key is one of those two (its References start
 * with it, or it has no References and replies to it, or it is that message) or whose Message-ID is
 * one of them is what the index finds (README, "get_thread").
 */
export function cachedThreadPlan(
  ctx: ServiceContext,
  r: MessageRef,
  opts: { full: boolean },
  google: boolean,
): CachedThreadPlan | null {
  const cache = ctx.cache;
  if (!cache || google || cache.isDirty(r.account)) return null;
  const can = cacheCanAnswerQuery(cache.db, r.account, EVERYTHING, {
    freshSeconds: cache.settings.fresh_seconds,
  });
  if (!can.complete || !can.fresh) return null;
  const start = readCached(ctx, r, { full: opts.full, google });
  if (!start) return null;
  const root = start.thread_id;
  // The root's own message replies to something (a reply whose client sent In-Reply-To without
  // References starts a key of its own): messages that list the root later in their References
  // belong to the server's answer but carry another key, so only the server can name them.
  if (!root.startsWith("x:") && stmt(cache.db, ROOT_REPLIES).get(root, r.account) !== undefined) return null;
  // A key of the `x:` kind means the message has no ids: the server's header search finds nothing
  // and the thread is the message alone.
  const rows = root.startsWith("x:")
    ? []
    : (stmt(cache.db, THREAD_MEMBERS).all(
        r.account,
        root,
        start.message_id ? canonicalThreadKey({ messageId: start.message_id }) : root,
        root,
        start.message_id ?? root,
        r.account,
      ) as MemberRow[]);
  const byFolder = new Map<string, MemberRow[]>();
  for (const row of rows) byFolder.set(row.path, [...(byFolder.get(row.path) ?? []), row]);
  const folders = threadFolderOrder(
    [...byFolder.values()].map((list) => ({ path: list[0]!.path, role: list[0]!.role })),
    r.folder,
  );
  const candidates = folders.flatMap((f) =>
    (byFolder.get(f.path) ?? []).map(
      (row): ThreadCandidate => ({
        folder: row.path,
        uidValidity: Number(row.uidvalidity),
        uid: row.uid,
        date: row.date,
        messageId: row.message_id,
      }),
    ),
  );
  return { start, ...planThread(r, start, candidates) };
}
