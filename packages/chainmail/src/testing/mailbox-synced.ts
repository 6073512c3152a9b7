// A generated message (./mailbox.ts) as the cache's header sync receives it, and its body text as the
// backfill stores it: for writing a cache.db with the cache's own code and no server
// (src/bench/scale-plans.ts, the storage tests).
import type { MessageStructureObject } from "imapflow";
import { htmlToPlain } from "../cache/body.js";
import type { SyncedMessage } from "../imap/raw-fetch.js";
import { mailboxMessage } from "./mailbox.js";

const addr = (s: string) => {
  const m = /^(.*)<([^>]+)>$/.exec(s.trim());
  return m ? { name: (m[1] as string).trim(), address: m[2] as string } : { name: "", address: s };
};

/** What the header FETCH would give for a generated message (envelope, structure, flags). */
export function syncedMailboxMessage(
  i: number,
  n: number,
  uid: number,
  now: Date,
): { msg: SyncedMessage; text: string } {
  const m = mailboxMessage(i, n, { now });
  const s = m.spec;
  const leaf = (type: string, part: string, extra: Partial<MessageStructureObject> = {}) =>
    ({ type, part, size: 0, ...extra }) as MessageStructureObject;
  let body: MessageStructureObject =
    s.text !== undefined && s.html !== undefined
      ? ({
          type: "multipart/alternative",
          childNodes: [leaf("text/plain", "1"), leaf("text/html", "2")],
        } as MessageStructureObject)
      : leaf(s.html !== undefined ? "text/html" : "text/plain", "1");
  if (s.attachments?.length)
    body = {
      type: "multipart/mixed",
      childNodes: [
        body,
        ...s.attachments.map((a, k) =>
          leaf(a.contentType, String(k + 2), {
            size: a.content.length,
            disposition: "attachment",
            dispositionParameters: { filename: a.filename },
          }),
        ),
      ],
    } as MessageStructureObject;
  const msg: SyncedMessage = {
    seq: uid,
    uid,
    flags: new Set(m.flags),
    size: Buffer.byteLength(m.raw),
    internalDate: m.date,
    envelope: {
      date: s.date,
      subject: s.subject,
      messageId: s.messageId,
      inReplyTo: s.inReplyTo,
      from: [addr(s.from)],
      to: s.to.map(addr),
      cc: (s.cc ?? []).map(addr),
    },
    bodyStructure: body,
    headers: s.references ? Buffer.from(`References: ${s.references.join(" ")}\r\n`) : undefined,
  } as SyncedMessage;
  return { msg, text: s.text ?? htmlToPlain(s.html ?? "") };
}
