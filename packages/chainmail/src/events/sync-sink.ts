/** Turns what a cache sync finds into events: the cache's SyncEvents, written to the event log. */
import { envelopeAddress } from "../cache/store.js";
import type { SyncedMessage } from "../imap/raw-fetch.js";
import type { SyncEvents, SyncFolder } from "../cache/index.js";
import { splitFlags } from "../imap/messages.js";
import { attachmentsFromStructure } from "../query/index.js";
import { encodeRef } from "../refs.js";
import type { SearchRow } from "../service/search/index.js";
import { headerIso } from "../header-date.js";
import { canonicalThreadKey, parseReferences } from "../thread-key.js";
import type { EventLog } from "./log.js";

const refOf = (f: SyncFolder, uid: number) =>
  encodeRef({ account: f.account, folder: f.path, uidValidity: Number(f.uidValidity), uid });

/** The message's search row, as search gives it (without a snippet: no body is fetched yet). */
export function searchRowOf(f: SyncFolder, m: SyncedMessage): SearchRow {
  const env = m.envelope;
  const from = env?.from?.[0];
  const { flags, keywords } = splitFlags(m.flags);
  return {
    ref: refOf(f, m.uid),
    account: f.account,
    folder: f.name,
    date: headerIso(env?.date),
    from: from ? { name: from.name ?? "", address: envelopeAddress(from.address) } : null,
    subject: env?.subject ?? "",
    flags,
    keywords,
    size: m.size ?? 0,
    has_attachment: attachmentsFromStructure(m.bodyStructure).length > 0,
    message_id: env?.messageId ?? null,
    thread_id: canonicalThreadKey({
      gmThreadId: m.threadId,
      references: parseReferences(m.headers),
      inReplyTo: env?.inReplyTo,
      messageId: env?.messageId,
      date: env?.date,
      fromAddress: envelopeAddress(from?.address),
      subject: env?.subject,
    }),
  };
}

export function syncSink(log: EventLog): SyncEvents {
  const base = (f: SyncFolder, uid: number) => ({
    account: f.account,
    folder: f.name,
    uidValidity: f.uidValidity,
    uid,
  });
  return {
    gap: (f, reason, uidNext) =>
      log.record({ ...base(f, 0), kind: "gap", change: `${reason}:${uidNext}`, data: { reason } }),
    added: (f, m) => {
      const row = searchRowOf(f, m);
      const labels = m.labels ? [...m.labels].sort() : undefined;
      log.record({
        ...base(f, m.uid),
        kind: "new",
        ...(labels ? { labels } : {}),
        data: { ref: row.ref, row, ...(labels ? { labels } : {}) },
      });
      log.newMail({ ...base(f, m.uid), ...(labels ? { labels } : {}) }, row);
    },
    flags: (f, m, change) => {
      const { flags, keywords } = splitFlags(m.flags);
      const labels = m.labels ? [...m.labels].sort() : undefined;
      log.record({
        ...base(f, m.uid),
        kind: "flags",
        ...(labels ? { labels } : {}),
        // MODSEQ names each change once; without it, the states before and after do.
        change: m.modseq !== undefined ? `modseq:${m.modseq}` : `${change.before}>${change.after}`,
        data: { ref: refOf(f, m.uid), flags, keywords, ...(labels ? { labels } : {}) },
      });
    },
    expunged: (f, uid) => log.record({ ...base(f, uid), kind: "expunged", data: { ref: refOf(f, uid) } }),
  };
}
