// The cache migrations of CJK text (src/query/cjk.ts): the FTS rows of messages with CJK text are
// written again from the stored headers and body text, once for CJK characters indexed one token
// each, once for the boundary tokens between CJK characters and the separators beside them.
import type { MessageAddressObject } from "imapflow";
import { hasCjk } from "../query/cjk.js";
import { readBody } from "./body-store.js";
import { insertFts, insertSubject } from "./fts.js";
import { schemaChanged } from "./tables.js";
import { type CacheDb, stmt } from "./schema.js";
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

type Headers = Omit<Row, "id" | "body_state" | "text">;

const addrs = (json: string | null) => addrText(JSON.parse(json ?? "[]") as MessageAddressObject[]);

/** Whether a message's stored headers or body text hold a CJK character. */
const holdsCjk = (r: Headers, body: string) =>
  [r.subject, r.from_json, r.to_json, r.cc_json, r.bcc_json, body].some((f) => f !== null && hasCjk(f));

/** Writes a message's word-index row again from its stored headers and body text. */
function reindex(db: CacheDb, id: number, r: Headers, body: string): void {
  stmt(db, "DELETE FROM messages_fts WHERE rowid = ?").run(id);
  insertFts(db, id, {
    subject: r.subject ?? "",
    from: addrs(r.from_json),
    to: addrs(r.to_json),
    cc: addrs(r.cc_json),
    bcc: addrs(r.bcc_json),
    body,
  });
}

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
  let rewritten = 0;
  for (let after = -1; ; ) {
    const page = batch.all(after) as Row[];
    if (page.length === 0) break;
    for (const r of page) {
      const body = r.body_state === 1 ? (r.text ?? "") : "";
      if (!holdsCjk(r, body)) continue;
      reindex(db, r.id, r, body);
      rewritten++;
    }
    after = (page[page.length - 1] as Row).id;
  }
  // The rewritten rows' old entries stay as tombstones until a merge: fold them in at once when
  // there were many (the upkeep merges between writes from then on, src/cache/fts.ts)
  if (rewritten > 1000) db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('optimize');");
}

/**
 * The first code point of the CJK characters' index terms (々, U+3005; Hiragana, Katakana, Han and
 * Hangul all lie above it). A term from here up may be a CJK character: the rows holding one are
 * the rows `indexCjkBoundaries` writes again (a few others, such as full-width Latin, are read and
 * skipped).
 */
const CJK_TERMS_FROM = "\u3005";

/**
 * The cache migration to boundary tokens between CJK characters and the separators beside them
 * (src/query/cjk.ts, `cjkSpaced`): the word index and the subjects' index rows of messages with CJK
 * text are written again. Re-runnable (each row is deleted before it is written).
 */
export function indexCjkBoundaries(db: CacheDb): void {
  // Which rows hold CJK text: since `indexCjkCharacters` every CJK character is a term of its own,
  // so the index's own term list says, without reading (and inflating) every stored body
  db.exec("CREATE VIRTUAL TABLE temp.cjk_terms USING fts5vocab(main, messages_fts, instance)");
  const ids = db
    .prepare("SELECT DISTINCT doc FROM temp.cjk_terms WHERE term >= ? ORDER BY doc")
    .pluck()
    .all(CJK_TERMS_FROM) as number[];
  db.exec("DROP TABLE temp.cjk_terms");
  // An evicted body (body_state 2) cannot be indexed again: it is fetched again by the backfill,
  // which indexes it anew (./store.ts, indexMessage), as `indexCjkCharacters` has it; only those
  // whose row holds CJK text
  const refetch = db.prepare("UPDATE messages SET body_state = 0 WHERE id = ? AND body_state = 2");
  const row = db.prepare(
    `SELECT m.body_state, x.subject, x.from_json, x.to_json, x.cc_json, x.bcc_json
     FROM messages m JOIN message_meta x ON x.id = m.id WHERE m.id = ?`,
  );
  schemaChanged(db);
  // (in id order: FTS5 writes its pending terms out whenever a rowid is lower than the last)
  for (const id of ids) {
    // (a body set to be fetched again leaves its row with the headers' words only until then)
    const evicted = refetch.run(id).changes > 0;
    const r = row.get(id) as Omit<Row, "id" | "text"> | undefined;
    if (!r) continue;
    const body = r.body_state === 1 ? (readBody(db, id) ?? "") : "";
    if (!evicted && !holdsCjk(r, body)) continue;
    reindex(db, id, r, body);
    if (r.subject && hasCjk(r.subject)) insertSubject(db, id, r.subject, r.subject);
  }
  if (ids.length > 1000) db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('optimize');");
}
