// The cache migration that indexes CJK characters one token each (src/query/cjk.ts): the FTS rows
// of messages with CJK text are written again from the stored headers and body text.
import type { MessageAddressObject } from "imapflow";
import { hasCjk } from "../query/cjk.js";
import { insertFts } from "./fts.js";
import type { CacheDb } from "./schema.js";
import { addrText } from "./store.js";

interface Row {
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

export function indexCjkCharacters(db: CacheDb): void {
  // A row without a CJK character indexes to the same tokens as before, so only rows with one are
  // written again (the stored JSON keeps CJK characters as they are, so it can be tested as text).
  // Bodies whose text was evicted (body_state 2) cannot be tested or indexed again: they are
  // fetched again by the backfill, which indexes each one anew (./store.ts, indexMessage), as the
  // arrival-order migration does (./arrival-migration.ts).
  db.exec("UPDATE messages SET body_state = 0 WHERE body_state = 2;");
  const batch = db.prepare(
    `SELECT m.id, m.body_state, x.subject, x.from_json, x.to_json, x.cc_json, x.bcc_json, b.text
     FROM messages m JOIN message_meta x ON x.id = m.id LEFT JOIN bodies b ON b.message_rowid = m.id
     WHERE m.id > ? ORDER BY m.id LIMIT 500`,
  );
  const remove = db.prepare("DELETE FROM messages_fts WHERE rowid = ?");
  let rewritten = 0;
  for (let after = -1; ; ) {
    const page = batch.all(after) as Row[];
    if (page.length === 0) break;
    for (const r of page) {
      const body = r.body_state === 1 ? (r.text ?? "") : "";
      const fields = [r.subject, r.from_json, r.to_json, r.cc_json, r.bcc_json, body];
      if (!fields.some((f) => f !== null && hasCjk(f))) continue;
      remove.run(r.id);
      insertFts(db, r.id, {
        subject: r.subject ?? "",
        from: addrs(r.from_json),
        to: addrs(r.to_json),
        cc: addrs(r.cc_json),
        bcc: addrs(r.bcc_json),
        body,
      });
      rewritten++;
    }
    after = (page[page.length - 1] as Row).id;
  }
  // The rewritten rows' old entries stay as tombstones until a merge: fold them in at once when
  // there were many (the upkeep merges between writes from then on, src/cache/fts.ts)
  if (rewritten > 1000) db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('optimize');");
}
