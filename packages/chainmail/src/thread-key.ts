/**
 * The one thread key every path uses: the cache's `thread_key` column, the `thread_id` of search rows,
 * get_message and get_thread (server and cache alike), search's thread collapsing and thread links.
 *
 * Rule, first that applies:
 * 1. Gmail's thread id (X-GM-THRID), as its decimal digits.
 * 2. The first Message-ID in References (the thread's root), else the first in In-Reply-To, else the
 *    message's own Message-ID, each as `<local@domain>` in lowercase (IMAP header search, which finds
 *    the thread's members on the server, ignores case too).
 * 3. A message with none of these: `x:` and 24 hex digits of a SHA-256 of its Date header (as epoch
 *    milliseconds), its first From address in lowercase and its subject. Nothing here depends on the
 *    folder, the UID or the cache, so the key survives a move, a copy, a rename and a cache rebuild.
 */
import crypto from "node:crypto";

export interface ThreadKeyInput {
  gmThreadId?: string | bigint | null | undefined;
  references?: readonly string[] | null | undefined;
  inReplyTo?: string | null | undefined;
  messageId?: string | null | undefined;
  /** Only for a message with no ids at all. */
  date?: number | string | Date | null | undefined;
  fromAddress?: string | null | undefined;
  subject?: string | null | undefined;
}

/**
 * The bracketed Message-IDs in a header value (References, In-Reply-To), in order: the one reading
 * of them every path shares. (`<[^>]+>`, which two paths had, backtracked over the rest of the value
 * at each `<` with no `>` after it: quadratic on a stranger's megabyte of header.)
 */
export function messageIds(v: string | null | undefined): string[] {
  return v ? (v.match(ID) ?? []) : [];
}

/** Message-IDs in the References line of a header block, in order. */
export function parseReferences(headers: Buffer | undefined): string[] {
  if (!headers) return [];
  const text = headers.toString("utf8").replace(/\r?\n[ \t]+/g, " ");
  // redos-ok: one line start after another, each line read once
  const m = /^references:(.*)$/im.exec(text);
  return messageIds(m?.[1]);
}

/** The first bracketed Message-ID in a header value, or null. */
export function firstMessageId(v: string | null | undefined): string | null {
  return v ? (ID_ONCE.exec(v)?.[0] ?? null) : null;
}

const ID = /<[^<>\s]+>/g;
const ID_ONCE = /<[^<>\s]+>/;

/**
 * `<id>` from a header value (the first bracketed id; else the trimmed value, bracketed when it is
 * one word with an @, as a sender who leaves the brackets off means it), lowercased. Unbracketed,
 * `In-Reply-To: root@example.com` made a reply a thread of its own in the cache, where the server's
 * get_thread (a HEADER search, which matches within "<root@example.com>") found the whole thread.
 */
function normId(v: string | null | undefined): string | null {
  if (!v) return null;
  const m = ID_ONCE.exec(v);
  const bare = v.trim();
  const id = (m ? m[0] : BARE_ID.test(bare) ? `<${bare}>` : bare).toLowerCase();
  return id === "" || id === "<>" ? null : id;
}

const BARE_ID = /^[^\s<>@]+@[^\s<>@]+$/;

function dateMs(d: ThreadKeyInput["date"]): number {
  if (d === null || d === undefined) return 0;
  const t = d instanceof Date ? d.getTime() : typeof d === "number" ? d : Date.parse(d);
  return Number.isFinite(t) ? t : 0;
}

export function canonicalThreadKey(p: ThreadKeyInput): string {
  if (p.gmThreadId !== null && p.gmThreadId !== undefined && String(p.gmThreadId) !== "")
    return String(p.gmThreadId);
  for (const r of p.references ?? []) {
    const id = normId(r);
    if (id) return id;
  }
  const root = normId(p.inReplyTo) ?? normId(p.messageId);
  if (root) return root;
  const basis = `${dateMs(p.date)}\n${(p.fromAddress ?? "").trim().toLowerCase()}\n${(p.subject ?? "").trim()}`;
  return `x:${crypto.createHash("sha256").update(basis).digest("hex").slice(0, 24)}`;
}
