import type { MessageAddressObject } from "imapflow";
import type { SyncedMessage } from "../imap/raw-fetch.js";
import { type FolderRole, attachmentsFromStructure, listColumn } from "../query/index.js";
import { type CacheDb, stmt } from "./schema.js";
import { classifyFlags, type ShortFlag } from "../imap/flags.js";
import { canonicalThreadKey, parseReferences } from "../thread-key.js";
import { headerTime } from "../header-date.js";
import { encodeTextPart, textPartRef } from "./body.js";
import { newMessageSlot } from "./arrival-id.js";
import { insertFts, insertSubject } from "./fts.js";
import { readBody } from "./body-store.js";
import { type AddressRow, addressRows, indexAddresses } from "./address-index.js";
import { foldSubjectChanges } from "./subject-counts.js";

export interface FolderRow {
  id: number;
  account: string;
  path: string;
  role: FolderRole | null;
  uidvalidity: string | null;
  uidnext: number | null;
  highestmodseq: string | null;
  server_count: number;
  last_sync: number | null;
  complete: number;
  last_error: string | null;
  /** Counters kept by triggers (migration 4): cached messages, bodies indexed, bodies unreadable. */
  cached_count: number;
  with_body: number;
  unreadable: number;
  /** Cached messages with at least one label (Gmail's X-GM-LABELS). */
  labelled: number;
}

export function getFolder(db: CacheDb, account: string, path: string): FolderRow | undefined {
  return stmt(db, "SELECT * FROM folders WHERE account = ? AND path = ?").get(account, path) as
    | FolderRow
    | undefined;
}

export function ensureFolder(db: CacheDb, account: string, path: string, role: FolderRole | null): FolderRow {
  stmt(
    db,
    "INSERT INTO folders (account, path, path_norm, role) VALUES (?, ?, ?, ?) ON CONFLICT (account, path) DO UPDATE SET role = excluded.role",
  ).run(account, path, path.toLowerCase(), role);
  return getFolder(db, account, path) as FolderRow;
}

export const addrText = (list: MessageAddressObject[] | undefined) =>
  (list ?? []).map((a) => [a.name ?? "", a.address ?? ""].join(" ").trim()).join(" ");
/**
 * The same text as `JSON.stringify(list.map(a => ({ name, address })))`, without the objects: the
 * header sync writes five of these per message, and the garbage collector is a tenth of its CPU.
 */
export const addrJson = (list: MessageAddressObject[] | undefined) => {
  if (!list || list.length === 0) return "[]";
  let json = "[";
  for (let i = 0; i < list.length; i++) {
    const a = list[i] as MessageAddressObject;
    json += `${i ? "," : ""}{"name":${JSON.stringify(a.name ?? "")},"address":${JSON.stringify(envelopeAddress(a.address))}}`;
  }
  return `${json}]`;
};

/**
 * An ENVELOPE address as chainmail gives it: Dovecot answers MISSING_MAILBOX or MISSING_DOMAIN
 * (RFC 3501's way) for what a sender wrote that is no address (a bare name, `<>`, a group's end),
 * and those were handed to the agent as addresses ("Ann@MISSING_DOMAIN"): no address, "".
 */
export function envelopeAddress(address: string | undefined): string {
  if (!address) return "";
  return address.includes("MISSING_MAILBOX") || address.includes("MISSING_DOMAIN") ? "" : address;
}

/** ENVELOPE's address list as get_message gives it (`addrJson`'s objects). */
export function envelopeAddresses(
  list: MessageAddressObject[] | undefined,
): { name: string; address: string }[] {
  return (list ?? []).map((a) => ({ name: a.name ?? "", address: envelopeAddress(a.address) }));
}

/**
 * message_meta.reply_to_json when Reply-To is From: IMAP servers fill ENVELOPE's reply-to with From
 * when the message has no Reply-To header, so nearly every row held From's JSON twice (6.9 MiB of
 * 100,000 generated messages). Not JSON, so no real list reads as it; rows written before keep the
 * copy, which reads the same (`storedReplyTo`). NULL stays "synced before Reply-To was kept".
 */
export const REPLY_TO_IS_FROM = "=";

/** What to store as reply_to_json, given the stored from_json. */
export const replyToJson = (list: MessageAddressObject[] | undefined, fromJson: string) => {
  const json = addrJson(list);
  return json === fromJson ? REPLY_TO_IS_FROM : json;
};

/**
 * The Reply-To list a row's reply_to_json and from_json stand for. A Reply-To that is From (the
 * marker, or From's JSON in a row written before it) is [], as the server path (the parsed message)
 * says when the header is absent.
 */
export function storedReplyTo<A>(json: string, fromJson: string): A[] {
  return json === REPLY_TO_IS_FROM || json === fromJson ? [] : (JSON.parse(json) as A[]);
}

/** The flag columns and keywords of a message; case-insensitive as IMAP flags are (see flags.ts). */
export function splitFlags(flags: Set<string> | undefined) {
  const { system, keywords } = classifyFlags(flags);
  const bit = (f: ShortFlag) => (system.has(f) ? 1 : 0);
  return {
    seen: bit("seen"),
    flagged: bit("flagged"),
    answered: bit("answered"),
    draft: bit("draft"),
    deleted: bit("deleted"),
    keywords,
  };
}

/**
 * Runs FTS writes collected while writing a batch, after its other writes. A write to another
 * table with a statement journal (INSERT OR REPLACE, a foreign key) after an FTS write makes FTS5
 * write its pending terms out as a segment of their own (its savepoint handler): interleaved, a
 * batch of 1,000 messages became dozens of tiny segments for automerge to fold together again.
 */
export function runFtsWrites(writes: FtsWrite[]): void {
  // The address rows of the batch's messages first, all in two statements (./address-index.ts)
  const first = writes.find((w) => w.addresses)?.addresses;
  if (first)
    indexAddresses(
      first.db,
      writes.flatMap((w) => w.addresses?.rows ?? []),
    );
  // In ascending rowid order: FTS5 also writes its pending terms out whenever a rowid is lower than
  // the last one written, and ids follow arrival time (./arrival-id.ts), which UID order need not
  writes.sort((a, b) => a.id - b.id);
  for (const w of writes) w.write();
  // The subjects' index after the word index's writes, also in ascending id order (FTS5 writes its
  // pending terms out at a lower rowid; plain INSERTs into the two FTS tables interleaved do not
  // flush either: one segment each for a batch of 1,000)
  for (const w of writes) w.subject?.();
  // The kept subject word counts take the batch's changes in once enough have gathered
  // (./subject-counts.ts); the header write's messages carry their connection with the addresses
  if (first) foldSubjectChanges(first.db);
  writes.length = 0;
}

/** An FTS write held back until the batch's other writes are done (see `runFtsWrites`). */
export interface FtsWrite {
  id: number;
  write: () => void;
  /** The message's write to the subjects' index (./fts.ts, insertSubject), run after every `write`. */
  subject?: () => void;
  /** From upsertMessage: the message's address index rows, added with the batch's (one cache). */
  addresses?: { db: CacheDb; rows: AddressRow[] };
}

const ftsDelete = (db: CacheDb, id: number) => stmt(db, "DELETE FROM messages_fts WHERE rowid = ?").run(id);

/** (Re)writes a message's FTS row from its stored columns and the given body text. */
export function indexMessage(db: CacheDb, id: number, body: string): void {
  const m = stmt(
    db,
    "SELECT subject, from_json, to_json, cc_json, bcc_json FROM message_meta WHERE id = ?",
  ).get(id) as
    | { subject: string; from_json: string; to_json: string; cc_json: string; bcc_json: string }
    | undefined;
  if (!m) return;
  const t = (j: string) => addrText(JSON.parse(j) as MessageAddressObject[]);
  ftsDelete(db, id);
  insertFts(db, id, {
    subject: m.subject,
    from: t(m.from_json),
    to: t(m.to_json),
    cc: t(m.cc_json),
    bcc: t(m.bcc_json),
    body,
  });
}

const NARROW_COLS = [
  "folder_id",
  "account",
  "uid",
  "thread_key",
  "internal_date",
  "seen",
  "flagged",
  "answered",
  "draft",
  "deleted",
  "size",
  "has_attachment",
  "keywords_norm",
  "labels_norm",
  "filenames_norm",
] as const;
const META_COLS = [
  "message_id",
  "in_reply_to",
  "refs",
  "gm_thread_id",
  "date",
  "from_json",
  "to_json",
  "cc_json",
  "bcc_json",
  "reply_to_json",
  "subject",
  "keywords_json",
  "labels_json",
  "attachments_json",
  "modseq",
  "text_part",
] as const;
const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");
// Built once and bound by position: an initial sync runs these 100,000 times, and building the SQL
// text per message, then binding named parameters from a fresh object, showed in its profile
const INSERT_NARROW = `INSERT INTO messages (${NARROW_COLS.join(", ")}, id) VALUES (${marks(NARROW_COLS.length + 1)})`;
// A message's arrival time never changes (its id follows it: ./arrival-id.ts), so an update leaves it
const DATE_COL = NARROW_COLS.indexOf("internal_date");
const UPDATE_NARROW = `UPDATE messages SET ${NARROW_COLS.filter((c) => c !== "internal_date")
  .map((c) => `${c} = ?`)
  .join(", ")} WHERE id = ?`;
const PUT_META = `INSERT OR REPLACE INTO message_meta (${META_COLS.join(", ")}, id) VALUES (${marks(META_COLS.length + 1)})`;
// A new message's row: its id was just taken (newMessageSlot), so there is no row to replace, and a
// plain INSERT spares REPLACE's look-up for one to delete first (and its delete triggers' checks)
const INSERT_META = `INSERT INTO message_meta (${META_COLS.join(", ")}, id) VALUES (${marks(META_COLS.length + 1)})`;

/** A message's cached row id and body state, when it is cached. */
export interface CachedRow {
  id: number;
  body_state: number;
}

/** The cached rows of a folder with UIDs in [lo, hi], by UID: one statement for a whole batch. */
export function cachedRows(db: CacheDb, folderId: number, lo: number, hi: number): Map<number, CachedRow> {
  const rows = stmt(
    db,
    "SELECT uid, id, body_state FROM messages WHERE folder_id = ? AND uid BETWEEN ? AND ?",
  ).all(folderId, lo, hi) as (CachedRow & { uid: number })[];
  return new Map(rows.map((r) => [r.uid, { id: r.id, body_state: r.body_state }]));
}

/**
 * A fetched message as the values of its rows: numbers, strings and arrays of them only, so that it
 * crosses to the header writer's thread (./writer.ts) as cheap structured-clone data, not as
 * imapflow's objects (envelopes, Sets, Dates, Buffers). `headerRow` makes it; `writeHeaderRow` writes
 * it, on whichever connection writes.
 */
export interface HeaderRow {
  uid: number;
  folderId: number;
  /** In NARROW_COLS order (internal_date as fetched; the write moves it to its arrival slot). */
  narrow: (string | number)[];
  /** In META_COLS order. */
  meta: (string | number | null)[];
  subject: string;
  /** The FTS row's from, to, cc and bcc text. */
  people: [from: string, to: string, cc: string, bcc: string];
  /** The address index rows, their id 0 until the message's id is known. */
  addresses: AddressRow[];
}

/** The values `writeHeaderRow` writes for one fetched message (headers, flags, structure). */
export function headerRow(folder: Pick<FolderRow, "id" | "account">, msg: SyncedMessage): HeaderRow {
  const env = msg.envelope;
  const refs = parseReferences(msg.headers);
  const flags = splitFlags(msg.flags);
  const labels = [...(msg.labels ?? [])];
  const attachments = attachmentsFromStructure(msg.bodyStructure);
  // messages.has_attachment, and each address row's copy of it (./address-index.ts)
  const hasAttachment = attachments.length ? 1 : 0;
  const textPart = textPartRef(msg.bodyStructure);
  const internal = msg.internalDate ? new Date(msg.internalDate).getTime() : Date.now();
  // In NARROW_COLS order
  const narrow: (string | number)[] = [
    folder.id,
    folder.account,
    msg.uid,
    canonicalThreadKey({
      gmThreadId: msg.threadId,
      references: refs,
      inReplyTo: env?.inReplyTo,
      messageId: env?.messageId,
      date: env?.date,
      fromAddress: envelopeAddress(env?.from?.[0]?.address),
      subject: env?.subject,
    }),
    Number.isFinite(internal) ? internal : Date.now(),
    flags.seen,
    flags.flagged,
    flags.answered,
    flags.draft,
    flags.deleted,
    msg.size ?? 0,
    hasAttachment,
    listColumn(flags.keywords),
    listColumn(labels),
    listColumn(attachments.map((a) => a.filename ?? "")),
  ];
  const subject = env?.subject ?? "";
  const fromJson = addrJson(env?.from);
  // In META_COLS order
  const meta: (string | number | null)[] = [
    env?.messageId ?? null,
    env?.inReplyTo ?? null,
    JSON.stringify(refs),
    msg.threadId ?? null,
    headerTime(env?.date),
    fromJson,
    addrJson(env?.to),
    addrJson(env?.cc),
    addrJson(env?.bcc),
    replyToJson(env?.replyTo, fromJson),
    subject,
    JSON.stringify(flags.keywords),
    JSON.stringify(labels),
    JSON.stringify(attachments),
    msg.modseq !== undefined ? String(msg.modseq) : null,
    textPart ? encodeTextPart(textPart) : null,
  ];
  return {
    uid: msg.uid,
    folderId: folder.id,
    narrow,
    meta,
    subject,
    people: [addrText(env?.from), addrText(env?.to), addrText(env?.cc), addrText(env?.bcc)],
    addresses: addressRows(0, folder.id, env, hasAttachment),
  };
}

/** A message's address rows under its id (`HeaderRow.addresses` are made before the id is known). */
const withId = (rows: AddressRow[], id: number): AddressRow[] => {
  for (const r of rows) r[2] = id;
  return rows;
};

/**
 * Inserts or replaces one message from its `headerRow`. Call inside a transaction. `cached` is the
 * message's row when the caller already looked it up (`cachedRows`, null when it is not cached);
 * without it the row is looked up here. With `ftsLater`, the message's FTS write is pushed there
 * for the caller to run after the batch's other writes (see `runFtsWrites`). The one function that
 * writes a fetched message, on the daemon's connection or the header writer's (./writer.ts).
 */
export function writeHeaderRow(
  db: CacheDb,
  row: HeaderRow,
  cached?: CachedRow | null,
  ftsLater?: FtsWrite[],
): number {
  const existing =
    cached !== undefined
      ? cached
      : (stmt(db, "SELECT id, body_state FROM messages WHERE folder_id = ? AND uid = ?").get(
          row.folderId,
          row.uid,
        ) as CachedRow | undefined);
  const narrow = row.narrow.slice();
  const { meta, subject, people } = row;
  const fields = { subject, from: people[0], to: people[1], cc: people[2], bcc: people[3] };
  if (!existing) {
    const slot = newMessageSlot(db, narrow[DATE_COL] as number);
    narrow[DATE_COL] = slot.internalDate;
    const id = slot.id;
    stmt(db, INSERT_NARROW).run(...narrow, id);
    stmt(db, INSERT_META).run(...meta, id);
    const fts = () => insertFts(db, id, { ...fields, body: "" });
    const subjectFts = () => insertSubject(db, id, subject);
    const addresses = { db, rows: withId(row.addresses, id) };
    if (ftsLater) ftsLater.push({ id, write: fts, subject: subjectFts, addresses });
    else {
      indexAddresses(db, addresses.rows);
      fts();
      subjectFts();
    }
    return id;
  }
  const id = existing.id;
  narrow.splice(DATE_COL, 1);
  stmt(db, UPDATE_NARROW).run(...narrow, id);
  // (the subject as the subjects' index holds it, before the row is written again: its kept word
  // counts take it out, ./subject-counts.ts)
  const previous =
    (stmt(db, "SELECT subject FROM message_meta WHERE id = ?").pluck().get(id) as string | undefined) ?? "";
  stmt(db, PUT_META).run(...meta, id);
  const body = existing.body_state === 1 ? (readBody(db, id) ?? "") : "";
  // (a message's headers do not change under its UID, but the row is written again as it is now)
  const subjectFts = () => insertSubject(db, id, subject, previous);
  const addresses = { db, rows: withId(row.addresses, id) };
  if (ftsLater)
    ftsLater.push({ id, write: () => indexMessage(db, id, body), subject: subjectFts, addresses });
  else {
    indexAddresses(db, addresses.rows);
    indexMessage(db, id, body);
    subjectFts();
  }
  if (existing.body_state === 2) stmt(db, "UPDATE messages SET body_state = 0 WHERE id = ?").run(id);
  return id;
}

/** Inserts or replaces one fetched message (headers, flags, structure): `writeHeaderRow(headerRow(...))`. */
export function upsertMessage(
  db: CacheDb,
  folder: FolderRow,
  msg: SyncedMessage,
  cached?: CachedRow | null,
  ftsLater?: FtsWrite[],
): number {
  return writeHeaderRow(db, headerRow(folder, msg), cached, ftsLater);
}

/**
 * A header batch's write, in three steps inside one transaction: `begin` with the rows the
 * transaction writes (their cached rows looked up in one statement, by the UID range), `write`
 * for each, `end` (the FTS and address rows, `runFtsWrites`). The sync's slices on the daemon's
 * thread and the header writer's transactions (./writer-worker.ts) both write through it, so
 * anything a batch writes happens on whichever connection writes.
 */
export function headerBatch(db: CacheDb, folderId: number) {
  let cached = new Map<number, CachedRow>();
  const fts: FtsWrite[] = [];
  return {
    begin(rows: readonly { uid: number }[], from = 0, to = rows.length): void {
      // (a transaction tried again, after one that failed before its end: ./busy.ts)
      fts.length = 0;
      let lo = Number.POSITIVE_INFINITY;
      let hi = 0;
      for (let k = from; k < to; k++) {
        const uid = (rows[k] as { uid: number }).uid;
        if (uid < lo) lo = uid;
        if (uid > hi) hi = uid;
      }
      cached = cachedRows(db, folderId, lo, hi);
    },
    write(row: HeaderRow): number {
      return writeHeaderRow(db, row, cached.get(row.uid) ?? null, fts);
    },
    end(): void {
      runFtsWrites(fts);
    },
  };
}

/** A cached message's flags, keywords and labels as one comparable string. */
const flagState = (r: {
  seen: number;
  flagged: number;
  answered: number;
  draft: number;
  deleted: number;
  keywords_norm: string;
  labels_norm: string;
}) => `${r.seen}${r.flagged}${r.answered}${r.draft}${r.deleted}|${r.keywords_norm}|${r.labels_norm}`;

/**
 * Updates flags (and labels when given) of a cached message. Returns the states before and after
 * when they differ, and false when nothing changed or the message is not cached: a FETCH answers
 * for every message asked about, changed or not.
 */
export function updateFlags(
  db: CacheDb,
  folderId: number,
  uid: number,
  flagSet: Set<string> | undefined,
  labels: Set<string> | undefined,
  modseq: bigint | undefined,
): false | { before: string; after: string } {
  const f = splitFlags(flagSet);
  const lab = labels ? [...labels] : null;
  const row = stmt(
    db,
    "SELECT id, seen, flagged, answered, draft, deleted, keywords_norm, labels_norm FROM messages WHERE folder_id = ? AND uid = ?",
  ).get(folderId, uid) as ({ id: number } & Parameters<typeof flagState>[0]) | undefined;
  if (!row) return false;
  const next = {
    seen: f.seen,
    flagged: f.flagged,
    answered: f.answered,
    draft: f.draft,
    deleted: f.deleted,
    keywords_norm: listColumn(f.keywords),
    labels_norm: lab ? listColumn(lab) : row.labels_norm,
  };
  const before = flagState(row);
  const after = flagState(next);
  if (before !== after) {
    stmt(
      db,
      "UPDATE messages SET seen = ?, flagged = ?, answered = ?, draft = ?, deleted = ?, keywords_norm = ?, labels_norm = ? WHERE id = ?",
    ).run(
      next.seen,
      next.flagged,
      next.answered,
      next.draft,
      next.deleted,
      next.keywords_norm,
      next.labels_norm,
      row.id,
    );
  }
  stmt(
    db,
    "UPDATE message_meta SET keywords_json = ?, labels_json = coalesce(?, labels_json), modseq = coalesce(?, modseq) WHERE id = ?",
  ).run(
    JSON.stringify(f.keywords),
    lab ? JSON.stringify(lab) : null,
    modseq !== undefined ? String(modseq) : null,
    row.id,
  );
  return before === after ? false : { before, after };
}

/**
 * Removes messages by UID with their FTS rows and bodies. Call inside a transaction. `onRemoved`
 * hears each UID that was cached, before its row goes.
 */
export function removeUids(
  db: CacheDb,
  folderId: number,
  uids: number[],
  onRemoved?: (uid: number) => void,
): number {
  const find = stmt(db, "SELECT id FROM messages WHERE folder_id = ? AND uid = ?");
  const del = stmt(db, "DELETE FROM messages WHERE id = ?");
  let n = 0;
  for (const uid of uids) {
    const row = find.get(folderId, uid) as { id: number } | undefined;
    if (!row) continue;
    onRemoved?.(uid);
    ftsDelete(db, row.id);
    del.run(row.id);
    n++;
  }
  if (n > 0) foldSubjectChanges(db);
  return n;
}

/** Drops every cached message of a folder (UIDVALIDITY changed). Call inside a transaction. */
export function clearFolder(db: CacheDb, folderId: number): void {
  stmt(db, "DELETE FROM messages_fts WHERE rowid IN (SELECT id FROM messages WHERE folder_id = ?)").run(
    folderId,
  );
  stmt(db, "DELETE FROM messages WHERE folder_id = ?").run(folderId);
  foldSubjectChanges(db);
}

/** Forgets a folder the server no longer has: its messages, their FTS rows and bodies. */
export function dropFolder(db: CacheDb, folderId: number): void {
  db.transaction(() => {
    clearFolder(db, folderId);
    stmt(db, "DELETE FROM folders WHERE id = ?").run(folderId);
  }).immediate();
}
