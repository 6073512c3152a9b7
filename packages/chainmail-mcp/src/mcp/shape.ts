/**
 * Turns daemon results into tool results: every string that came from a message or a mail server is
 * wrapped with `untrusted()`; refs, account names (from the user's config) and our own enums are not.
 */
import type {
  Address,
  BatchResult,
  WireError,
  ListFoldersResult,
  Message,
  SearchResult,
  SearchRow,
} from "@mcpforge/chainmail";
import { untrusted } from "@mcpforge/toolkit";

/**
 * A per-ref, per-check or partial error: the seed's fields, with the message fenced as the seed has
 * it, and the outside text that explains it (a server's reply, a folder's name) as its own untrusted
 * `detail`, as the kit does for a call's error.
 */
export function itemError(
  e: WireError | { reason: string; message: string; hint?: string; detail?: string | undefined },
) {
  return {
    reason: e.reason,
    message: untrusted(e.message),
    hint: e.hint ?? "",
    ...(e.detail ? { detail: untrusted(e.detail) } : {}),
  };
}

export const address = (a: Address) => ({ name: untrusted(a.name), address: untrusted(a.address) });

const orNull = (s: string | null | undefined) => (s === null || s === undefined ? null : untrusted(s));

export function message(m: Message) {
  return {
    ref: m.ref,
    account: m.account,
    folder: untrusted(m.folder),
    message_id: orNull(m.message_id),
    in_reply_to: orNull(m.in_reply_to),
    references: m.references.map(untrusted),
    thread_id: untrusted(m.thread_id),
    date: m.date,
    from: m.from.map(address),
    to: m.to.map(address),
    cc: m.cc.map(address),
    bcc: m.bcc.map(address),
    reply_to: m.reply_to.map(address),
    subject: untrusted(m.subject),
    flags: m.flags,
    keywords: m.keywords.map(untrusted),
    ...(m.labels ? { labels: m.labels.map(untrusted) } : {}),
    size: m.size,
    body: untrusted(m.body),
    body_truncated: m.body_truncated,
    attachments: m.attachments.map((a) => ({
      part: a.part,
      filename: untrusted(a.filename),
      content_type: untrusted(a.content_type),
      size: a.size,
      inline: a.inline,
    })),
    source: m.source,
  };
}

export function searchRow(r: SearchRow) {
  return {
    ref: r.ref,
    account: r.account,
    folder: untrusted(r.folder),
    date: r.date,
    from: r.from ? address(r.from) : null,
    subject: untrusted(r.subject),
    flags: r.flags,
    keywords: r.keywords.map(untrusted),
    size: r.size,
    has_attachment: r.has_attachment,
    message_id: orNull(r.message_id),
    thread_id: untrusted(r.thread_id),
    ...(r.snippet !== undefined ? { snippet: untrusted(r.snippet) } : {}),
  };
}

export function partial(list: SearchResult["partial"] | ListFoldersResult["partial"]) {
  return list.map((p) => ({
    account: p.account,
    ...(p.folder !== undefined ? { folder: untrusted(p.folder) } : {}),
    error: itemError(p.error),
  }));
}

export function batch(r: BatchResult) {
  return {
    outcomes: r.outcomes.map((o) => ({
      ref: o.ref,
      ...(o.new_ref !== undefined ? { new_ref: o.new_ref } : {}),
      ...(o.error ? { error: itemError(o.error) } : {}),
    })),
    succeeded: r.succeeded,
    failed: r.failed,
  };
}

/** "2 of 3 refs done; 1 failed" for a batch summary line. */
export function batchSummary(verb: string, r: { succeeded: number; failed: number }): string {
  const total = r.succeeded + r.failed;
  return `${verb} ${r.succeeded} of ${total} message${total === 1 ? "" : "s"}${r.failed ? `; ${r.failed} failed` : ""}`;
}
