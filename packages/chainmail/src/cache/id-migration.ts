// The cache migration to the narrower arrival ids (./arrival-id.ts, TIE_BITS 19 -> 14; issue 34):
// every message is renumbered in its (internal_date, id) order, its meta and body rows follow, and
// the indexes keyed by message id are built again from the stored headers and bodies: the
// addresses' index, and both FTS indexes (a contentless FTS5 table cannot move a row).
//
// Why: FTS5 stores each row id of a term's list as a varint of its difference from the one before,
// and with 2^19 ties per second two neighbouring messages (946 s apart, the median at 100,000
// messages) differ by 2^29: five bytes, for each of the 16 million (term, message) entries. At
// 2^14 it is four, and 13 MiB of the index's 132 at 100,000 messages (offline, the same text:
// 131.9 -> 119.1 MiB; with dense ids it would be 67 MiB). The ids themselves shrink from eight
// bytes to six in every index that holds one.
import type { MessageAddressObject } from "imapflow";
import { addAddressIndex, dropAddressInsertTriggers } from "./address-index.js";
import { ARRIVAL_ORDER_SQL, slotsInOrder } from "./arrival-id.js";
import { decodeBody } from "./body-store.js";
import { insertFts, insertSubject, schemaChanged } from "./fts.js";
import type { CacheDb } from "./schema.js";
import { REPLY_TO_IS_FROM, addrText } from "./store.js";

interface IndexRow {
  id: number;
  body_state: number;
  subject: string;
  from_json: string;
  to_json: string;
  cc_json: string;
  bcc_json: string;
  text: string | Buffer | null;
  enc: number | null;
}

const addrs = (json: string | null) => addrText(JSON.parse(json ?? "[]") as MessageAddressObject[]);

export function renumberCompactIds(db: CacheDb): void {
  db.exec("DROP TRIGGER IF EXISTS messages_arrival_ins; DROP TRIGGER IF EXISTS messages_arrival_upd;");
  // A Reply-To that is From, stored as From's JSON before the marker (./store.ts, replyToJson): the
  // rows are rewritten here anyway
  db.prepare("UPDATE message_meta SET reply_to_json = ? WHERE reply_to_json = from_json").run(
    REPLY_TO_IS_FROM,
  );
  const rows = db.prepare("SELECT id, internal_date FROM messages ORDER BY internal_date, id").all() as {
    id: number;
    internal_date: number;
  }[];
  if (rows.length > 0) {
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
  }
  // The addresses' index and its counts, built anew from the headers under the new ids (the step
  // that made them, then the one that left the inserts to the header write)
  addAddressIndex(db);
  dropAddressInsertTriggers(db);

  // Both FTS indexes written again in id order. Bodies whose text was evicted (body_state 2) have
  // nothing to index from: the backfill fetches them again, as after a full header fetch
  // (./store.ts, upsertMessage), as the earlier renumbering did (./arrival-migration.ts).
  db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('delete-all');
    INSERT INTO subjects_fts (subjects_fts) VALUES ('delete-all');
    UPDATE messages SET body_state = 0 WHERE body_state = 2;`);
  // (insertSubject asks once per connection whether subjects_fts is there: it is, from an earlier step)
  schemaChanged(db);
  const batch = db.prepare(
    `SELECT m.id, m.body_state, x.subject, x.from_json, x.to_json, x.cc_json, x.bcc_json, b.text, b.enc
     FROM messages m JOIN message_meta x ON x.id = m.id LEFT JOIN bodies b ON b.message_rowid = m.id
     WHERE m.id > ? ORDER BY m.id LIMIT 500`,
  );
  for (let after = -1; ; ) {
    const page = batch.all(after) as IndexRow[];
    if (page.length === 0) break;
    for (const r of page) {
      const body = r.body_state === 1 && r.text !== null ? decodeBody(r.text, r.enc ?? 0) : "";
      insertFts(db, r.id, {
        subject: r.subject,
        from: addrs(r.from_json),
        to: addrs(r.to_json),
        cc: addrs(r.cc_json),
        bcc: addrs(r.bcc_json),
        body,
      });
      insertSubject(db, r.id, r.subject);
    }
    after = (page[page.length - 1] as IndexRow).id;
  }
  // One segment each, as a fresh index would be after its merges
  db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('optimize');
    INSERT INTO subjects_fts (subjects_fts) VALUES ('optimize');`);
  db.exec(ARRIVAL_ORDER_SQL);
  // Every page written anew leaves its old one free (at 100,000 messages 118 MiB of them): given
  // back to the file system in a cache made with incremental auto-vacuum (openCache); an older one
  // keeps them for later writes
  if (db.pragma("auto_vacuum", { simple: true }) === 2) db.pragma("incremental_vacuum");
}
