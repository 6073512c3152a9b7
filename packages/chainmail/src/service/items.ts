/**
 * The daemon's work item calls: the items module over state.db, each call audited under its
 * operation's action. Item calls pass no policy gate and touch no mail; link_thread reads the
 * linked message (from the cache when it can, else the server) for its thread key and Message-ID.
 */
import { MailError } from "../errors.js";
import { MESSAGE_GONE_HINT } from "../imap/refusal.js";
import { fetchMessages } from "../imap/messages.js";
import { ItemService } from "../items/service.js";
import type { LatestMessage } from "../items/model.js";
import { threadKeyOf } from "../items/thread-key.js";
import type { LinkTarget } from "../items/relations.js";
import { decodeRef, encodeRef } from "../refs.js";
import { ItemsStore } from "../store/items.js";
import { readCached } from "./cached-read.js";
import { type Call, type ServiceContext, accountOf, audit } from "./context.js";

const services = new WeakMap<ServiceContext, ItemService>();

/** The context's item service, made on first use over its state.db. */
export function itemsOf(ctx: ServiceContext): ItemService {
  let s = services.get(ctx);
  if (!s) {
    s = new ItemService({
      store: new ItemsStore(ctx.state.db),
      latestMessage: (account, key) => latestCached(ctx, account, key),
      onChange: (itemId, revision, change, place) => ctx.events.item(itemId, revision, change, place),
    });
    services.set(ctx, s);
  }
  return s;
}

/** The thread's newest cached message, outside Trash and Junk. */
function latestCached(ctx: ServiceContext, account: string, key: string): LatestMessage | null {
  const db = ctx.cache?.db;
  if (!db) return null;
  const row = db
    .prepare(
      `SELECT f.path, f.uidvalidity, m.uid, x.subject, x.from_json, m.internal_date
       FROM messages m JOIN folders f ON f.id = m.folder_id JOIN message_meta x ON x.id = m.id
       WHERE m.account = ? AND m.thread_key = ? AND coalesce(f.role, '') NOT IN ('trash', 'junk')
       ORDER BY m.internal_date DESC, m.id DESC LIMIT 1`,
    )
    .get(account, key) as
    | {
        path: string;
        uidvalidity: string;
        uid: number;
        subject: string;
        from_json: string;
        internal_date: number;
      }
    | undefined;
  if (!row) return null;
  const from = (JSON.parse(row.from_json) as Array<{ name: string; address: string }>)[0];
  return {
    ref: encodeRef({ account, folder: row.path, uidValidity: Number(row.uidvalidity), uid: row.uid }),
    subject: row.subject,
    from: from ? (from.name ? `${from.name} <${from.address}>` : from.address) : "",
    date: new Date(row.internal_date).toISOString(),
  };
}

/** Runs one item call and audits it: allowed, `duplicate` when told, error with the reason. */
export function auditedItem<T>(
  ctx: ServiceContext,
  call: Call,
  summary: string,
  fn: () => T,
  opts: { account?: string; duplicate?: (r: T) => boolean } = {},
): T {
  try {
    const r = fn();
    audit(ctx, call, opts.account ?? null, opts.duplicate?.(r) ? "duplicate" : "allowed", summary);
    return r;
  } catch (err) {
    audit(ctx, call, opts.account ?? null, "error", `${summary}: ${(err as MailError).reason ?? "INTERNAL"}`);
    throw err;
  }
}

/** The linked message's account, thread key and Message-ID, read without an audit row of its own. */
export async function linkTargetOf(ctx: ServiceContext, ref: string): Promise<LinkTarget> {
  const r = decodeRef(ref);
  const account = accountOf(ctx, r.account);
  const google = account.provider === "google";
  // The cache keeps X-GM-THRID on Google, so a cached message's thread_id is Gmail's thread id
  // there too: the server is read only for a message the cache cannot answer for.
  let m = readCached(ctx, r, { full: false, google, idsOnly: true });
  if (!m) {
    m = await ctx.pool.read(account, async (client) => {
      const got = await fetchMessages(
        client,
        r.account,
        r.folder,
        r.uidValidity,
        [r.uid],
        { full: false, bodyLimit: 100 },
        google,
      );
      return got.get(r.uid) ?? null;
    });
  }
  if (!m)
    throw new MailError(
      "NOT_FOUND",
      "the message is no longer in its folder on the server",
      MESSAGE_GONE_HINT,
    );
  if (!m.message_id)
    throw new MailError(
      "INVALID_ARGUMENT",
      "the message has no Message-ID header, so its thread cannot be linked",
      "Link another message of the same thread, one that has a Message-ID.",
    );
  return {
    account: r.account,
    threadKey: threadKeyOf({
      gmThreadId: google ? m.thread_id : null,
      references: m.references,
      inReplyTo: m.in_reply_to,
      messageId: m.message_id,
    }),
    messageId: m.message_id,
  };
}
