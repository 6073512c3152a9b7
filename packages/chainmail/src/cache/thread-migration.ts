/** The cache migration that rewrites every row's thread_key with the canonical rule. */
import type Database from "better-sqlite3";
import { canonicalThreadKey } from "../thread-key.js";

export function recomputeThreadKeys(db: Database.Database): void {
  const rows = db
    .prepare(
      "SELECT m.id, x.gm_thread_id, x.refs, x.in_reply_to, x.message_id, x.date, x.from_json, x.subject FROM messages m JOIN message_meta x ON x.id = m.id",
    )
    .iterate() as IterableIterator<{
    id: number;
    gm_thread_id: string | null;
    refs: string;
    in_reply_to: string | null;
    message_id: string | null;
    date: number | null;
    from_json: string;
    subject: string;
  }>;
  const update = db.prepare("UPDATE messages SET thread_key = ? WHERE id = ?");
  const updates: [string, number][] = [];
  for (const r of rows) {
    const from = (JSON.parse(r.from_json) as { address?: string }[])[0]?.address;
    updates.push([
      canonicalThreadKey({
        gmThreadId: r.gm_thread_id,
        references: JSON.parse(r.refs) as string[],
        inReplyTo: r.in_reply_to,
        messageId: r.message_id,
        date: r.date,
        fromAddress: from,
        subject: r.subject,
      }),
      r.id,
    ]);
  }
  // Written after the read ends: better-sqlite3 refuses writes while an iterator is open.
  for (const [key, id] of updates) update.run(key, id);
}
