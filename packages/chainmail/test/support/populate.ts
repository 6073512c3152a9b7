// A populated cache without a server: rows written straight into cache.db with the shapes real mail
// gives (a Zipf-like vocabulary, a few hundred senders, 10% attachments, 30% unread, 10% flagged,
// sizes from 1 KiB to several MiB, threads), so query plans can be checked at a realistic size.
import type { CacheDb } from "../../src/cache/index.js";
import { listColumn } from "../../src/query/index.js";
import { newMessageSlot } from "../../src/cache/arrival-id.js";
import { insertSubject } from "../../src/cache/fts.js";
import { addressRows, indexAddresses } from "../../src/cache/address-index.js";

export const POP_NOW = Date.UTC(2025, 0, 1);
const SYL = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "so", "di", "an", "el", "or", "us"];
export const VOCAB = Array.from({ length: 20000 }, (_, i) => {
  let w = "";
  let x = i + 7;
  do {
    w += SYL[x % SYL.length];
    x = Math.floor(x / SYL.length);
  } while (x > 0);
  return w;
});
for (const [rank, w] of [
  [100, "meeting"],
  [150, "report"],
  [200, "invoice"],
  [300, "project"],
  [500, "budget"],
  [1000, "deadline"],
] as const)
  VOCAB[rank] = w;

/** The address of sender `i`, as `from:` takes it. */
export const senderAddress = (i: number) => `${VOCAB[i + 10]}${i}@${VOCAB[(i % 40) + 900]}.example`;

export interface PopulateOptions {
  /** Accounts and their message counts; each gets INBOX (most mail), Archive and Trash. */
  accounts: { name: string; messages: number }[];
  seed?: number;
}

/** Writes the rows in one transaction per account; returns the folder ids by "account/path". */
export function populateCache(db: CacheDb, o: PopulateOptions): Map<string, number> {
  let seed = o.seed ?? 42;
  const rnd = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const word = () => VOCAB[Math.floor(VOCAB.length * rnd() ** 2)] as string;
  const words = (n: number) => Array.from({ length: n }, word).join(" ");
  const folders = new Map<string, number>();
  const addFolder = db.prepare(
    "INSERT INTO folders (account, path, path_norm, role, uidvalidity, uidnext, server_count, last_sync, complete) VALUES (?, ?, ?, ?, '1', 1, 0, ?, 1)",
  );
  const addMsg = db.prepare(
    `INSERT INTO messages (id, folder_id, account, uid, thread_key, internal_date, seen, flagged, size, has_attachment, body_state, filenames_norm)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`,
  );
  const addMeta = db.prepare(
    "INSERT INTO message_meta (id, message_id, from_json, to_json, subject, attachments_json, date, reply_to_json) VALUES (?, ?, ?, '[]', ?, ?, ?, '[]')",
  );
  const addFts = db.prepare(
    "INSERT INTO messages_fts (rowid, subject, from_addr, to_addr, cc_addr, bcc_addr, body) VALUES (?, ?, ?, 'me me@bench.example', '', '', ?)",
  );
  const addBody = db.prepare(
    "INSERT INTO bodies (message_rowid, text, bytes, fetched_at) VALUES (?, ?, ?, ?)",
  );
  const span = 3 * 365 * 86_400_000;
  for (const a of o.accounts) {
    db.transaction(() => {
      for (const [p, role] of [
        ["INBOX", "inbox"],
        ["Archive", "archive"],
        ["Trash", "trash"],
      ] as const)
        folders.set(
          `${a.name}/${p}`,
          Number(addFolder.run(a.name, p, p.toLowerCase(), role, POP_NOW).lastInsertRowid),
        );
      const uids = new Map<number, number>();
      for (let i = 0; i < a.messages; i++) {
        const r = rnd();
        const folder = folders.get(
          `${a.name}/${r < 0.8 ? "INBOX" : r < 0.98 ? "Archive" : "Trash"}`,
        ) as number;
        const uid = (uids.get(folder) ?? 0) + 1;
        uids.set(folder, uid);
        const date = POP_NOW - span + Math.floor((span * i) / a.messages);
        const attach = i % 10 === 0;
        const size = attach ? 20_000 + Math.floor(rnd() ** 3 * 6_000_000) : 1500 + Math.floor(rnd() * 6000);
        const sender = Math.floor(rnd() * 400);
        const subject = words(3 + Math.floor(rnd() * 5));
        const from = `${VOCAB[sender + 10]} ${VOCAB[sender + 500]}`;
        const body = words(40 + Math.floor(rnd() * 120));
        const files = attach ? [`doc${i}.pdf`] : [];
        const slot = newMessageSlot(db, date);
        const id = slot.id;
        addMsg.run(
          id,
          folder,
          a.name,
          uid,
          `<t${Math.floor(i / 3)}@${a.name}>`,
          slot.internalDate,
          rnd() < 0.7 ? 1 : 0,
          rnd() < 0.1 ? 1 : 0,
          size,
          attach ? 1 : 0,
          listColumn(files),
        );
        addMeta.run(
          id,
          `<b${i}@${a.name}>`,
          JSON.stringify([{ name: from, address: senderAddress(sender) }]),
          subject,
          JSON.stringify(files.map((f) => ({ filename: f, contentType: "application/pdf", size }))),
          date,
        );
        addFts.run(id, subject, `${from} ${senderAddress(sender)}`, body);
        insertSubject(db, id, subject);
        // the header write's own address rows (the cache adds them per batch, not by a trigger)
        indexAddresses(
          db,
          addressRows(id, folder, { from: [{ address: senderAddress(sender) }] }, attach ? 1 : 0),
        );
        addBody.run(id, body, body.length, POP_NOW);
      }
      db.prepare(
        "UPDATE folders SET server_count = cached_count, uidnext = cached_count + 1 WHERE account = ?",
      ).run(a.name);
    })();
  }
  return folders;
}
