// An index of the addresses in From, To, Cc and Bcc, so `from:ann@example.com` (a whole address) is
// a range of one b-tree, newest first, instead of an FTS5 phrase: the phrase's tokens are common
// (`example`, `com` are in nearly every address), so counting its matches read the position lists
// of most of the mailbox (1.2 ms for 2,895 matches at 100,000 messages, 10 ms for the owner's own
// address, growing with the mailbox). Triggers on message_meta remove a message's rows, in the same
// transaction as whatever removes or rewrites its headers (an INSERT OR REPLACE deletes first: the
// old addresses go), and move them with the message. The rows of a message written go in with its
// headers (`indexAddresses`, from the one function that writes message_meta, src/cache/store.ts
// upsertMessage), a whole batch in two statements: a row trigger for each message and another for
// each address cost the header write about 15 us of CPU per message more (101-105 -> 86-90 us,
// 10,000 generated headers written alone, load 11). Addresses are stored in ASCII lower case
// (SQLite's lower()); the query side looks up only ASCII addresses (src/query/sql.ts, exactAddress).
import { ADDRESS_ATTACHED_VERSION, ADDRESS_BATCH_VERSION, type CacheDb, stmt } from "./schema.js";

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
 * The migration after ADDRESS_INDEX_SQL and ADDRESS_COUNTS_SQL: the rows of a message written come
 * from `indexAddresses`, a batch at a time, instead of these two row triggers.
 */
export function dropAddressInsertTriggers(db: CacheDb): void {
  db.exec("DROP TRIGGER IF EXISTS message_addresses_ins; DROP TRIGGER IF EXISTS address_counts_ins;");
}

/**
 * One row of message_addresses: the address in ASCII lower case, its header, the message, its
 * folder, and whether the message has attachments (1 or 0, its messages.has_attachment).
 */
export type AddressRow = [address: string, field: number, id: number, folderId: number, attached: number];

/** What SQLite's lower() does without ICU: ASCII letters only, as the migration and the query side. */
const asciiLower = (s: string) => (/[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s);

type AddressLists = Partial<Record<keyof typeof ADDRESS_FIELDS, readonly { address?: string }[]>>;

/**
 * The index rows of a message from the address lists its headers are written with: each address
 * once per header, none for an empty one (as the migration reads them back from the JSON columns).
 */
export function addressRows(
  id: number,
  folderId: number,
  env: AddressLists | undefined,
  attached: number,
): AddressRow[] {
  const rows: AddressRow[] = [];
  if (!env) return rows;
  for (const key of ["from", "to", "cc", "bcc"] as const) {
    const list = env[key];
    if (!list) continue;
    const field = ADDRESS_FIELDS[key];
    const first = rows.length;
    for (const a of list) {
      if (!a.address) continue;
      const address = asciiLower(a.address);
      let seen = false;
      for (let k = first; k < rows.length && !seen; k++) seen = (rows[k] as AddressRow)[0] === address;
      if (!seen) rows.push([address, field, id, folderId, attached]);
    }
  }
  return rows;
}

// Both from a JSON array of arrays bound once: a batch's rows in one statement each
const INSERT_ROWS = `INSERT INTO message_addresses (address, field, id, folder_id, attached)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)`;
const ADD_COUNTS = `INSERT INTO address_counts (address, field, folder_id, n, attached)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?) WHERE true
  ON CONFLICT (address, field, folder_id) DO UPDATE SET n = n + excluded.n, attached = attached + excluded.attached`;
// (a file of a version before the attachment counts: the tests that migrate write one with this code)
const INSERT_ROWS_UNATTACHED = `INSERT INTO message_addresses (address, field, id, folder_id)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)`;
const ADD_COUNTS_UNATTACHED = `INSERT INTO address_counts (address, field, folder_id, n)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?) WHERE true
  ON CONFLICT (address, field, folder_id) DO UPDATE SET n = n + excluded.n`;

/**
 * Adds the index rows (`addressRows`) of messages whose headers were just written, inserted or
 * replaced (the delete trigger has removed a replaced message's old rows), and counts them. Call in
 * the transaction that wrote them.
 */
export function indexAddresses(db: CacheDb, rows: readonly AddressRow[]): void {
  // A file of an older version (the migration tests write one with this code): before the index
  // there is nothing to add, and until the migration after it its row triggers add the rows
  if (rows.length === 0) return;
  const version = stmt(db, "PRAGMA user_version").pluck().get() as number;
  if (version < ADDRESS_BATCH_VERSION) return;
  const counts = new Map<string, [string, number, number, number, number]>();
  for (const [address, field, , folderId, attached] of rows) {
    const key = `${field} ${folderId} ${address}`;
    const c = counts.get(key);
    if (c) {
      c[3]++;
      c[4] += attached;
    } else counts.set(key, [address, field, folderId, 1, attached]);
  }
  const old = version < ADDRESS_ATTACHED_VERSION;
  stmt(db, old ? INSERT_ROWS_UNATTACHED : INSERT_ROWS).run(JSON.stringify(rows));
  stmt(db, old ? ADD_COUNTS_UNATTACHED : ADD_COUNTS).run(JSON.stringify([...counts.values()]));
}

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

/**
 * The migration step that counts, per address, header and folder, the messages with attachments
 * (`address_counts.attached`), so `has:attachment from:ann@example.com` is counted from a few rows
 * like the address alone, not by probing the attachment index once per message of the address (at
 * 1,000,000 messages 21,239 probes, 5.6 ms, for the top sender). Each index row carries its
 * message's flag (`message_addresses.attached`), so the triggers that take a row out or move it
 * know what to take from the counts; a trigger on messages.has_attachment changes it. Re-runnable:
 * the columns are added when missing and every value is computed anew from the messages.
 */
export function addAddressAttached(db: CacheDb): void {
  const has = (table: string) =>
    (db.prepare("SELECT name FROM pragma_table_info(?)").pluck().all(table) as string[]).includes("attached");
  if (!has("message_addresses"))
    db.exec("ALTER TABLE message_addresses ADD COLUMN attached INTEGER NOT NULL DEFAULT 0");
  if (!has("address_counts"))
    db.exec("ALTER TABLE address_counts ADD COLUMN attached INTEGER NOT NULL DEFAULT 0");
  db.exec(`
    DROP TRIGGER IF EXISTS address_counts_del;
    DROP TRIGGER IF EXISTS address_counts_upd;
    DROP TRIGGER IF EXISTS address_counts_attached;
    DROP TRIGGER IF EXISTS message_addresses_attached;
    UPDATE message_addresses AS a SET attached = (m.has_attachment = 1) FROM messages m
      WHERE m.id = a.id AND a.attached IS NOT (m.has_attachment = 1);
    UPDATE address_counts SET attached = 0 WHERE attached != 0;
    UPDATE address_counts AS c SET attached = s.n
      FROM (SELECT address, field, folder_id, sum(attached) AS n FROM message_addresses
        WHERE attached = 1 GROUP BY address, field, folder_id) s
      WHERE c.address = s.address AND c.field = s.field AND c.folder_id = s.folder_id;
    CREATE TRIGGER address_counts_del AFTER DELETE ON message_addresses BEGIN
      UPDATE address_counts SET n = n - 1, attached = attached - old.attached
        WHERE address = old.address AND field = old.field AND folder_id = old.folder_id;
    END;
    CREATE TRIGGER address_counts_upd AFTER UPDATE OF folder_id ON message_addresses
    WHEN old.folder_id IS NOT new.folder_id BEGIN
      UPDATE address_counts SET n = n - 1, attached = attached - old.attached
        WHERE address = old.address AND field = old.field AND folder_id = old.folder_id;
      INSERT INTO address_counts (address, field, folder_id, n, attached)
        VALUES (new.address, new.field, new.folder_id, 1, new.attached)
        ON CONFLICT (address, field, folder_id) DO UPDATE SET n = n + 1, attached = attached + excluded.attached;
    END;
    -- (a change of folder and flag in one statement is address_counts_upd's)
    CREATE TRIGGER address_counts_attached AFTER UPDATE OF attached ON message_addresses
    WHEN old.attached IS NOT new.attached AND old.folder_id IS new.folder_id BEGIN
      UPDATE address_counts SET attached = attached - old.attached + new.attached
        WHERE address = new.address AND field = new.field AND folder_id = new.folder_id;
    END;
    CREATE TRIGGER message_addresses_attached AFTER UPDATE OF has_attachment ON messages
    WHEN (old.has_attachment = 1) IS NOT (new.has_attachment = 1) BEGIN
      UPDATE message_addresses SET attached = (new.has_attachment = 1) WHERE id = new.id
        AND address IN (SELECT ${ADDRESS} FROM message_meta x, json_each(x.from_json) j WHERE x.id = new.id
          UNION ALL SELECT ${ADDRESS} FROM message_meta x, json_each(x.to_json) j WHERE x.id = new.id
          UNION ALL SELECT ${ADDRESS} FROM message_meta x, json_each(x.cc_json) j WHERE x.id = new.id
          UNION ALL SELECT ${ADDRESS} FROM message_meta x, json_each(x.bcc_json) j WHERE x.id = new.id);
    END;`);
}
