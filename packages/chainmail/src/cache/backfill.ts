import type { ImapFlow } from "imapflow";
import {
  decodeTextPart,
  MAX_BODY_CHARS,
  type TextPartRef,
  bodyFromSource,
  textFromPartBytes,
} from "./body.js";
import { putBody } from "./body-store.js";
import { pastParserBounds } from "../imap/parser-bounds.js";
import { readLargeBody } from "./large-body.js";
// A FETCH's UIDs as ranges: imapflow compiles a command character by character, and 200 UIDs
// listed one by one took it about 9 ms of one turn of the event loop per FETCH (a search waited)
import { uidSet } from "../query/imap-run.js";
import { compactFts } from "./fts.js";
import { type CacheDb, stmt } from "./schema.js";
import { turnEvery, writeInSlices } from "./slices.js";
import { writeWhenFree } from "./busy.js";
import { getFolder, indexMessage, runFtsWrites } from "./store.js";

export interface BackfillOptions {
  /** Bytes this account may download per UTC day for bodies (default 200 MiB). */
  dailyBudgetBytes?: number;
  /** Most messages to fetch in this call (default 500). */
  limit?: number;
  /** Messages up to this size are fetched whole in one FETCH; larger ones fetch only their text part. */
  wholeMessageMaxBytes?: number;
  now?: () => number;
  /**
   * Merge the FTS index afterwards when it has many segments (default true). A caller that
   * calls again and again until the folder is done passes false and calls `compactFts` once at the
   * end: each merge rewrites the whole index, so merging after every call made a long backfill
   * quadratic (about 100 merges of a growing index at 100,000 messages).
   */
  compact?: boolean;
  /**
   * The cache's size bound (`max_size_bytes`). When given, the backfill settles under it: see
   * `bodyBudgetCut`. Absent: no bound (the benchmarks, the operator's tests).
   */
  maxSizeBytes?: number;
}

export interface BackfillResult {
  fetched: number;
  bytes: number;
  /** True when the daily budget stopped it before the folder's bodies were all in. */
  budgetExhausted: boolean;
  /** True when the cache's size bound stopped it: the older bodies stay on the server. */
  sizeBudgetReached: boolean;
  remaining: number;
}

export const DEFAULT_DAILY_BUDGET = 200 * 1024 * 1024;

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function downloadedToday(db: CacheDb, account: string, now = Date.now()): number {
  const r = stmt(db, "SELECT bytes FROM downloads WHERE account = ? AND day = ?").get(account, utcDay(now)) as
    | { bytes: number }
    | undefined;
  return r?.bytes ?? 0;
}

function countDownload(db: CacheDb, account: string, bytes: number, now: number): void {
  stmt(
    db,
    "INSERT INTO downloads (account, day, bytes) VALUES (?, ?, ?) ON CONFLICT (account, day) DO UPDATE SET bytes = bytes + excluded.bytes",
  ).run(account, utcDay(now), bytes);
}

/** A body to store: its text (null: it could not be read) and whether that was made from HTML. */
/** `partial`: the text of one part where the message reads as more (get_message asks the server). */
type FetchedBody = { id: number; text: string | null; fromHtml?: boolean; partial?: boolean };

/**
 * Counts the download, then stores and indexes bodies (text null: could not be read) in
 * transactions of a few milliseconds each (`writeInSlices`), so searches are answered in between:
 * many bodies per commit, since every commit adds an FTS5 segment and a segment per body made the
 * backfill mostly index merging, but not a whole FETCH batch, which held searches up for 100 ms.
 */
async function storeBodies(
  db: CacheDb,
  bodies: FetchedBody[],
  now: number,
  download?: { account: string; bytes: number },
): Promise<void> {
  // (each write of this thread waits for its turn and the write lock on timers: ./busy.ts)
  if (download && download.bytes > 0)
    await writeWhenFree(db, () => countDownload(db, download.account, download.bytes, now));
  const fts: { id: number; text: string }[] = [];
  await writeInSlices(db, bodies, {
    // (a transaction tried again, after one that failed before its end)
    begin: () => {
      fts.length = 0;
    },
    // A body's writes cost about as much as indexing a thousand characters, then its length
    weight: ({ text }) => 1000 + (text?.length ?? 0),
    // (the merging a backfill calls for was a third of this thread's time: ./fts.ts ftsUpkeep)
    offThreadMerges: true,
    write: ({ id, text, fromHtml, partial }) => {
      if (text === null) {
        stmt(db, "UPDATE messages SET body_state = 3 WHERE id = ?").run(id);
        return;
      }
      putBody(db, id, text, now, fromHtml ?? false, partial ?? false);
      stmt(db, "UPDATE messages SET body_state = 1 WHERE id = ?").run(id);
      fts.push({ id, text });
    },
    // The FTS writes last in each transaction (see runFtsWrites in store.ts)
    end: () => {
      runFtsWrites(fts.map(({ id, text }) => ({ id, write: () => indexMessage(db, id, text) })));
      fts.length = 0;
    },
  });
}

/**
 * Fetches missing bodies of one folder, newest first, within the account's daily download budget.
 * Bodies are stored and indexed one FETCH batch (at most 200) per transaction; a dropped connection
 * loses the unfinished batch, which the next call fetches again. When it indexed anything it may
 * merge the FTS index (`compactFts`). Run it after syncFolder.
 */
export async function backfillBodies(
  db: CacheDb,
  client: ImapFlow,
  account: string,
  path: string,
  options: BackfillOptions = {},
): Promise<BackfillResult> {
  const now = options.now ?? Date.now;
  const budget = options.dailyBudgetBytes ?? DEFAULT_DAILY_BUDGET;
  const wholeMax = options.wholeMessageMaxBytes ?? 256 * 1024;
  const folder = getFolder(db, account, path);
  if (!folder)
    return { fetched: 0, bytes: 0, budgetExhausted: false, sizeBudgetReached: false, remaining: 0 };
  // Newest first by id alone, which is arrival order (./arrival-id.ts): the rows come in index order
  // (messages_body, then the id) and the look-up stops at the limit. By (internal_date, id) SQLite
  // read and sorted every message still without a body, with its message_meta row, each call: a
  // turn of the event loop of 100 ms and more at 10,000 messages, growing with the mailbox.
  const all = stmt(
    db,
    "SELECT m.id, m.uid, m.size, m.internal_date, mm.text_part FROM messages m LEFT JOIN message_meta mm ON mm.id = m.id WHERE m.folder_id = ? AND m.body_state = 0 ORDER BY m.id DESC LIMIT ?",
  ).all(folder.id, options.limit ?? 500) as Pending[];
  const result: BackfillResult = {
    fetched: 0,
    bytes: 0,
    budgetExhausted: false,
    sizeBudgetReached: false,
    remaining: 0,
  };
  const cut =
    options.maxSizeBytes === undefined ? all.length : bodyBudgetCut(db, folder.id, all, options.maxSizeBytes);
  const pending = all.slice(0, cut);
  if (cut < all.length) {
    result.sizeBudgetReached = true;
    await writeWhenFree(db, () =>
      stmt(db, "UPDATE folders SET body_cut = 1 WHERE id = ? AND body_cut = 0").run(folder.id),
    );
  }
  if (pending.length) {
    const lock = await client.getMailboxLock(path, { readOnly: true });
    try {
      if (String(client.mailbox ? client.mailbox.uidValidity : "") !== folder.uidvalidity)
        throw new Error(`UIDVALIDITY of ${path} changed; sync the folder first`);
      const left = () => budget - downloadedToday(db, account, now());
      // Bodies of multipart and HTML-only mail: only their text part, grouped by part number (a
      // FETCH asks for the same part of every message in it); what that cannot answer goes below
      const rest = await fetchTextParts(db, client, account, pending, left, now, result);
      const turn = turnEvery(client);
      const small = rest.filter((p) => p.size <= wholeMax);
      const large = rest.filter((p) => p.size > wholeMax);
      // Messages read by their text part after a BODYSTRUCTURE look-up: the large ones, and small
      // ones the parser refused whole
      const byPart = [...large];
      // (those the parser refused whole are not downloaded whole again: ./large-body.ts)
      const refused = new Set<number>();
      // Whole small messages in FETCH batches that fit the remaining budget
      for (let i = 0; i < small.length; ) {
        const batch: typeof small = [];
        let sum = 0;
        const room = left();
        while (
          i < small.length &&
          batch.length < BATCH &&
          sum + (small[i] as { size: number }).size <= room
        ) {
          sum += (small[i] as { size: number }).size;
          batch.push(small[i] as (typeof small)[number]);
          i++;
        }
        if (batch.length === 0) {
          result.budgetExhausted = true;
          break;
        }
        const byUid = new Map(batch.map((b) => [b.uid, b]));
        const bodies: FetchedBody[] = [];
        let bytes = 0;
        for await (const msg of client.fetch(
          uidSet(batch.map((b) => b.uid)),
          { uid: true, source: true },
          { uid: true },
        )) {
          await turn();
          const row = byUid.get(msg.uid);
          if (!row || !msg.source) continue;
          bytes += msg.source.length;
          try {
            bodies.push({ id: row.id, ...(await bodyFromSource(msg.source)) });
          } catch (err) {
            // Past the parser's bounds (more than 1,000 MIME parts, a header over 1 MB): its text
            // part, with the large ones below (it was left without a body, and a text search from
            // the cache missed what the server's found)
            if (pastParserBounds(err)) {
              byPart.push(row);
              refused.add(row.id);
            } else bodies.push({ id: row.id, text: null });
          }
        }
        await storeBodies(db, bodies, now(), { account, bytes });
        result.bytes += bytes;
        result.fetched += bodies.filter((b) => b.text !== null).length;
      }
      // Large messages (and those above): only their text part, after a BODYSTRUCTURE look-up
      for (const row of byPart) {
        if (result.budgetExhausted) break;
        const structure = await client.fetchOne(
          String(row.uid),
          { uid: true, bodyStructure: true },
          { uid: true },
        );
        const budgetLeft = left();
        if (budgetLeft <= 0) {
          result.budgetExhausted = true;
          break;
        }
        // Its text part, its text parts joined, or itself whole: the body the whole read gives
        // (./large-body.ts), or its first text part marked partial
        const read = await readLargeBody(
          client,
          row.uid,
          row.size,
          structure ? structure.bodyStructure : undefined,
          budgetLeft,
          refused.has(row.id),
        );
        if (!read) {
          await writeWhenFree(db, () =>
            stmt(db, "UPDATE messages SET body_state = 3 WHERE id = ?").run(row.id),
          );
          continue;
        }
        result.bytes += read.bytes;
        await storeBodies(
          db,
          [{ id: row.id, text: read.text, fromHtml: read.fromHtml, partial: read.partial }],
          now(),
          { account, bytes: read.bytes },
        );
        result.fetched++;
      }
    } finally {
      lock.release();
    }
  }
  // From the folder's counters (messages, bodies stored or evicted, unreadable: the rest have none
  // yet), not by counting the index, which at a million messages held the event loop for tens of ms
  // after every call
  result.remaining = (
    stmt(db, "SELECT cached_count - with_body - unreadable AS n FROM folders WHERE id = ?").get(
      folder.id,
    ) as {
      n: number;
    }
  ).n;
  if (result.remaining > 0 && left0(db, account, budget, now()) <= 0) result.budgetExhausted = true;
  if (result.fetched > 0 && options.compact !== false) await compactFts(db, { offThread: true });
  return result;
}

interface Pending {
  id: number;
  uid: number;
  size: number;
  internal_date: number;
  text_part: string | null;
}

/**
 * What a body may add to cache.db at most, for the size bound: its stored text (at most its
 * message's size, cut at MAX_BODY_CHARS) and about as much again for its FTS rows.
 */
const bodyCost = (size: number) => 2 * Math.min(size, MAX_BODY_CHARS * 4);

/**
 * How many of `pending` (one folder's bodies to fetch, newest first) the backfill may fetch under
 * the cache's size bound, so that fetching and eviction (oldest body first) never chase each other:
 * - while the cache is within a tenth of its bound, a body older than a body of its folder already
 *   evicted is not fetched (eviction would drop it next, a few bodies a pass), nor, once the bound
 *   has stopped the folder's backfill before (folders.body_cut), one older than its oldest stored
 *   body: the merge of the index's segments after a pass frees pages, room a body's cost fits in
 *   by the estimate, and the next pass would fetch a few more, the pass after that a few more
 *   again; a raised bound resumes the backfill, and `cache rebuild` starts the account over;
 * - a body newer than the oldest stored body is fetched even when the cache is full, since eviction
 *   then drops an older one (new mail replaces the oldest);
 * - any other body is fetched only while its cost (`bodyCost`) still fits under the bound.
 * The first body refused ends the list: bodies reach back from the newest without a gap.
 */
function bodyBudgetCut(db: CacheDb, folderId: number, pending: Pending[], maxBytes: number): number {
  // Ids follow arrival (arrival-id.ts): comparing ids is comparing (internal_date, id), and both
  // look-ups are one index seek (messages_body is (folder_id, body_state, id); bodies by its key)
  const evicted = stmt(db, "SELECT max(id) AS id FROM messages WHERE folder_id = ? AND body_state = 2").get(
    folderId,
  ) as { id: number | null };
  const oldest = stmt(db, "SELECT min(message_rowid) AS id FROM bodies").get() as { id: number | null };
  const stopped =
    (stmt(db, "SELECT body_cut FROM folders WHERE id = ?").get(folderId) as { body_cut: number } | undefined)
      ?.body_cut === 1;
  let room = maxBytes - cacheSizeBytes(db);
  // Settled: eviction, or the bound itself, left the cache near its bound. A bound raised since
  // (room again) resumes.
  const settled = room < maxBytes / 10;
  for (let i = 0; i < pending.length; i++) {
    const p = pending[i] as Pending;
    if (settled && evicted.id !== null && p.id < evicted.id) return i;
    if (settled && stopped && oldest.id !== null && p.id < oldest.id) return i;
    if (oldest.id !== null && p.id > oldest.id) continue;
    room -= bodyCost(p.size);
    if (room < 0) return i;
  }
  return pending.length;
}

/** Most messages per FETCH of the backfill. */
const BATCH = 200;

/**
 * Fetches the text part alone (BINARY, so the server undoes the transfer encoding) of each pending
 * message whose body is not one text/plain part, stores the text and returns the messages it did
 * not answer: no part known (synced before the column existed, or one text/plain part), a server
 * without BINARY, or a part the server sent still encoded. Stops at the daily budget.
 */
async function fetchTextParts(
  db: CacheDb,
  client: ImapFlow,
  account: string,
  pending: Pending[],
  left: () => number,
  now: () => number,
  result: BackfillResult,
): Promise<Pending[]> {
  const binary = client.capabilities.has("BINARY") || client.capabilities.has("IMAP4REV2");
  const rest: Pending[] = [];
  const byPart = new Map<string, { row: Pending; ref: TextPartRef }[]>();
  for (const row of pending) {
    const ref = binary && row.text_part ? decodeTextPart(row.text_part) : null;
    if (!ref) {
      rest.push(row);
      continue;
    }
    const group = byPart.get(ref.part) ?? [];
    group.push({ row, ref });
    byPart.set(ref.part, group);
  }
  const maxBytes = MAX_BODY_CHARS * 4;
  const turn = turnEvery(client);
  for (const [part, group] of byPart) {
    for (let i = 0; i < group.length && !result.budgetExhausted; ) {
      // A part is at most its message's size and is cut at maxBytes: that bounds the download
      const batch: typeof group = [];
      let sum = 0;
      const room = left();
      while (i < group.length && batch.length < BATCH) {
        const g = group[i] as (typeof group)[number];
        const bound = Math.min(g.row.size, maxBytes);
        if (sum + bound > room) break;
        sum += bound;
        batch.push(g);
        i++;
      }
      if (batch.length === 0) {
        result.budgetExhausted = true;
        break;
      }
      const byUid = new Map(batch.map((b) => [b.row.uid, b]));
      const bodies: FetchedBody[] = [];
      let bytes = 0;
      for await (const msg of client.fetch(
        uidSet(batch.map((b) => b.row.uid)),
        { uid: true, bodyParts: [{ key: part, maxLength: maxBytes }] },
        { uid: true, binary: true },
      )) {
        await turn();
        const b = byUid.get(msg.uid);
        const data = msg.bodyParts?.get(part);
        if (!b || !data) continue;
        const decoded = msg.binaryParts?.has(part) || ["", "7bit", "8bit", "binary"].includes(b.ref.encoding);
        if (!decoded) continue;
        byUid.delete(msg.uid);
        bytes += data.length;
        bodies.push({ id: b.row.id, text: textFromPartBytes(data, b.ref), fromHtml: b.ref.html });
      }
      result.bytes += bytes;
      await storeBodies(db, bodies, now(), { account, bytes });
      result.fetched += bodies.length;
      for (const b of byUid.values()) rest.push(b.row);
    }
  }
  return rest;
}

/**
 * Whether the size bound keeps the backfill from a folder's next body (its newest one still to
 * fetch), as `bodyBudgetCut` decides: the folder has settled, and its older bodies stay on the server.
 */
export function sizeBoundStops(db: CacheDb, folderId: number, maxBytes: number): boolean {
  const next = stmt(
    db,
    "SELECT id, uid, size, internal_date, NULL AS text_part FROM messages WHERE folder_id = ? AND body_state = 0 ORDER BY id DESC LIMIT 1",
  ).get(folderId) as Pending | undefined;
  return next !== undefined && bodyBudgetCut(db, folderId, [next], maxBytes) === 0;
}

const left0 = (db: CacheDb, account: string, budget: number, now: number) =>
  budget - downloadedToday(db, account, now);

/** Bytes the cache occupies (used pages of the main file). */
export function cacheSizeBytes(db: CacheDb): number {
  const pages = db.pragma("page_count", { simple: true }) as number;
  const free = db.pragma("freelist_count", { simple: true }) as number;
  const size = db.pragma("page_size", { simple: true }) as number;
  return (pages - free) * size;
}

/**
 * Keeps the cache under `maxBytes` by dropping stored body text, oldest message first. The words
 * stay in the FTS index (body_state 2), so search still finds them; only snippets and cached
 * reading of those bodies go. Each transaction (up to 200 bodies) when the write lock is free
 * (./busy.ts). Returns the number of bodies evicted.
 */
export async function evictBodies(db: CacheDb, maxBytes: number): Promise<number> {
  let evicted = 0;
  for (;;) {
    const step = await writeWhenFree(db, () =>
      db
        .transaction(() => {
          // (read in the transaction: what an attempt that waited finds is what it drops)
          const over = cacheSizeBytes(db) - maxBytes;
          if (over <= 0) return 0;
          const victims = stmt(
            db,
            "SELECT b.message_rowid AS id, b.bytes FROM bodies b JOIN messages m ON m.id = b.message_rowid ORDER BY m.internal_date ASC, m.id ASC LIMIT 200",
          ).all() as { id: number; bytes: number }[];
          let n = 0;
          let freed = 0;
          for (const v of victims) {
            stmt(db, "DELETE FROM bodies WHERE message_rowid = ?").run(v.id);
            stmt(db, "UPDATE messages SET body_state = 2 WHERE id = ?").run(v.id);
            n++;
            freed += v.bytes;
            if (freed >= over) break;
          }
          return n;
        })
        .immediate(),
    );
    if (step === 0) return evicted;
    evicted += step;
  }
}

export interface EvictChoice {
  /** Only these accounts' bodies (all accounts when absent or empty). */
  accounts?: string[];
  /** Only messages that arrived before this time (ms since the epoch). */
  beforeMs?: number;
  /** Stop once this many bytes of body text are dropped (every matching body when absent). */
  bytes?: number;
}

/** What `cache evict` has dropped so far (`evictStep` adds each committed transaction's share). */
export interface Evicted {
  bodies: number;
  bytes: number;
}

/**
 * The operator's `cache evict`: drops stored body text, oldest message first, the way evictBodies
 * does for the size bound (headers stay; the words stay in the FTS index, body_state 2, so text search
 * still finds the message and cached reading fetches the body from the server). Returns what went.
 */
export function evictOldestBodies(db: CacheDb, choice: EvictChoice): Evicted {
  const done: Evicted = { bodies: 0, bytes: 0 };
  while (evictStep(db, choice, done));
  return done;
}

/**
 * One transaction of `cache evict` (up to 200 bodies), added to `done` once committed: a step that
 * fails (a busy write lock: ./busy.ts) leaves `done` as it was, so the caller can run it again.
 * Whether more is left to drop.
 */
export function evictStep(db: CacheDb, choice: EvictChoice, done: Evicted): boolean {
  const enough = (bytes: number) => choice.bytes !== undefined && bytes >= choice.bytes;
  if (enough(done.bytes)) return false;
  const where: string[] = [];
  const args: Array<string | number> = [];
  if (choice.accounts?.length) {
    where.push(`m.account IN (${choice.accounts.map(() => "?").join(", ")})`);
    args.push(...choice.accounts);
  }
  if (choice.beforeMs !== undefined) {
    where.push("m.internal_date < ?");
    args.push(choice.beforeMs);
  }
  const select = db.prepare(
    `SELECT b.message_rowid AS id, b.bytes FROM bodies b JOIN messages m ON m.id = b.message_rowid${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY m.internal_date ASC, m.id ASC LIMIT 200`,
  );
  const step = db
    .transaction(() => {
      let bodies = 0;
      let bytes = 0;
      for (const v of select.all(...args) as { id: number; bytes: number }[]) {
        if (enough(done.bytes + bytes)) break;
        stmt(db, "DELETE FROM bodies WHERE message_rowid = ?").run(v.id);
        stmt(db, "UPDATE messages SET body_state = 2 WHERE id = ?").run(v.id);
        bodies++;
        bytes += v.bytes;
      }
      return { bodies, bytes };
    })
    .immediate();
  done.bodies += step.bodies;
  done.bytes += step.bytes;
  return step.bodies > 0 && !enough(done.bytes);
}

/**
 * The operator's `cache rebuild`: forgets everything cached of an account (folders with their sync
 * state, headers, bodies, FTS rows), so the account is "never synced" and every search of it goes to
 * the server until a pass has synced it again. Returns how much was dropped.
 */
export function dropAccount(
  db: CacheDb,
  account: string,
): { folders: number; messages: number; bodies: number } {
  const count = (sql: string) => (stmt(db, sql).get(account) as { n: number }).n;
  const dropped = {
    folders: count("SELECT count(*) AS n FROM folders WHERE account = ?"),
    messages: count("SELECT count(*) AS n FROM messages WHERE account = ?"),
    bodies: count(
      "SELECT count(*) AS n FROM bodies b JOIN messages m ON m.id = b.message_rowid WHERE m.account = ?",
    ),
  };
  db.transaction(() => {
    stmt(db, "DELETE FROM messages_fts WHERE rowid IN (SELECT id FROM messages WHERE account = ?)").run(
      account,
    );
    stmt(db, "DELETE FROM messages WHERE account = ?").run(account);
    stmt(db, "DELETE FROM folders WHERE account = ?").run(account);
  }).immediate();
  return dropped;
}
