/** The cache migrations that rewrite rows' thread_key with the canonical rule. */
import type Database from "better-sqlite3";
import { canonicalThreadKey } from "../thread-key.js";
import { envelopeAddress } from "./store.js";

/** Every row's thread_key, or those `where` picks (SQL over `m` messages and `x` message_meta). */
export function recomputeThreadKeys(db: Database.Database, where?: string): void {
  const rows = db
    .prepare(
      `SELECT m.id, x.gm_thread_id, x.refs, x.in_reply_to, x.message_id, x.date, x.from_json, x.subject FROM messages m JOIN message_meta x ON x.id = m.id${where ? ` WHERE ${where}` : ""}`,
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
    const from = envelopeAddress((JSON.parse(r.from_json) as { address?: string }[])[0]?.address);
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

const ADDRESS_COLUMNS = ["from_json", "to_json", "cc_json", "bcc_json", "reply_to_json"] as const;
const STAND_IN = "LIKE '%MISSING\\_%' ESCAPE '\\'";

/**
 * Rows written before the rules of src/header-date.ts's change: Dovecot's MISSING_MAILBOX and
 * MISSING_DOMAIN stand-ins in their address lists become no address (`envelopeAddress`), and the
 * thread key of a row whose ids come unbracketed or whose From held a stand-in is made again
 * (`normId` brackets a bare id now). Only such rows are read: a few, where a cache holds any.
 */
export function cleanStandInsAndBareIds(db: Database.Database): void {
  const dirty = db
    .prepare(
      `SELECT id, ${ADDRESS_COLUMNS.join(", ")} FROM message_meta WHERE ${ADDRESS_COLUMNS.map((c) => `${c} ${STAND_IN}`).join(" OR ")}`,
    )
    .all() as Record<string, string | number | null>[];
  for (const row of dirty)
    for (const c of ADDRESS_COLUMNS) {
      const json = row[c];
      if (typeof json !== "string" || !json.startsWith("[")) continue;
      const list = (JSON.parse(json) as { name?: string; address?: string }[]).map((a) => ({
        name: a.name ?? "",
        address: envelopeAddress(a.address),
      }));
      db.prepare(`UPDATE message_meta SET ${c} = ? WHERE id = ?`).run(JSON.stringify(list), row["id"]);
    }
  recomputeThreadKeys(
    db,
    `x.in_reply_to NOT LIKE '%<%' OR x.message_id NOT LIKE '%<%' OR x.id IN (${dirty.map((r) => Number(r["id"])).join(",") || "NULL"})`,
  );
}
