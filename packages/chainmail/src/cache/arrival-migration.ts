// The cache migration to message ids that follow arrival time (./arrival-id.ts): renumbers every
// message, its meta and body rows, rebuilds the FTS index under the new ids, and adds the triggers
// that keep the order from then on.
import { ARRIVAL_ORDER_SQL, slotsInOrder } from "./arrival-id.js";
import { insertFts } from "./fts.js";
import type { CacheDb } from "./schema.js";
import { addrText } from "./store.js";
import type { MessageAddressObject } from "imapflow";

interface IndexRow {
  id: number;
  body_state: number;
  subject: string | null;
  from_json: string | null;
  to_json: string | null;
  cc_json: string | null;
  bcc_json: string | null;
  text: string | null;
}

const addrs = (json: string | null) => addrText(JSON.parse(json ?? "[]") as MessageAddressObject[]);

export function renumberByArrival(db: CacheDb): void {
  const rows = db.prepare("SELECT id, internal_date FROM messages ORDER BY internal_date, id").all() as {
    id: number;
    internal_date: number;
  }[];
  // (a test re-runs the steps after one: the order triggers go first and come back at the end)
  db.exec("DROP TRIGGER IF EXISTS messages_arrival_ins; DROP TRIGGER IF EXISTS messages_arrival_upd;");
  // Checked at the commit: the meta and body rows follow their message within the step
  db.pragma("defer_foreign_keys = ON");
  // Negative first, so no new id can meet an old one still in place
  db.exec(`UPDATE messages SET id = -id;
    UPDATE message_meta SET id = -id;
    UPDATE bodies SET message_rowid = -message_rowid;`);
  const moveMessage = db.prepare("UPDATE messages SET id = ?, internal_date = ? WHERE id = ?");
  const moveMeta = db.prepare("UPDATE message_meta SET id = ? WHERE id = ?");
  const moveBody = db.prepare("UPDATE bodies SET message_rowid = ? WHERE message_rowid = ?");
  const slot = slotsInOrder();
  for (const r of rows) {
    const s = slot(r.internal_date);
    moveMessage.run(s.id, s.internalDate, -r.id);
    moveMeta.run(s.id, -r.id);
    moveBody.run(s.id, -r.id);
  }

  // A contentless index cannot move a row: every row is indexed again from the stored headers and
  // body text. Bodies whose text was evicted (body_state 2) have nothing to index from, so they
  // are fetched again by the backfill, as after a full header fetch (./store.ts, upsertMessage).
  db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('delete-all');
    UPDATE messages SET body_state = 0 WHERE body_state = 2;`);
  const batch = db.prepare(
    `SELECT m.id, m.body_state, x.subject, x.from_json, x.to_json, x.cc_json, x.bcc_json, b.text
     FROM messages m JOIN message_meta x ON x.id = m.id LEFT JOIN bodies b ON b.message_rowid = m.id
     WHERE m.id > ? ORDER BY m.id LIMIT 500`,
  );
  for (let after = -1; ; ) {
    const page = batch.all(after) as IndexRow[];
    if (page.length === 0) break;
    for (const r of page) {
      insertFts(db, r.id, {
        subject: r.subject ?? "",
        from: addrs(r.from_json),
        to: addrs(r.to_json),
        cc: addrs(r.cc_json),
        bcc: addrs(r.bcc_json),
        body: r.body_state === 1 ? (r.text ?? "") : "",
      });
    }
    after = (page[page.length - 1] as IndexRow).id;
  }
  // One segment, as a fresh index would be after its merges
  db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('optimize');");
  db.exec(ARRIVAL_ORDER_SQL);
}
