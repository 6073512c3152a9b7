// An index of the addresses in From, To, Cc and Bcc, so `from:ann@example.com` (a whole address) is
// a range of one b-tree, newest first, instead of an FTS5 phrase: the phrase's tokens are common
// (`example`, `com` are in nearly every address), so counting its matches read the position lists
// of most of the mailbox (1.2 ms for 2,895 matches at 100,000 messages, 10 ms for the owner's own
// address, growing with the mailbox). Triggers on message_meta keep it, in the same transaction as
// whatever writes or removes a message's headers (an INSERT OR REPLACE deletes first: the old
// addresses go), so no writer can forget it. Addresses are stored in ASCII lower case (SQLite's
// lower()); the query side looks up only ASCII addresses (src/query/sql.ts, exactAddress).
import type { CacheDb } from "./schema.js";

/** message_addresses.field for each address header. */
export const ADDRESS_FIELDS = { from: 0, to: 1, cc: 2, bcc: 3 } as const;

const COLUMNS = [
  ["from_json", ADDRESS_FIELDS.from],
  ["to_json", ADDRESS_FIELDS.to],
  ["cc_json", ADDRESS_FIELDS.cc],
  ["bcc_json", ADDRESS_FIELDS.bcc],
] as const;

const ADDRESS = "lower(j.value ->> 'address')";

/**
 * One statement for the four headers (each statement of a trigger has its own cost, and the
 * header sync runs this for every message); the message's folder read once.
 */
const insertFrom = (row: string, folder: string) =>
  `INSERT OR IGNORE INTO message_addresses (address, field, id, folder_id)
     SELECT ${ADDRESS}, h.field, ${row}.id, f.folder_id
     FROM (SELECT ${folder} AS folder_id) f,
       (${COLUMNS.map(([col, field]) => `SELECT ${field} AS field, ${row}.${col} AS list`).join(" UNION ALL ")}) h,
       json_each(h.list) j
     WHERE coalesce(j.value ->> 'address', '') != '';`;

export const ADDRESS_INDEX_SQL = `
  CREATE TABLE message_addresses (
    address TEXT NOT NULL,
    field INTEGER NOT NULL,
    -- messages.id: ids follow arrival time, so a range of (address, field) is newest first by id
    id INTEGER NOT NULL,
    -- the message's folder, so the Trash/Junk scope is tested without reading the message row
    folder_id INTEGER NOT NULL,
    PRIMARY KEY (address, field, id)
  ) WITHOUT ROWID;
  CREATE TRIGGER message_addresses_ins AFTER INSERT ON message_meta BEGIN
    ${insertFrom("new", "(SELECT folder_id FROM messages WHERE id = new.id)")}
  END;
  CREATE TRIGGER message_addresses_del AFTER DELETE ON message_meta BEGIN
    ${COLUMNS.map(
      ([col, field]) =>
        `DELETE FROM message_addresses WHERE field = ${field} AND id = old.id
           AND address IN (SELECT ${ADDRESS} FROM json_each(old.${col}) j);`,
    ).join("\n")}
  END;
  CREATE TRIGGER message_addresses_move AFTER UPDATE OF folder_id ON messages
  WHEN old.folder_id IS NOT new.folder_id BEGIN
    UPDATE message_addresses SET folder_id = new.folder_id WHERE id = new.id
      AND address IN (SELECT ${ADDRESS} FROM message_meta x, json_each(x.from_json) j WHERE x.id = new.id
        UNION ALL SELECT ${ADDRESS} FROM message_meta x, json_each(x.to_json) j WHERE x.id = new.id
        UNION ALL SELECT ${ADDRESS} FROM message_meta x, json_each(x.cc_json) j WHERE x.id = new.id
        UNION ALL SELECT ${ADDRESS} FROM message_meta x, json_each(x.bcc_json) j WHERE x.id = new.id);
  END;`;

// Messages per address, header and folder, kept from the index's rows: an address alone (with the
// Trash/Junk scope) is counted from a few rows, not from its range (the owner's own address is in
// To of most mail: 77,000 entries to count at 100,000 messages)
export const ADDRESS_COUNTS_SQL = `
  CREATE TABLE address_counts (
    address TEXT NOT NULL,
    field INTEGER NOT NULL,
    folder_id INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (address, field, folder_id)
  ) WITHOUT ROWID;
  INSERT INTO address_counts (address, field, folder_id, n)
    SELECT address, field, folder_id, count(*) FROM message_addresses GROUP BY address, field, folder_id;
  CREATE TRIGGER address_counts_ins AFTER INSERT ON message_addresses BEGIN
    INSERT INTO address_counts (address, field, folder_id, n) VALUES (new.address, new.field, new.folder_id, 1)
      ON CONFLICT (address, field, folder_id) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER address_counts_del AFTER DELETE ON message_addresses BEGIN
    UPDATE address_counts SET n = n - 1
      WHERE address = old.address AND field = old.field AND folder_id = old.folder_id;
  END;
  CREATE TRIGGER address_counts_upd AFTER UPDATE OF folder_id ON message_addresses
  WHEN old.folder_id IS NOT new.folder_id BEGIN
    UPDATE address_counts SET n = n - 1
      WHERE address = old.address AND field = old.field AND folder_id = old.folder_id;
    INSERT INTO address_counts (address, field, folder_id, n) VALUES (new.address, new.field, new.folder_id, 1)
      ON CONFLICT (address, field, folder_id) DO UPDATE SET n = n + 1;
  END;`;

/**
 * The migration step: the tables, their triggers, and the addresses of the messages cached so far
 * (the counts from them in one pass, then kept by triggers).
 */
export function addAddressIndex(db: CacheDb): void {
  // A step runs again when an older user_version is found (a copy restored from a backup, a
  // downgrade and upgrade): built anew from the cached headers, never on top of an old copy
  db.exec(`DROP TRIGGER IF EXISTS message_addresses_ins;
    DROP TRIGGER IF EXISTS message_addresses_del;
    DROP TRIGGER IF EXISTS message_addresses_move;
    DROP TABLE IF EXISTS address_counts;
    DROP TABLE IF EXISTS message_addresses;`);
  db.exec(ADDRESS_INDEX_SQL);
  for (const [col, field] of COLUMNS)
    db.exec(`INSERT OR IGNORE INTO message_addresses (address, field, id, folder_id)
      SELECT ${ADDRESS}, ${field}, x.id, m.folder_id FROM message_meta x JOIN messages m ON m.id = x.id,
        json_each(x.${col}) j
      WHERE coalesce(json_extract(j.value, '$.address'), '') != ''`);
  db.exec(ADDRESS_COUNTS_SQL);
}
