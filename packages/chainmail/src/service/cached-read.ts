/**
 * Reading a message from the local cache. The cached copy suffices when its folder is fresh (same
 * rule as search), the ref's UIDVALIDITY is the cached one, the body is stored (not evicted, not cut
 * at the cache's 100,000 characters) and is not made from HTML, and the row has Reply-To (rows
 * synced before migration 2 do not). Otherwise the server answers. An HTML body's cached text is the
 * word index's, without its links' addresses (htmlToPlain), where a reader needs them: an agent
 * asked to follow a link in a newsletter or a sign-in mail read none from the cache. Bodies stored
 * before the cache kept that (`from_html` NULL) are judged by their text part where it was noted.
 */
import { folderFresh, noteCacheRead } from "../cache/index.js";
import { decodeTextPart, MAX_BODY_CHARS } from "../cache/body.js";
import { decodeBody } from "../cache/body-store.js";
import { stmt } from "../cache/schema.js";
import { storedReplyTo } from "../cache/store.js";
import type { AttachmentInfo as CachedAttachment } from "../query/structure.js";
import { shapeBody } from "../imap/body.js";
import type { Address, Message } from "../imap/messages.js";
import { encodeRef, type MessageRef } from "../refs.js";
import { canonicalThreadKey, firstMessageId } from "../thread-key.js";
import type { ServiceContext } from "./context.js";

interface Row {
  path: string;
  uidvalidity: string;
  last_sync: number | null;
  last_error: string | null;
  uid: number;
  seen: number;
  flagged: number;
  answered: number;
  draft: number;
  deleted: number;
  size: number;
  message_id: string | null;
  in_reply_to: string | null;
  refs: string;
  gm_thread_id: string | null;
  date: number | null;
  from_json: string;
  to_json: string;
  cc_json: string;
  bcc_json: string;
  reply_to_json: string | null;
  subject: string;
  keywords_json: string;
  labels_json: string;
  attachments_json: string;
  /** The stored body (src/cache/body-store.ts): text, or compressed per `enc`. */
  text: string | Buffer;
  enc: number;
  /** The body's text was made from HTML (1), or not (0); NULL: stored before this was kept. */
  from_html: number | null;
  /** The body's text is one part of several the message reads as (1); 0 or NULL: whole. */
  partial: number | null;
  text_part: string | null;
}

/** A body made from HTML (or, stored before that was kept, whose text part is HTML). */
const fromHtml = (row: Pick<Row, "from_html" | "text_part">) =>
  row.from_html === 1 ||
  (row.from_html === null && row.text_part !== null && decodeTextPart(row.text_part).html);

export function readCached(
  ctx: ServiceContext,
  r: MessageRef,
  /** `idsOnly`: the caller reads the message's ids, never its body (an HTML body's text will do). */
  opts: { full: boolean; google: boolean; idsOnly?: boolean },
): Message | null {
  const cache = ctx.cache;
  if (!cache || cache.isDirty(r.account)) return null;
  // Prepared once per connection: a thread reads up to 50 messages through here
  const row = stmt(
    cache.db,
    `SELECT f.path, f.uidvalidity, f.last_sync, f.last_error, m.uid, m.seen, m.flagged, m.answered, m.draft,
         m.deleted, m.size, x.message_id, x.in_reply_to, x.refs, x.gm_thread_id, x.date, x.from_json, x.to_json,
         x.cc_json, x.bcc_json, x.reply_to_json, x.subject, x.keywords_json, x.labels_json, x.attachments_json, b.text,
         b.enc, b.from_html, b.partial, x.text_part
       FROM folders f JOIN messages m ON m.folder_id = f.id JOIN message_meta x ON x.id = m.id
       JOIN bodies b ON b.message_rowid = m.id
       WHERE f.account = ? AND f.path = ? AND m.uid = ? AND m.body_state = 1`,
  ).get(r.account, r.folder, r.uid) as Row | undefined;
  if (!row || row.reply_to_json === null || (!opts.idsOnly && (fromHtml(row) || row.partial === 1)))
    return null;
  // (bodies are stored compressed: src/cache/body-store.ts)
  const stored = decodeBody(row.text, row.enc);
  if (stored.length >= MAX_BODY_CHARS) return null;
  if (String(row.uidvalidity) !== String(r.uidValidity)) return null;
  // A watch without NOTIFY checks the folders read lately in the background (a Map write)
  noteCacheRead(r.account, row.path);
  const fresh = folderFresh(
    { account: r.account, path: row.path, last_sync: row.last_sync, last_error: row.last_error },
    { freshSeconds: cache.settings.fresh_seconds },
  );
  if (!fresh) return null;
  const ref = encodeRef(r);
  const addrs = (j: string) => JSON.parse(j) as Address[];
  const references = JSON.parse(row.refs) as string[];
  const inReplyTo = firstMessageId(row.in_reply_to);
  // A text part the backfill stored as the server sent it keeps its CRLF line ends; the server path
  // (mailparser) gives LF, and both paths must give the same body
  const text = stored.includes("\r") ? stored.replace(/\r\n?/g, "\n") : stored;
  const { body, truncated } = shapeBody(text, opts.full, ctx.config.daemon.body_limit);
  const flags = (["answered", "deleted", "draft", "flagged", "seen"] as const).filter((f) => row[f] === 1);
  return {
    ref,
    account: r.account,
    folder: row.path,
    message_id: row.message_id,
    in_reply_to: inReplyTo,
    references,
    thread_id: canonicalThreadKey({
      gmThreadId: row.gm_thread_id,
      references,
      // (the raw value, as the key stored at sync and the server's search make it)
      inReplyTo: row.in_reply_to,
      messageId: row.message_id,
      date: row.date,
      fromAddress: addrs(row.from_json)[0]?.address,
      subject: row.subject,
    }),
    date: row.date === null ? null : new Date(row.date).toISOString(),
    from: addrs(row.from_json),
    to: addrs(row.to_json),
    cc: addrs(row.cc_json),
    bcc: addrs(row.bcc_json),
    // (IMAP servers fill ENVELOPE's reply-to with From when the header is absent; the server path
    // says [] then: src/cache/store.ts, storedReplyTo)
    reply_to: storedReplyTo<Address>(row.reply_to_json, row.from_json),
    subject: row.subject,
    flags,
    keywords: (JSON.parse(row.keywords_json) as string[]).sort(),
    ...(opts.google ? { labels: (JSON.parse(row.labels_json) as string[]).sort() } : {}),
    size: row.size,
    body,
    body_truncated: truncated,
    attachments: (JSON.parse(row.attachments_json) as CachedAttachment[]).map((a) => ({
      part: a.part,
      filename: a.filename ?? `part-${a.part}`,
      content_type: a.content_type,
      size: a.size,
      inline: a.disposition === "inline",
    })),
    source: "cache",
  };
}
