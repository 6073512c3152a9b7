import type { ImapFlow, SearchObject } from "imapflow";
import { searchCompiler } from "imapflow/lib/search-compiler.js";
import { detailOf, MailError } from "../errors.js";
import { takeRefusal } from "../imap/connection.js";
import { refusalOf } from "../imap/refusal.js";
import type { KnownArrivals } from "../cache/arrivals.js";
import type { LeafNode, QueryNode } from "./ast.js";
import { type FolderInfo, evaluate, inMatchesFolder } from "./analyze.js";
import { compileToImap, imapUnsupported, leafSearch } from "./imap.js";
import { attachmentsFromStructure } from "./structure.js";

/** UIDs as an IMAP sequence set with ranges ("1:5,9"), so long lists stay short on the wire. */
export function uidSet(uids: number[]): string {
  const sorted = [...new Set(uids)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    out.push(i === j ? `${sorted[i]}` : `${sorted[i]}:${sorted[j]}`);
    i = j + 1;
  }
  return out.join(",");
}

/** Splits UIDs into chunks whose sequence sets stay well under server line limits. */
function chunks(uids: number[], maxRanges = 1000): string[] {
  const ranges = uidSet(uids).split(",");
  const out: string[] = [];
  for (let i = 0; i < ranges.length; i += maxRanges) out.push(ranges.slice(i, i + maxRanges).join(","));
  return out;
}

/**
 * A command the server answered NO or BAD: the folder was not searched. Its text goes in `detail`
 * (outside text never reaches `message`). A dropped connection is not a refusal: the caller's pool
 * reports SERVER_UNAVAILABLE for that.
 */
export function searchRefused(
  client: ImapFlow,
  what: string,
  answer: { text?: string | undefined; code?: string | undefined } = takeRefusal(client),
): MailError {
  if (!client.usable)
    return new MailError("SERVER_UNAVAILABLE", `the connection to the IMAP server dropped during ${what}`);
  // The reason follows the server's response code as for every other refusal (imap/refusal.ts);
  // a refusal without one means this folder cannot be searched so: UNSUPPORTED.
  const { reason, hint } = refusalOf(answer.code, { reason: "UNSUPPORTED", hint: SEARCH_REFUSED_HINT });
  return new MailError(
    reason,
    `the IMAP server refused the ${what} of this folder${answer.text ? " (its reply is in detail)" : ""}`,
    hint,
    detailOf(answer.text && `server: ${answer.text}`),
  );
}

const SEARCH_REFUSED_HINT =
  'The folder was not searched. Rephrase or narrow the query, or use source "cache" if the cache holds the folder.';

async function uidSearch(client: ImapFlow, q: SearchObject): Promise<number[]> {
  // imapflow answers a refused SEARCH with false and a dropped connection with a throw: false is
  // never "nothing matched".
  const r = await client.search(q, { uid: true });
  if (!Array.isArray(r)) throw searchRefused(client, "SEARCH");
  return r;
}

/** One folder's matches: their exact number, and (unless only counted) their UIDs newest first. */
export interface FolderMatches {
  count: number;
  /** Newest first: by arrival (the server's SORT) where it offers SORT, else by UID descending. Empty when counted only. */
  uids: number[];
}

/** At most this many UID ranges go into one SORT command (Dovecot reads command lines of 64 KiB). */
const SORT_MAX_RANGES = 4000;

/**
 * Orders UIDs of the selected folder newest first by arrival, the order the cache answers in
 * (INTERNALDATE, cache/search.ts), with the server's SORT (RFC 5256). `SORT (ARRIVAL)` reversed, not
 * `SORT (REVERSE ARRIVAL)`: RFC 5256 breaks ties by sequence number ascending even under REVERSE, so
 * messages that arrived in the same second would come oldest first. Without SORT, or for a set too
 * scattered for one command line, by UID descending (UIDs grow with arrival in practice).
 */
export async function newestFirst(client: ImapFlow, uids: number[]): Promise<number[]> {
  const desc = [...uids].sort((a, b) => b - a);
  if (uids.length < 2 || !client.capabilities.has("SORT")) return desc;
  const set = uidSet(uids);
  if (set.split(",").length > SORT_MAX_RANGES) return desc;
  const sorted = await uidSortByArrival(client, [
    { type: "ATOM", value: "UID" },
    { type: "SEQUENCE", value: set },
  ]);
  // A message expunged between the SEARCH and the SORT is gone from both answers; one that arrived
  // between them is not in `uids` and is left out, so the two stay consistent.
  const wanted = new Set(uids);
  return sorted.filter((u) => wanted.has(u)).reverse();
}

/**
 * Sends `UID SORT (ARRIVAL) UTF-8 <criteria>` and collects the matching UIDs, oldest first. Where the
 * server offers ESORT (RFC 5267) it asks `RETURN (ALL)`: the answer is one sequence set in sort
 * order ("1:12000" rather than 12,000 numbers), which the server writes and imapflow's parser reads
 * in a fraction of the time: most of a plain SORT's cost at 12,000 matches was the list itself.
 */
async function uidSortByArrival(client: ImapFlow, criteria: unknown[]): Promise<number[]> {
  const out: number[] = [];
  let esearch: EsearchAttributes | undefined;
  const esort = client.capabilities.has("ESORT");
  // imapflow has no SORT command; `exec` is its (undocumented, untyped) way to send one and read the
  // untagged answers, the same path its own commands take.
  const exec = (client as unknown as { exec: RawExec }).exec.bind(client);
  try {
    const res = await exec(
      "UID SORT",
      [
        ...(esort ? [{ type: "ATOM", value: "RETURN" }, [{ type: "ATOM", value: "ALL" }]] : []),
        [{ type: "ATOM", value: "ARRIVAL" }],
        { type: "ATOM", value: "UTF-8" },
        ...criteria,
      ],
      {
        untagged: {
          SORT: async (untagged) => {
            const nums =
              untagged?.numbers ??
              (untagged?.attributes ?? []).map((a) => Number((a as { value?: unknown } | undefined)?.value));
            for (const n of nums) if (Number.isSafeInteger(n) && n > 0) out.push(n);
          },
          ESEARCH: async (untagged) => {
            esearch = untagged?.attributes ?? [];
          },
        },
      },
    );
    res.next();
    // Read after the command completed: a set it cannot read fails the search, not imapflow's parser.
    return esearch ? esortAll(esearch) : out;
  } catch (err) {
    const e = err as { responseStatus?: string; responseText?: string; serverResponseCode?: string };
    if (e?.responseStatus === "NO" || e?.responseStatus === "BAD")
      throw searchRefused(client, "SORT", { text: e.responseText, code: e.serverResponseCode });
    throw err;
  }
}

/**
 * The UIDs matching `criteria` in the selected folder by `UID SEARCH RETURN (ALL)` (ESEARCH, RFC
 * 4731: one sequence set rather than a number per match). Only where the server offers ESEARCH.
 */
async function uidSearchAll(client: ImapFlow, criteria: unknown[]): Promise<UidRanges> {
  let esearch: EsearchAttributes | undefined;
  const exec = (client as unknown as { exec: RawExec }).exec.bind(client);
  try {
    const res = await exec(
      "UID SEARCH",
      [{ type: "ATOM", value: "RETURN" }, [{ type: "ATOM", value: "ALL" }], ...criteria],
      {
        untagged: {
          ESEARCH: async (untagged) => {
            esearch = untagged?.attributes ?? [];
          },
        },
      },
    );
    res.next();
    return UidRanges.of(esearch ?? []);
  } catch (err) {
    const e = err as { responseStatus?: string; responseText?: string; serverResponseCode?: string };
    if (e?.responseStatus === "NO" || e?.responseStatus === "BAD")
      throw searchRefused(client, "SEARCH", { text: e.responseText, code: e.serverResponseCode });
    throw err;
  }
}

/**
 * The numbers of an ESORT answer's ALL (`* ESEARCH (TAG "x") UID ALL 3,1:2 COUNT 3`), in the order
 * the set lists them: in an ESORT answer the set is in sort order (RFC 5267 section 3.2), so a range
 * `a:b` counts from a towards b (downwards when a > b). No ALL (nothing matched): none.
 */
export function esortAll(attributes: EsearchAttributes): number[] {
  const out: number[] = [];
  for (const [from, to] of allParts(attributes)) {
    const step = to >= from ? 1 : -1;
    for (let n = from; ; n += step) {
      out.push(n);
      if (n === to) break;
    }
  }
  return out;
}

/** The parts of an ESEARCH/ESORT answer's ALL set as [first, last] pairs, in the order listed. */
function allParts(attributes: EsearchAttributes): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < attributes.length - 1; i++) {
    const a = attributes[i];
    if (Array.isArray(a) || String(a?.value).toUpperCase() !== "ALL") continue;
    const set = (attributes[i + 1] as { value?: unknown } | undefined)?.value;
    if (typeof set !== "string") return out;
    for (const part of set.split(",")) {
      const m = /^(\d+)(?::(\d+))?$/.exec(part);
      if (!m) throw new Error(`an ESORT answer with an unreadable set: ${JSON.stringify(part.slice(0, 40))}`);
      const from = Number(m[1]);
      out.push([from, m[2] === undefined ? from : Number(m[2])]);
    }
    return out;
  }
  return out;
}

/**
 * An ESEARCH answer's ALL set as ascending, non-overlapping UID ranges: how many UIDs it holds,
 * and whether it holds one (a binary search), without a number or a Set entry per match (12,000
 * matches are one range `1:12000`).
 */
export class UidRanges {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  readonly size: number = 0;
  constructor(parts: Array<[number, number]>) {
    const sorted = parts.map(([a, b]): [number, number] => (a <= b ? [a, b] : [b, a]));
    sorted.sort((x, y) => x[0] - y[0]);
    for (const [a, b] of sorted) {
      const last = this.ends.length - 1;
      if (last >= 0 && a <= (this.ends[last] as number) + 1) {
        this.ends[last] = Math.max(this.ends[last] as number, b);
        continue;
      }
      this.starts.push(a);
      this.ends.push(b);
    }
    let size = 0;
    for (let i = 0; i < this.starts.length; i++)
      size += (this.ends[i] as number) - (this.starts[i] as number) + 1;
    this.size = size;
  }
  static of(attributes: EsearchAttributes): UidRanges {
    return new UidRanges(allParts(attributes));
  }
  /** Every UID held, ascending. */
  *values(): Generator<number> {
    for (let i = 0; i < this.starts.length; i++)
      for (let uid = this.starts[i] as number; uid <= (this.ends[i] as number); uid++) yield uid;
  }
  has(uid: number): boolean {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (uid < (this.starts[mid] as number)) hi = mid - 1;
      else if (uid > (this.ends[mid] as number)) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

type EsearchAttributes = ReadonlyArray<{ type?: unknown; value?: unknown } | unknown[]>;

type RawExec = (
  command: string,
  attributes: unknown[],
  options: {
    untagged: Record<
      string,
      (
        u:
          | { numbers?: number[]; attributes?: Array<{ type?: unknown; value?: unknown } | unknown[]> }
          | undefined,
      ) => Promise<void>
    >;
  },
) => Promise<{ next: () => void }>;

/**
 * Answers a query in one folder over plain IMAP and returns the matching UIDs, ascending.
 * Exact plans are one UID SEARCH. Otherwise the widened SEARCH yields candidates, whose
 * BODYSTRUCTURE decides has:attachment/filename:, while every other term is decided by its own
 * UID SEARCH limited to the candidates; the tree is then evaluated per candidate.
 * Takes the folder's mailbox lock itself (read-only select).
 */
export async function imapSearchFolder(
  client: ImapFlow,
  ast: QueryNode,
  scope: { folder: FolderInfo; account?: string; now: Date },
): Promise<number[]> {
  return (await searchFolder(client, ast, scope, "uids")).uids;
}

/**
 * The server path's per-folder answer: the exact number of matches (ESEARCH `RETURN (COUNT)` when
 * only counted and the plan is one exact SEARCH on a server that offers ESEARCH, else the UID
 * list's length), and unless `countOnly`, every match's UID newest first (see newestFirst).
 */
export async function imapFolderMatches(
  client: ImapFlow,
  ast: QueryNode,
  scope: { folder: FolderInfo; account?: string; now: Date },
  options: {
    countOnly: boolean;
    /**
     * The arrival times the local cache holds for the folder's UIDs under a UIDVALIDITY (null when
     * it holds none under that one): a first search in the folder then orders the server's matches
     * by them instead of the server's SORT (see byKnownArrival).
     */
    arrivals?: ((uidValidity: string, refresh?: boolean) => Promise<KnownArrivals | null>) | undefined;
  },
): Promise<FolderMatches> {
  return searchFolder(client, ast, scope, options.countOnly ? "count" : "newest", options.arrivals);
}

async function searchFolder(
  client: ImapFlow,
  ast: QueryNode,
  scope: { folder: FolderInfo; account?: string; now: Date },
  want: "uids" | "count" | "newest",
  arrivals?: (uidValidity: string, refresh?: boolean) => Promise<KnownArrivals | null>,
): Promise<FolderMatches> {
  const plan = compileToImap(ast, scope.now, { folder: scope.folder, account: scope.account });
  if (!plan) return { count: 0, uids: [] };
  // Counting starts before the NOOP, so what the NOOP reports is counted.
  changesReported(client);
  const reused = client.mailbox
    ? client.mailbox.path === scope.folder.path && client.mailbox.readOnly
    : false;
  const lock = await client.getMailboxLock(scope.folder.path, { readOnly: true });
  try {
    // The lock does not select a mailbox that is already selected, and the server answers SEARCH
    // from its view of the mailbox as of the last sync point, so another client's appends, flag
    // changes and expunges since the previous call would be missed: NOOP lets the server catch up.
    if (reused) await client.noop();
    if (want === "count" && plan.exact && client.capabilities.has("ESEARCH")) {
      const r = await client.search(plan.search, { uid: true, returnOptions: ["COUNT"] });
      if (r === false || r === undefined) throw searchRefused(client, "SEARCH");
      if (!Array.isArray(r)) return { count: r.count ?? 0, uids: [] };
      return { count: r.length, uids: [] };
    }
    if (want === "newest" && plan.exact && client.capabilities.has("SORT")) {
      // One round trip: SORT takes the search criteria itself and answers the matches in order.
      const compiled: unknown[] = searchCompiler(client, plan.search);
      let criteria = compiled;
      // SORT names its charset in its own place; SEARCH's optional CHARSET prefix is not allowed there.
      if (String((criteria[0] as { value?: unknown } | undefined)?.value).toUpperCase() === "CHARSET")
        criteria = criteria.slice(2);
      if (criteria.length === 0 || JSON.stringify(criteria) === EVERY_KEY) criteria = EVERY_MESSAGE;
      const at: Omit<SortMemo, "key" | "uids"> = {
        path: scope.folder.path,
        uidValidity: String(client.mailbox ? client.mailbox.uidValidity : ""),
        exists: client.mailbox ? client.mailbox.exists : -1,
        ...changesReported(client),
      };
      const key = JSON.stringify(criteria);
      const memos = sortMemos.get(client);
      // Only this module's commands went to the server since the memos were taken (see sortMemos).
      const clean = reused && memos !== undefined && tagsSent(client) === memos.endTag + 1;
      const usable = (m: SortMemo | undefined) =>
        clean &&
        m !== undefined &&
        m.path === at.path &&
        m.uidValidity === at.uidValidity &&
        m.removed === at.removed &&
        m.exists >= 0
          ? m
          : undefined;
      const query = key === EVERY_KEY || timeDependent(plan.bound) ? undefined : usable(memos?.query);
      let folder = usable(memos?.folder);
      const done = (uids: number[], folderOrder?: SortMemo): FolderMatches => {
        sortMemos.set(client, {
          endTag: tagsSent(client),
          ...(key === EVERY_KEY || timeDependent(plan.bound) ? {} : { query: { ...at, key, uids } }),
          ...(folderOrder ? { folder: folderOrder } : {}),
        });
        return { count: uids.length, uids };
      };
      if (query && query.key === key) {
        const uids = await sinceMemo(client, criteria, query, at);
        if (uids) return done(uids, folder);
      }
      // The folder's own order (every message newest first), brought up to date, and one SEARCH of
      // the matches: a query's first search in a folder whose order this connection holds costs a
      // SEARCH, not a SORT (Dovecot's SORT of 12,000 messages costs about three SEARCHes).
      const searchable = client.capabilities.has("ESEARCH");
      if (folder) {
        const order = await sinceMemo(client, EVERY_MESSAGE, folder, at);
        folder = order ? { ...at, key: EVERY_KEY, uids: order } : undefined;
      }
      // Nothing of the folder remembered on this connection (its first search since it was
      // selected): the server's SEARCH says which messages match, and the cache's arrival times of
      // those UIDs put them in SORT (ARRIVAL)'s order, sparing Dovecot's SORT of every match.
      if (!folder && searchable && arrivals) {
        const known = await arrivals(at.uidValidity);
        // Fewer cached rows than the server holds messages by more than the bound: a cache still
        // syncing the folder, whose matches would mostly be unknown (sorted by the server instead).
        if (known && at.exists - known.cached <= UNKNOWN_MAX) {
          const matching = await uidSearchAll(client, compiled);
          const uids = await byKnownArrival(client, matching, known, () => arrivals(at.uidValidity, true));
          // Every message matching (the empty query): this is the folder's own order, as its SORT would be.
          if (uids) return done(uids, key === EVERY_KEY ? { ...at, key, uids } : undefined);
        }
      }
      // Built on a second query in the same folder: one SORT of every message, once.
      const other = usable(memos?.query);
      if (!folder && searchable && key !== EVERY_KEY && other && other.key !== key) {
        const order = (await uidSortByArrival(client, EVERY_MESSAGE)).reverse();
        folder = { ...at, key: EVERY_KEY, uids: order };
      }
      if (folder && key === EVERY_KEY) return done(folder.uids, folder);
      if (folder && searchable) {
        const matching = await uidSearchAll(client, compiled);
        const uids = folder.uids.filter((uid) => matching.has(uid));
        // A match the order does not hold (mail the server reported after the order's SORT): sorted.
        if (uids.length === matching.size) return done(uids, folder);
      }
      const uids = (await uidSortByArrival(client, criteria)).reverse();
      return done(uids, key === EVERY_KEY ? { ...at, key, uids } : folder);
    }
    const matches = await matchesInLock(client, plan, scope);
    if (want === "count") return { count: matches.length, uids: [] };
    if (want === "newest") return { count: matches.length, uids: await newestFirst(client, matches) };
    return { count: matches.length, uids: matches };
  } finally {
    lock.release();
  }
}

/** At most this many matches unknown to the cache have their INTERNALDATE fetched; more and the server sorts. */
const UNKNOWN_MAX = 200;

/**
 * The server's matches (`matching`, from its SEARCH of the selected folder) newest first in exactly
 * the order `UID SORT (ARRIVAL)` reversed gives them: by arrival second descending, ties by UID
 * descending (RFC 5256 breaks ties by sequence number, which follows UID order). The arrival times
 * come from the cache (`known`, the folder's rows under the UIDVALIDITY selected now, immutable per
 * UID: cache/arrivals.ts); the membership and the count stay the server's, as every UID returned
 * is one the SEARCH matched. Matches the cache does not hold (mail newer than its last sync) have
 * their INTERNALDATE fetched when they are few (UNKNOWN_MAX) and are merged in; more, even after
 * reading the cache again (`refresh`), or one the server no longer answers a FETCH for, and the
 * answer is null: the caller asks the server's SORT.
 */
export async function byKnownArrival(
  client: ImapFlow,
  matching: UidRanges,
  known: KnownArrivals,
  /** The cache's arrivals read again (a kept copy may predate the last sync), when some match is missing. */
  refresh?: () => Promise<KnownArrivals | null>,
): Promise<number[] | null> {
  const uids: number[] = [];
  const seconds: number[] = [];
  const pick = (from: KnownArrivals) => {
    uids.length = 0;
    seconds.length = 0;
    for (let i = 0; i < from.uids.length; i++) {
      const uid = from.uids[i] as number;
      if (!matching.has(uid)) continue;
      uids.push(uid);
      seconds.push(from.seconds[i] as number);
    }
  };
  pick(known);
  if (uids.length === matching.size) return uids;
  // Some matches are not in the cache, or not in the copy of it kept in memory: when more than
  // UNKNOWN_MAX, the cache is read again (it may have synced them since), and when still more, the
  // server sorts. Fewer are looked up on the server, one FETCH being cheaper than reading the
  // folder's rows again.
  if (matching.size - uids.length > UNKNOWN_MAX) {
    const again = await refresh?.();
    if (!again || again.uids === known.uids) return null;
    pick(again);
    if (uids.length === matching.size) return uids;
    if (matching.size - uids.length > UNKNOWN_MAX) return null;
  }
  const kept = new Set(uids);
  const unknown: number[] = [];
  for (const uid of matching.values()) if (!kept.has(uid)) unknown.push(uid);
  let fetched: Array<{ uid: number; internalDate?: Date | string | undefined }>;
  try {
    fetched = await client.fetchAll(uidSet(unknown), { uid: true, internalDate: true }, { uid: true });
  } catch (err) {
    // A FETCH the server refuses leaves the order to its SORT (whose own refusal is reported).
    const e = err as { responseStatus?: string };
    if (client.usable && (e?.responseStatus === "NO" || e?.responseStatus === "BAD")) return null;
    throw err;
  }
  const arrived = new Map<number, number>();
  for (const m of fetched) {
    const ms = m.internalDate ? new Date(m.internalDate).getTime() : Number.NaN;
    if (Number.isFinite(ms)) arrived.set(m.uid, Math.floor(ms / 1000));
  }
  if (unknown.some((uid) => !arrived.has(uid))) return null;
  // The unknown ones newest first, then merged into the known ones (both in the same order).
  unknown.sort((a, b) => (arrived.get(b) as number) - (arrived.get(a) as number) || b - a);
  const out: number[] = [];
  let i = 0;
  for (const uid of unknown) {
    const s = arrived.get(uid) as number;
    while (
      i < uids.length &&
      ((seconds[i] as number) > s || ((seconds[i] as number) === s && (uids[i] as number) > uid))
    )
      out.push(uids[i++] as number);
    out.push(uid);
  }
  while (i < uids.length) out.push(uids[i++] as number);
  return out;
}

/**
 * The last SORT answers of each connection, for the next search in the same folder: the folder
 * stayed selected and only this module's commands went to the server since (the NOOP, SORTs,
 * SEARCHes; `endTag`), while the change log below counted what the server reported, from just
 * before each answer's SORT. Two are kept: the last query's matches (`query`), and the folder's
 * own order, every message newest first (`folder`), once a second query in the folder asked for
 * it. The same query again: its answer brought up to date (sinceMemo). Another query: the folder's
 * order brought up to date and one SEARCH of the matches, which keeps the order's messages that
 * match. Brought up to date, the changed messages alone are looked at: removed ones leave the list
 * by UID, messages whose flags changed are searched again (afterFlagChanges), new ones are placed
 * in front when they arrived last (afterArrivals). Another folder opened, or a change the log
 * cannot place: sorted anew. A query with dates is never remembered: imapflow sends them as
 * WITHIN's YOUNGER/OLDER seconds, whose answer moves with the clock (the folder's order holds no
 * criteria, so such a query still uses it).
 */
const sortMemos = new WeakMap<ImapFlow, { endTag: number; query?: SortMemo; folder?: SortMemo }>();

/** SORT criteria that every message matches: the folder's own order. */
const EVERY_MESSAGE: unknown[] = [{ type: "ATOM", value: "ALL" }];
const EVERY_KEY = JSON.stringify(EVERY_MESSAGE);

interface SortMemo extends LogPosition {
  path: string;
  uidValidity: string;
  /** The SORT criteria (JSON). */
  key: string;
  /** The folder's message count as of that SORT (after its NOOP). */
  exists: number;
  uids: number[];
}

/**
 * What the server reported on a connection since counting began, in the order reported. Flag
 * changes (untagged FETCH FLAGS) by sequence number, and with the UID where the server names it
 * (always under QRESYNC, which the pool's connections enable: imap/connection.ts). Removals the
 * server named by UID (QRESYNC's VANISHED), each with how many times the message count had grown
 * by then. `removed` counts what no UID bookkeeping can follow: an EXPUNGE (a sequence number,
 * the numbers after it shift), a folder opened or closed. New messages are read from the
 * folder's message count (EXISTS).
 */
interface ChangeLog {
  flagged: Array<{ seq: number; uid?: number }>;
  gone: Array<{ uid: number; grew: number }>;
  /** How many times an EXISTS raised the message count. */
  grew: number;
  removed: number;
}

/** Where a change log stands (see sortMemos): the lengths of its lists and its counters. */
interface LogPosition {
  removed: number;
  flags: number;
  gone: number;
  grew: number;
}

const changeLogs = new WeakMap<ImapFlow, ChangeLog>();

const positive = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n > 0;

function changeLog(client: ImapFlow): ChangeLog {
  let log = changeLogs.get(client);
  if (!log) {
    const l: ChangeLog = { flagged: [], gone: [], grew: 0, removed: 0 };
    const removed = () => {
      l.removed++;
    };
    for (const event of ["mailboxOpen", "mailboxClose", "close"]) client.on(event, removed);
    // imapflow reports an EXPUNGE as { seq } and each UID of a VANISHED as { uid, vanished: true }
    // (EARLIER only answers a SELECT or FETCH that asks for it, which the pool never sends).
    client.on("expunge", (e: { uid?: unknown; vanished?: unknown; earlier?: unknown }) => {
      if (e?.vanished === true && !e.earlier && positive(e.uid)) l.gone.push({ uid: e.uid, grew: l.grew });
      else l.removed++;
    });
    client.on("exists", (e: { count?: unknown; prevCount?: unknown }) => {
      if (typeof e?.count === "number" && typeof e.prevCount === "number" && e.count > e.prevCount) l.grew++;
      else l.removed++;
    });
    client.on("flags", (e: { seq?: unknown; uid?: unknown }) => {
      if (positive(e?.seq)) l.flagged.push(positive(e.uid) ? { seq: e.seq, uid: e.uid } : { seq: e.seq });
      else l.removed++;
    });
    changeLogs.set(client, l);
    log = l;
  }
  return log;
}

/** Where the change log stands (see sortMemos). */
function changesReported(client: ImapFlow): LogPosition {
  const log = changeLog(client);
  return { removed: log.removed, flags: log.flagged.length, gone: log.gone.length, grew: log.grew };
}

/**
 * The remembered answer brought up to date with what the log holds between `last` (just before
 * its SORT) and `now` (after this search's NOOP), or null when it cannot be (the caller sorts
 * every match anew). Every count and number below is the server's view of the folder, which
 * changes only where the server reports it (the NOOP, or the end of a UID command).
 *
 * Removals (VANISHED, by UID) leave the list. They are only trusted when nothing had arrived
 * since `last` by the time they were reported: then each one was among the `last.exists`
 * messages that SORT saw, so `known` of those remain, numbered 1 to `known` in their old order,
 * and any message that arrived since has a number after them (up to `now.exists`). A removal
 * after an arrival could be of the new message or an old one: sorted anew.
 *
 * Flag changes named by UID are searched again by UID, after the new messages are placed
 * (so a new message's own flag change finds it in the list). Without UIDs (a server without
 * QRESYNC) they are read by sequence number, which means the same message only while none was
 * removed: with a removal, sorted anew.
 */
async function sinceMemo(
  client: ImapFlow,
  criteria: unknown[],
  last: Omit<SortMemo, "key">,
  now: LogPosition & { exists: number },
): Promise<number[] | null> {
  const log = changeLog(client);
  const gone = log.gone.slice(last.gone, now.gone);
  // Every message matches whatever its flags: a flag change changes nothing of the folder's order.
  const flagged = criteria === EVERY_MESSAGE ? [] : log.flagged.slice(last.flags, now.flags);
  if (gone.some((g) => g.grew !== last.grew)) return null;
  const known = last.exists - gone.length;
  if (known < 0 || now.exists < known) return null;
  // This NOOP heard of no change either: the answer still holds after it.
  if (gone.length === 0 && flagged.length === 0 && now.exists === last.exists) return last.uids;
  let uids: number[] | null = last.uids;
  if (gone.length > 0) {
    const left = new Set(gone.map((g) => g.uid));
    uids = uids.filter((uid) => !left.has(uid));
  }
  const byUid: number[] = [];
  for (const f of flagged) if (f.uid !== undefined) byUid.push(f.uid);
  if (byUid.length === flagged.length) {
    if (now.exists > known) uids = await afterArrivals(client, criteria, uids, known + 1, now.exists);
    if (uids && byUid.length > 0) uids = await afterFlagChanges(client, criteria, uids, { uids: byUid });
    return uids;
  }
  if (gone.length > 0) return null;
  // Only messages after the old count are new (nothing was removed, so the old ones kept their
  // sequence numbers); flag changes of new ones are read with them.
  const seqs = flagged.map((f) => f.seq).filter((seq) => seq <= last.exists);
  if (seqs.length > 0) uids = await afterFlagChanges(client, criteria, uids, { seqs });
  // An EXPUNGE reported at the end of that SORT shifted the numbers the next one would use.
  if (log.removed !== now.removed) return null;
  if (uids && now.exists > last.exists)
    uids = await afterArrivals(client, criteria, uids, last.exists + 1, now.exists);
  return uids;
}

/** At most this many changed messages are searched again one by one; more and the folder is sorted anew. */
const FLAG_CHANGES_MAX = 200;

/**
 * The previous SORT answer after flag changes of these messages (by UID, or by sequence number
 * while no message was added or removed, so the numbers the server gave still name the same
 * messages): each changed message that no longer matches leaves the list; when one that was not
 * in it matches now, its place in the order is unknown and the answer is null (the caller sorts
 * the folder anew). One small SORT of the changed messages that match (by sequence number, one
 * more to learn their UIDs) stands for one over every match. A changed message that is gone is
 * in neither answer and leaves the list too.
 */
async function afterFlagChanges(
  client: ImapFlow,
  criteria: unknown[],
  uids: number[],
  changed: { uids: number[] } | { seqs: number[] },
): Promise<number[] | null> {
  const list = [...new Set("uids" in changed ? changed.uids : changed.seqs)];
  if (list.length > FLAG_CHANGES_MAX) return null;
  const set = { type: "SEQUENCE", value: uidSet(list) };
  const which = "uids" in changed ? [{ type: "ATOM", value: "UID" }, set] : [set];
  const changedUids = "uids" in changed ? list : await uidSortByArrival(client, which);
  const matching = new Set(await uidSortByArrival(client, [...which, ...criteria]));
  const had = new Set(uids);
  for (const uid of matching) if (!had.has(uid)) return null;
  const left = new Set(changedUids.filter((uid) => !matching.has(uid)));
  return left.size === 0 ? uids : uids.filter((uid) => !left.has(uid));
}

/**
 * The previous SORT answer (newest first) with the messages that arrived since (sequence numbers
 * `from` to `to`) placed in front, when every new match arrived no earlier than the newest
 * previous match: one SORT of that match and the new matches says so (by arrival, ties by sequence
 * number, as a SORT of every match orders them). A new match that arrived earlier (mail appended
 * with an old date) has a place the answer cannot tell: null, and the caller sorts anew.
 */
async function afterArrivals(
  client: ImapFlow,
  criteria: unknown[],
  uids: readonly number[],
  from: number,
  to: number,
): Promise<number[] | null> {
  const fresh = [{ type: "SEQUENCE", value: `${from}:${to}` }, ...criteria];
  const newest = uids[0];
  const sorted = await uidSortByArrival(
    client,
    newest === undefined
      ? fresh
      : [
          { type: "ATOM", value: "OR" },
          { type: "ATOM", value: "UID" },
          { type: "SEQUENCE", value: String(newest) },
          fresh,
        ],
  );
  if (newest === undefined) return sorted.reverse();
  if (sorted[0] !== newest) return null;
  return [...sorted.slice(1).reverse(), ...uids];
}

/** How many commands imapflow has sent on this connection (its tag counter; not in its typings). */
function tagsSent(client: ImapFlow): number {
  return (client as unknown as { tagCounter: number }).tagCounter;
}

function timeDependent(bound: QueryNode): boolean {
  let found = false;
  const visit = (n: QueryNode): void => {
    if (n.kind === "and" || n.kind === "or") n.children.forEach(visit);
    else if (n.kind === "not") visit(n.child);
    else if (n.kind === "date" || n.kind === "age") found = true;
  };
  visit(bound);
  return found;
}

/** The plan's matching UIDs, ascending, in the selected folder. */
async function matchesInLock(
  client: ImapFlow,
  plan: NonNullable<ReturnType<typeof compileToImap>>,
  scope: { folder: FolderInfo; account?: string; now: Date },
): Promise<number[]> {
  {
    const candidates = await uidSearch(client, plan.search);
    if (plan.exact || candidates.length === 0) return candidates.sort((a, b) => a - b);
    const structure = new Map<number, ReturnType<typeof attachmentsFromStructure>>();
    for await (const msg of client.fetch(
      uidSet(candidates),
      { uid: true, bodyStructure: true },
      { uid: true },
    )) {
      structure.set(msg.uid, attachmentsFromStructure(msg.bodyStructure));
    }
    const leafSets = new Map<LeafNode, Set<number>>();
    const collect = (n: QueryNode): void => {
      if (n.kind === "and" || n.kind === "or") n.children.forEach(collect);
      else if (n.kind === "not") collect(n.child);
      else if (n.kind !== "all" && n.kind !== "none" && !imapUnsupported(n)) leafSets.set(n, new Set());
    };
    collect(plan.bound);
    for (const [leaf, set] of leafSets) {
      const q = leafSearch(leaf, scope.now);
      if (q === "none") continue;
      for (const part of chunks(candidates))
        for (const uid of await uidSearch(client, { uid: part, ...q })) set.add(uid);
    }
    return candidates
      .filter((uid) =>
        evaluate(plan.bound, (leaf) => {
          switch (leaf.kind) {
            case "has_attachment":
              return (structure.get(uid)?.length ?? 0) > 0;
            case "filename": {
              const v = leaf.value.toLowerCase();
              return (structure.get(uid) ?? []).some((a) => (a.filename ?? "").toLowerCase().includes(v));
            }
            case "in":
              return inMatchesFolder(leaf.value, scope.folder);
            case "account":
              return scope.account !== undefined && leaf.value.toLowerCase() === scope.account.toLowerCase();
            default:
              return leafSets.get(leaf)?.has(uid) ?? false;
          }
        }),
      )
      .sort((a, b) => a - b);
  }
}
