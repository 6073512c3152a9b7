import type { ExpungeEvent, FetchMessageObject, FetchQueryObject, ImapFlow } from "imapflow";
import { errorText } from "../errors.js";
import { displayName } from "../imap/folders.js";
import { RawFetch, type SyncedMessage, headerItems } from "../imap/raw-fetch.js";
import { type FolderRole, roleFromSpecialUse } from "../query/index.js";
import { uidSet as compactUids } from "../query/imap-run.js";
import { compactFts } from "./fts.js";
import { type CacheDb, stmt } from "./schema.js";
import { turnEvery, writeInSlices } from "./slices.js";
import {
  type FolderRow,
  type HeaderRow,
  clearFolder,
  dropFolder,
  ensureFolder,
  getFolder,
  headerBatch,
  headerRow,
  removeUids,
  updateFlags,
} from "./store.js";
import { headerWriter, WRITER_MIN_MESSAGES } from "./writer.js";
import { isBusy, writeWhenFree } from "./busy.js";

export interface SyncOptions {
  /** Messages per FETCH and per transaction (default 1000). */
  batchSize?: number;
  /** The folder's role when the caller knows it from LIST; looked up with LIST otherwise. */
  role?: FolderRole | null;
  /** Called after each committed batch, e.g. to report progress. */
  onBatch?: (done: number, total: number) => void;
  now?: () => number;
  /** Told what the sync reveals, inside the cache transaction that stores it, before it commits. */
  events?: SyncEvents;
  /**
   * How new messages' headers are fetched: `auto` (the default) reads a FETCH of at least
   * RAW_FETCH_MIN messages with the lean parser (src/imap/raw-fetch.ts) and fewer through
   * imapflow; `raw` and `imapflow` force one path (the differential test compares them).
   */
  headerFetch?: "auto" | "raw" | "imapflow";
}

/** Fewest new messages for which the header FETCH takes the lean path (below it imapflow's costs little). */
export const RAW_FETCH_MIN = 100;

/** The folder a sync event is about. */
export interface SyncFolder {
  account: string;
  path: string;
  /** The folder's name with / between levels, as search rows give it. */
  name: string;
  uidValidity: string;
}

/**
 * What a sync finds, for the event log. `added` is called only for mail that arrived since the
 * folder's last completed sync: the first sync of a folder and a new UIDVALIDITY are a `gap`.
 */
export interface SyncEvents {
  gap(folder: SyncFolder, reason: "first_sync" | "uidvalidity", uidNext: number): void;
  added(folder: SyncFolder, msg: SyncedMessage): void;
  flags(folder: SyncFolder, msg: FetchMessageObject, change: { before: string; after: string }): void;
  expunged(folder: SyncFolder, uid: number): void;
}

export interface SyncResult {
  account: string;
  folder: string;
  added: number;
  updated: number;
  removed: number;
  uidvalidityChanged: boolean;
  /** UIDs the server reported as VANISHED (QRESYNC); 0 when the UID diff found the expunges. */
  vanished: number;
  /** How changes since the last sync were found. */
  mode: "initial" | "qresync" | "condstore" | "full";
}

const HEADER_QUERY = (gmail: boolean): FetchQueryObject => ({
  uid: true,
  flags: true,
  envelope: true,
  size: true,
  bodyStructure: true,
  internalDate: true,
  headers: ["references"],
  ...(gmail ? { labels: true, threadId: true } : {}),
});

async function fetchHeaders<T>(
  client: ImapFlow,
  uids: number[],
  gmail: boolean,
  raw: RawFetch | null,
  map: (m: SyncedMessage) => T,
): Promise<T[]> {
  if (raw) return raw.fetch(compactUids(uids), headerItems(client, gmail), map);
  const out: T[] = [];
  const turn = turnEvery(client);
  for await (const m of client.fetch(compactUids(uids), HEADER_QUERY(gmail), { uid: true })) {
    out.push(map(m));
    await turn();
  }
  return out;
}

/**
 * Fetches the headers of `uids` in batches, in the given order, and writes each batch in
 * transactions of a few milliseconds (`writeInSlices`), so searches are answered in between. The
 * next batch is requested before the current one is written, so the server reads and sends it
 * while SQLite writes (on a local Dovecot each side otherwise idled a third of the time). Returns
 * the number of messages written.
 */
async function storeHeaders(
  db: CacheDb,
  client: ImapFlow,
  folder: FolderRow,
  uids: number[],
  batchSize: number,
  gmail: boolean,
  mode: SyncOptions["headerFetch"],
  onBatch?: (done: number, total: number) => void,
  onStored?: (msg: SyncedMessage) => void,
): Promise<number> {
  const useRaw = mode === "raw" || (mode !== "imapflow" && uids.length >= RAW_FETCH_MIN);
  const raw = useRaw ? RawFetch.open(client, turnEvery(client)) : null;
  if (mode === "raw" && !raw) throw new Error("the IMAP connection cannot be read by the lean FETCH parser");
  try {
    return await storeBatches(db, client, folder, uids, batchSize, gmail, raw, onBatch, onStored);
  } finally {
    raw?.close();
  }
}

/** A fetched batch: the rows for the header writer's thread, or the messages to write here. */
type Fetched = { rows: HeaderRow[] } | { messages: SyncedMessage[] };

async function storeBatches(
  db: CacheDb,
  client: ImapFlow,
  folder: FolderRow,
  uids: number[],
  batchSize: number,
  gmail: boolean,
  raw: RawFetch | null,
  onBatch?: (done: number, total: number) => void,
  onStored?: (msg: SyncedMessage) => void,
): Promise<number> {
  // Batches no event hears of (a first sync, a new UIDVALIDITY, the messages an earlier sync left
  // out) go to the header writer's thread, in one transaction each (./writer.ts); events are told
  // inside the transaction that stores the message, so those batches are written here; so are a
  // few messages in one batch (WRITER_MIN_MESSAGES)
  const few = uids.length < WRITER_MIN_MESSAGES && uids.length <= batchSize;
  const writer = onStored || few || !uids.length ? null : headerWriter(db);
  let written = 0;
  let writing: Promise<void> | null = null;
  // A batch for the writer is kept as the rows it will write, made as each message is read (the
  // messages themselves die young then: RawFetch.fetch); one written here stays the messages
  const fetchBatch = (slice: number[]): Promise<Fetched> =>
    writer
      ? fetchHeaders(client, slice, gmail, raw, (m) => headerRow(folder, m)).then((rows) => ({ rows }))
      : fetchHeaders(client, slice, gmail, raw, (m) => m).then((messages) => ({ messages }));
  let next = uids.length ? fetchBatch(uids.slice(0, batchSize)) : null;
  try {
    for (let i = 0; next; i += batchSize) {
      const fetched = await next;
      // A connection closed meanwhile (a progress callback giving up, a drop) ends the sync here,
      // also when the pipelined FETCH had already been answered in full
      if (!client.usable) throw new Error("the IMAP connection closed during the sync");
      next = i + batchSize < uids.length ? fetchBatch(uids.slice(i + batchSize, i + 2 * batchSize)) : null;
      // A failure of the next FETCH surfaces when it is awaited; until then it must not count as
      // unhandled. One turn of the event loop lets imapflow send the command before SQLite blocks.
      next?.catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
      // (the count, not the batch: the closure lives until the batch commits, and the rows are
      // garbage once the header writer has them)
      const count = "rows" in fetched ? fetched.rows.length : fetched.messages.length;
      const done = () => {
        written += count;
        onBatch?.(Math.min(i + batchSize, uids.length), uids.length);
      };
      if (writer && "rows" in fetched) {
        // Handed over (but for its last piece) while the worker writes the previous batch, which
        // is then awaited (its error surfaces here); written only after that one's progress
        // callback ran and the connection is still there, as on this thread. The daemon's other
        // writers get their turn between two batches (./writer.ts)
        const batch = await writer.prepare(folder.id, fetched.rows);
        try {
          if (writing) await writing;
          if (!client.usable) throw new Error("the IMAP connection closed during the sync");
        } catch (err) {
          batch.cancel();
          throw err;
        }
        writing = batch.commit().then(done);
        writing.catch(() => undefined);
        continue;
      }
      if ("messages" in fetched) await writeHeadersHere(db, folder, fetched.messages, done, onStored);
    }
    if (writing) await writing;
  } finally {
    // A sync that fails returns once the writer's batch ended: nothing of it writes after
    if (writing) await writing.catch(() => undefined);
  }
  return written;
}

/** Writes a fetched batch on this thread, in transactions of a few milliseconds (`writeInSlices`). */
function writeHeadersHere(
  db: CacheDb,
  folder: FolderRow,
  fetched: SyncedMessage[],
  done: () => void,
  onStored?: (msg: SyncedMessage) => void,
): Promise<void> {
  const batch = headerBatch(db, folder.id);
  return writeInSlices(db, fetched, {
    // The slice's own UID range: the whole batch's would read the rows of every earlier slice
    // again (a fifth of an initial sync's CPU on a loaded machine, where slices are small)
    begin: (from, to) => batch.begin(fetched, from, to),
    write: (m) => {
      batch.write(headerRow(folder, m));
      onStored?.(m);
    },
    end: () => batch.end(),
    done,
  });
}

async function lookupRole(client: ImapFlow, path: string): Promise<FolderRole | null> {
  if (path.toUpperCase() === "INBOX") return "inbox";
  const list = await client.list();
  const entry = list.find((l) => l.path === path);
  return roleFromSpecialUse(entry?.specialUse, path);
}

/**
 * Brings one folder's cache up to date with the server.
 *
 * Consistency: every write happens in a transaction; new messages are committed a few
 * milliseconds' worth at a time, newest first, and the folder's UIDNEXT/HIGHESTMODSEQ and
 * `complete` are written only by the last transaction. A sync cut off at any point leaves
 * committed messages (each whole, with its FTS row) and the old state, so the next sync repeats
 * the unfinished range; writes are upserts, so repeats are harmless.
 */
export async function syncFolder(
  db: CacheDb,
  client: ImapFlow,
  account: string,
  path: string,
  options: SyncOptions = {},
): Promise<SyncResult> {
  const batchSize = options.batchSize ?? 1000;
  const now = options.now ?? Date.now;
  const gmail = client.capabilities.has("X-GM-EXT-1");
  const role = options.role !== undefined ? options.role : await lookupRole(client, path);
  // Every write of this thread waits for its turn with the header writer (another folder's first
  // sync may be writing on its thread: ./writer.ts) and for the write lock, on timers (./busy.ts)
  let folder = await writeWhenFree(db, () => ensureFolder(db, account, path, role));
  const result: SyncResult = {
    account,
    folder: path,
    added: 0,
    updated: 0,
    removed: 0,
    uidvalidityChanged: false,
    vanished: 0,
    mode: "initial",
  };

  const qresync =
    client.enabled.has("QRESYNC") && folder.uidvalidity !== null && folder.highestmodseq !== null;
  const qresyncOpts = qresync
    ? {
        uidValidity: BigInt(folder.uidvalidity as string),
        changedSince: BigInt(folder.highestmodseq as string),
      }
    : {};
  // A mailbox that is already selected would not be selected again by the lock, and its
  // UIDVALIDITY/UIDNEXT/HIGHESTMODSEQ would be stale: select it anew inside the lock
  const wasOpen = client.mailbox !== false && client.mailbox.path === path;
  const vanished: number[] = [];
  const onExpunge = (ev: ExpungeEvent) => {
    if (ev.path === path && ev.vanished && ev.uid !== undefined) vanished.push(ev.uid);
  };
  client.on("expunge", onExpunge);
  const lock = await client.getMailboxLock(path, { readOnly: true, ...qresyncOpts });
  try {
    if (wasOpen) await client.mailboxOpen(path, { readOnly: true, ...qresyncOpts });
    const mailbox = client.mailbox;
    if (!mailbox) throw new Error(`mailbox ${path} is not open`);
    const uidValidity = String(mailbox.uidValidity);
    const info: SyncFolder = { account, path, name: displayName(path, mailbox.delimiter), uidValidity };
    const events = options.events;
    // Mail found now arrived since the last sync only when that sync completed on this UIDVALIDITY.
    const incremental = folder.uidvalidity === uidValidity && folder.uidnext !== null;

    if (folder.uidvalidity !== null && folder.uidvalidity !== uidValidity) {
      result.uidvalidityChanged = true;
      await writeWhenFree(db, () =>
        db
          .transaction(() => {
            events?.gap(info, "uidvalidity", Number(mailbox.uidNext));
            clearFolder(db, folder.id);
            stmt(
              db,
              "UPDATE folders SET uidvalidity = ?, uidnext = NULL, highestmodseq = NULL, complete = 0 WHERE id = ?",
            ).run(uidValidity, folder.id);
          })
          .immediate(),
      );
      vanished.length = 0;
    } else if (folder.uidvalidity === null) {
      await writeWhenFree(db, () =>
        db
          .transaction(() => {
            events?.gap(info, "first_sync", Number(mailbox.uidNext));
            stmt(db, "UPDATE folders SET uidvalidity = ?, complete = 0 WHERE id = ?").run(
              uidValidity,
              folder.id,
            );
          })
          .immediate(),
      );
    }
    folder = getFolder(db, account, path) as FolderRow;

    const knownNext = folder.uidnext ?? 1;
    const serverModseq = mailbox.highestModseq;
    const condstore = serverModseq !== undefined && !mailbox.noModseq && folder.highestmodseq !== null;

    // 1. Changes to messages we already have
    if (folder.uidnext !== null && knownNext > 1) {
      result.mode = qresync ? "qresync" : condstore ? "condstore" : "full";
      if (!condstore || BigInt(folder.highestmodseq as string) !== serverModseq) {
        const changed: FetchMessageObject[] = [];
        const q: FetchQueryObject = { uid: true, flags: true, ...(gmail ? { labels: true } : {}) };
        const opts = condstore
          ? { uid: true, changedSince: BigInt(folder.highestmodseq as string) }
          : { uid: true };
        for await (const m of client.fetch(`1:${knownNext - 1}`, q, opts)) changed.push(m);
        result.updated += await writeWhenFree(db, () =>
          db
            .transaction(() => {
              let updated = 0;
              for (const m of changed) {
                const change = updateFlags(db, folder.id, m.uid, m.flags, m.labels, m.modseq);
                if (!change) continue;
                updated++;
                events?.flags(info, m, change);
              }
              return updated;
            })
            .immediate(),
        );
      }
    }

    // 2. New messages, newest batch first
    const newUids =
      mailbox.exists === 0
        ? []
        : ((await client.search({ uid: `${knownNext}:*` }, { uid: true })) || []).filter(
            (u) => u >= knownNext,
          );
    newUids.sort((a, b) => b - a);
    if (newUids.length)
      await writeWhenFree(db, () => stmt(db, "UPDATE folders SET complete = 0 WHERE id = ?").run(folder.id));
    result.added += await storeHeaders(
      db,
      client,
      folder,
      newUids,
      batchSize,
      gmail,
      options.headerFetch,
      options.onBatch,
      incremental && events ? (m) => events.added(info, m) : undefined,
    );
    const onRemoved = events ? (uid: number) => events.expunged(info, uid) : undefined;

    // 3. Expunged messages: VANISHED (QRESYNC) or, when counts disagree, a UID diff
    const cachedCount = () =>
      (stmt(db, "SELECT cached_count AS n FROM folders WHERE id = ?").get(folder.id) as { n: number }).n;
    result.vanished = vanished.length;
    const remove = (uids: number[]) =>
      writeWhenFree(db, () => db.transaction(() => removeUids(db, folder.id, uids, onRemoved)).immediate());
    if (vanished.length) result.removed += await remove(vanished);
    if (cachedCount() !== mailbox.exists) {
      const onServer = new Set(
        mailbox.exists === 0 ? [] : (await client.search({ all: true }, { uid: true })) || [],
      );
      const cached = (
        stmt(db, "SELECT uid FROM messages WHERE folder_id = ?").all(folder.id) as { uid: number }[]
      ).map((r) => r.uid);
      const gone = cached.filter((u) => !onServer.has(u));
      result.removed += await remove(gone);
      // Messages the server has below our UIDNEXT that we lack (an earlier cut-off sync): fetch them
      const have = new Set(cached);
      const missing = [...onServer].filter((u) => !have.has(u) && u < knownNext);
      result.added += await storeHeaders(db, client, folder, missing, batchSize, gmail, options.headerFetch);
    }

    // 4. Commit the new state last (after the header writer acknowledged the last batch:
    // storeHeaders returns only then)
    await writeWhenFree(db, () =>
      db
        .transaction(() =>
          stmt(
            db,
            "UPDATE folders SET uidnext = ?, highestmodseq = ?, server_count = ?, last_sync = ?, complete = ?, last_error = NULL WHERE id = ?",
          ).run(
            mailbox.uidNext,
            serverModseq !== undefined && !mailbox.noModseq ? String(serverModseq) : null,
            mailbox.exists,
            now(),
            // (counted in the transaction that writes it: after a wait, the rows are what they are then)
            cachedCount() === mailbox.exists ? 1 : 0,
            folder.id,
          ),
        )
        .immediate(),
    );
  } catch (err) {
    try {
      const note = () =>
        stmt(db, "UPDATE folders SET last_error = ? WHERE id = ?").run(
          errorText(err).slice(0, 500),
          folder.id,
        );
      // (once only when the lock itself failed the sync: it was taken for the whole wait already)
      await writeWhenFree(db, note, isBusy(err) ? 0 : undefined);
    } catch {
      // the database itself failed, or is still busy; the original error matters more
    }
    throw err;
  } finally {
    client.off("expunge", onExpunge);
    lock.release();
  }
  if (result.added > 0 || result.removed > 0) await compactFts(db, { offThread: true });
  return result;
}

/**
 * Syncs every selectable folder of an account (LIST), returning one result per folder, and drops
 * cached folders the server no longer lists (deleted or renamed there).
 */
export async function syncAccount(
  db: CacheDb,
  client: ImapFlow,
  account: string,
  options: SyncOptions = {},
): Promise<SyncResult[]> {
  const out: SyncResult[] = [];
  const listed = cachedFolders(
    client,
    (await client.list()).filter((f) => !f.flags.has("\\Noselect") && !f.flags.has("\\NonExistent")),
  );
  const paths = new Set(listed.map((f) => f.path));
  for (const cached of stmt(db, "SELECT id, path FROM folders WHERE account = ?").all(account) as {
    id: number;
    path: string;
  }[]) {
    if (!paths.has(cached.path)) await writeWhenFree(db, () => dropFolder(db, cached.id));
  }
  for (const f of listed) {
    out.push(
      await syncFolder(db, client, account, f.path, {
        ...options,
        role: roleFromSpecialUse(f.specialUse, f.path),
      }),
    );
  }
  return out;
}

/**
 * The folders an account's cache holds. On Gmail (X-GM-EXT-1 with an All Mail folder) every message is
 * in All Mail and INBOX and the label folders are views of it, so the cache holds All Mail, with each
 * message's labels, plus Trash and Spam, which All Mail leaves out: one copy of each message instead of
 * one per label. `in:inbox` and `label:` are then answered from the labels.
 */
export function cachedFolders<F extends { path: string; specialUse?: string }>(
  client: ImapFlow,
  folders: F[],
): F[] {
  if (!client.capabilities.has("X-GM-EXT-1")) return folders;
  const role = (f: F) => roleFromSpecialUse(f.specialUse, f.path);
  if (!folders.some((f) => role(f) === "all")) return folders;
  return folders.filter((f) => ["all", "trash", "junk"].includes(role(f) ?? ""));
}
