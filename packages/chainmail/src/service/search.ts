/**
 * search. Per account: `server` asks the IMAP server (the query module's imapSearchFolder); `cache`
 * answers from cache.db whatever it holds (missing folders in `partial`); `auto` uses the cache when
 * cacheCanAnswerQuery says it is complete and fresh for the query, else the server. When every
 * account is on the cache, one keyset-paged cache query answers (the fast path); otherwise rows of
 * both kinds are merged newest first and paged by offset.
 */
import crypto from "node:crypto";
import type { FetchMessageObject, ImapFlow, ListResponse } from "imapflow";
import { simpleParser } from "mailparser";
import type { AccountConfig } from "../config.js";
import { type WireError, MailError, isMailError, toWireError } from "../errors.js";
import { htmlToText } from "../imap/body.js";
import type { SearchSource } from "../limits.js";
import { displayName, listAll, roleOf } from "../imap/folders.js";
import { splitFlags } from "../imap/messages.js";
import { RawFetch, headerItems } from "../imap/raw-fetch.js";
import {
  bindQuery,
  type FolderInfo,
  folderInScope,
  IN_ANYWHERE,
  IN_ROLE_ALIASES,
  inMatchesFolder,
  mentionsIn,
  splitAccounts,
} from "../query/analyze.js";
import { compileToGmailRaw } from "../query/imap.js";
import { leaves, mapLeaves, type QueryNode } from "../query/ast.js";
import { QueryParseError } from "../query/errors.js";
import {
  type FolderMatches,
  imapFolderMatches,
  newestFirst,
  searchRefused,
  uidSet,
} from "../query/imap-run.js";
import { FIELDS } from "../query/lexer.js";
import { parseQuery } from "../query/parser.js";
import { attachmentsFromStructure } from "../query/structure.js";
import { encodeRef } from "../refs.js";
import { canonicalThreadKey } from "../thread-key.js";
import { type CacheRow, CursorError, cacheCanAnswerQuery, searchCache } from "../cache/index.js";
import { type Call, type ServiceContext, accountOf, auditRead, cacheOf } from "./context.js";
import { itemsOf } from "./items.js";

export type { SearchSource };

export interface SearchParams {
  query: string;
  accounts: string[];
  limit: number;
  cursor?: string | undefined;
  count_only: boolean;
  snippets: boolean;
  threads: boolean;
  source: SearchSource;
}

export interface SearchRow {
  ref: string;
  account: string;
  folder: string;
  date: string | null;
  from: { name: string; address: string } | null;
  subject: string;
  flags: string[];
  keywords: string[];
  size: number;
  has_attachment: boolean;
  message_id: string | null;
  thread_id: string;
  snippet?: string;
}

export interface SearchResult {
  rows: SearchRow[];
  count: number;
  next_cursor: string | null;
  source: "server" | "cache" | "mixed";
  account_counts: Array<{ account: string; count: number; source: "server" | "cache" }>;
  partial: Array<{ account: string; folder?: string; error: WireError }>;
}

function cursorKey(p: SearchParams): string {
  const basis = JSON.stringify([p.query, [...p.accounts].sort(), p.threads, p.source]);
  return crypto.createHash("sha256").update(basis).digest("base64url").slice(0, 16);
}

/**
 * Where the next page starts. `s`: per stream (a server folder, "account\u0000path", or a cache
 * account, "account"), how many of its rows earlier pages took, and for a server folder the UID of
 * the last one ([taken, uid]): the next page resumes after that UID in the folder's new answer, so
 * mail that arrived between pages does not shift it, and falls back to the count when the message
 * is gone. A page of N merged from several folders so fetches at most N envelopes per folder. `o`: an offset into the whole collapsed list (threads: true,
 * which needs every match's thread to collapse). `c`: the cache's keyset cursor (cache-only searches).
 */
/** A stream's position: rows taken, and the UID of the last one (server folders). */
export interface StreamPos {
  taken: number;
  uid?: number;
}

type CursorPos = { o: number } | { c: string } | { s: Record<string, number | [number, number]> };

/** A cursor holds the query's hash and its position (CursorPos). */
export function encodeCursor(p: SearchParams, pos: CursorPos): string {
  return `c1.${Buffer.from(JSON.stringify({ k: cursorKey(p), ...pos })).toString("base64url")}`;
}

function badCursor(): MailError {
  return new MailError(
    "INVALID_ARGUMENT",
    "cursor is not a next_cursor of this search",
    "Pass next_cursor unchanged, with the same query and arguments.",
  );
}

export type DecodedCursor =
  | { kind: "none"; cache: null }
  | { kind: "offset"; offset: number }
  | { kind: "cache"; cache: string }
  | { kind: "streams"; streams: Map<string, StreamPos> };

export function decodeCursor(p: SearchParams): DecodedCursor {
  if (!p.cursor) return { kind: "none", cache: null };
  if (!p.cursor.startsWith("c1.")) throw badCursor();
  let v: { k?: unknown; o?: unknown; c?: unknown; s?: unknown };
  try {
    v = JSON.parse(Buffer.from(p.cursor.slice(3), "base64url").toString("utf8")) as typeof v;
  } catch {
    throw badCursor();
  }
  if (typeof v !== "object" || v === null || v.k !== cursorKey(p)) throw badCursor();
  if (typeof v.o === "number" && Number.isInteger(v.o) && v.o >= 0) return { kind: "offset", offset: v.o };
  if (typeof v.c === "string" && v.c.length > 0) return { kind: "cache", cache: v.c };
  if (typeof v.s === "object" && v.s !== null && !Array.isArray(v.s)) {
    const streams = new Map<string, StreamPos>();
    const count = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0;
    for (const [key, v2] of Object.entries(v.s)) {
      if (count(v2)) streams.set(key, { taken: v2 });
      else if (Array.isArray(v2) && v2.length === 2 && count(v2[0]) && count(v2[1]))
        streams.set(key, { taken: v2[0], uid: v2[1] });
      else throw badCursor();
    }
    return { kind: "streams", streams };
  }
  throw badCursor();
}

/** Fills each item: term with the threads linked to that item and the live items below it. */
function withItemThreads(ctx: ServiceContext, ast: QueryNode, source: SearchParams["source"]): QueryNode {
  if (!leaves(ast).some((l) => l.kind === "item")) return ast;
  if (source === "server")
    throw new MailError(
      "UNSUPPORTED",
      'item: searches need the cache, so source "server" refuses them',
      'Use source "auto" or "cache".',
    );
  cacheOf(ctx);
  const items = itemsOf(ctx);
  return mapLeaves(ast, (leaf) =>
    leaf.kind === "item"
      ? {
          ...leaf,
          threads: items.threadsUnder(leaf.value).map((t): [string, string] => [t.account, t.thread_key]),
        }
      : leaf,
  );
}

function parse(query: string): QueryNode {
  try {
    return parseQuery(query);
  } catch (err) {
    if (err instanceof QueryParseError)
      throw new MailError(
        "INVALID_ARGUMENT",
        `query: ${err.message}`,
        err.expected === "a known field"
          ? `The fields are ${[...FIELDS].map((f) => `${f}:`).join(", ")}. To search for the word itself, put it in quotes.`
          : undefined,
      );
    throw new MailError("INVALID_ARGUMENT", `query: ${(err as Error).message}`);
  }
}

interface Hit extends SearchRow {
  sortDate: number;
  uid: number;
  path: string;
}

/** One server folder's matches, newest first: a stream the page is merged from. */
interface Stream {
  key: string;
  path: string;
  name: string;
  count: number;
  uids: number[];
}

/** The error of one folder: a server's NO/BAD is a refusal with its text in detail, not INTERNAL. */
function folderError(client: ImapFlow, err: unknown, what: string): WireError {
  const e = err as { responseStatus?: string; responseText?: string; serverResponseCode?: string };
  if (!isMailError(err) && (e?.responseStatus === "NO" || e?.responseStatus === "BAD"))
    return toWireError(searchRefused(client, what, { text: e.responseText, code: e.serverResponseCode }));
  return toWireError(err);
}

/**
 * Each account's folder list as a search's last LIST gave it, per daemon (keyed by its pool), so a
 * search that names its folders (`in:Bulk`) does not LIST again each time. See rememberedFor.
 */
const rememberedLists = new WeakMap<object, Map<string, ListResponse[]>>();

function remember(ctx: ServiceContext, account: string, list: ListResponse[]): void {
  let lists = rememberedLists.get(ctx.pool);
  if (!lists) {
    lists = new Map();
    rememberedLists.set(ctx.pool, lists);
  }
  lists.set(account, list);
}

/** The query's `in:` values that name folders by name (not a role alias or anywhere). */
function namedInValues(ast: QueryNode): string[] {
  return [
    ...new Set(
      leaves(ast)
        .filter((l) => l.kind === "in")
        .map((l) => l.value)
        .filter((v) => !IN_ANYWHERE.has(v.toLowerCase()) && IN_ROLE_ALIASES[v.toLowerCase()] === undefined),
    ),
  ];
}

/**
 * The account's remembered folder list, when it alone can tell which folders this query reads: the
 * query matches nothing outside the folders its `in:` terms name (by name, or `in:inbox`, whose role
 * only INBOX has), and the list knows a folder for each name. A folder created since by another
 * client under another name cannot be one of them; one deleted, renamed or made unselectable since
 * is refused by the server when selected, and the search then asks for the list again
 * (StaleFolderList). Google accounts always LIST (`in:` names labels there).
 */
function rememberedFor(
  ctx: ServiceContext,
  account: AccountConfig,
  ast: QueryNode,
): ListResponse[] | undefined {
  if (account.provider === "google") return undefined;
  const list = rememberedLists.get(ctx.pool)?.get(account.name);
  if (!list) return undefined;
  const values = [...new Set(leaves(ast).flatMap((l) => (l.kind === "in" ? [l.value.toLowerCase()] : [])))];
  if (values.length === 0) return undefined;
  if (values.some((v) => IN_ANYWHERE.has(v) || (IN_ROLE_ALIASES[v] !== undefined && v !== "inbox")))
    return undefined;
  // A folder no in: term names (no path, no role) can match nothing: the scope is the named folders.
  if (bindQuery(ast, { folder: { path: "\u0000", role: null } }).kind !== "none") return undefined;
  const infos = list.map((f) => ({ path: f.path, role: roleOf(f) }));
  return values.every((v) => infos.some((f) => inMatchesFolder(v, f))) ? list : undefined;
}

/** A remembered folder list no longer matches the server: the search runs again on a fresh LIST. */
class StaleFolderList extends Error {}

/**
 * Runs one account's server-path search (`attempt`) on the right folder list: the one checkInFolders
 * already asked for, else the remembered one where it can answer (rememberedFor), else a fresh LIST.
 * When a remembered folder turns out gone, the fresh list decides, and an `in:` name it lacks is
 * refused as checkInFolders refuses it.
 */
async function withFolderList<T>(
  ctx: ServiceContext,
  client: ImapFlow,
  account: AccountConfig,
  ast: QueryNode,
  listed: ReadonlyMap<string, ListResponse[]>,
  attempt: (folders: ReadonlyMap<string, ListResponse[]>, remembered: boolean) => Promise<T>,
): Promise<T> {
  let list = listed.get(account.name);
  if (!list) {
    const known = rememberedFor(ctx, account, ast);
    if (known) {
      try {
        return await attempt(new Map([[account.name, known]]), true);
      } catch (err) {
        if (!(err instanceof StaleFolderList)) throw err;
      }
    }
    list = await listAll(client, false);
    remember(ctx, account.name, list);
    if (known) {
      const lists = [list.map((f) => ({ path: f.path, role: roleOf(f) }))];
      const unknown = namedInValues(ast).filter(
        (v) => !lists.some((l) => l.some((f) => inMatchesFolder(v, f))),
      );
      if (unknown.length > 0) throw unknownFolders(unknown, 1);
    }
  }
  return attempt(new Map([[account.name, list]]), false);
}

/** Every folder of the account the query reads, with its exact number of matches (and their UIDs newest first unless only counted). */
async function serverMatches(
  client: ImapFlow,
  account: AccountConfig,
  ast: QueryNode,
  partial: SearchResult["partial"],
  countOnly: boolean,
  /** Called right after each folder's matches, while the folder is still selected (the page's fetch). */
  onFolder: (s: Stream) => Promise<void> = async () => undefined,
  /** The account's folder list if this call already has it (checkInFolders asked), saving a LIST. */
  listed?: ReadonlyMap<string, ListResponse[]>,
  /** `listed` is a remembered list (see withFolderList): a folder the server refuses throws StaleFolderList. */
  remembered = false,
): Promise<Stream[]> {
  const now = new Date();
  const folders = (listed?.get(account.name) ?? (await listAll(client, false))).filter(
    (f) => !f.flags.has("\\Noselect") && !f.flags.has("\\NonExistent"),
  );
  let scope = folders.filter((f) => folderInScope(ast, { path: f.path, role: roleOf(f) }));
  // On Gmail every message is in All Mail: searching it alone avoids one row per label.
  const all = folders.find((f) => roleOf(f) === "all");
  if (account.provider === "google" && all && !mentionsIn(ast)) scope = [all];
  const gmail = account.provider === "google" && client.capabilities.has("X-GM-EXT-1");
  const streams: Stream[] = [];
  for (const f of scope) {
    let found: Stream | null = null;
    try {
      const m =
        gmail && roleOf(f) === "all"
          ? await gmailSearch(client, f.path, ast, account.name, countOnly)
          : await imapFolderMatches(
              client,
              ast,
              { folder: { path: f.path, role: roleOf(f) }, account: account.name, now },
              { countOnly },
            );
      if (m.count === 0) continue;
      const stream = {
        key: `${account.name}\u0000${f.path}`,
        path: f.path,
        name: displayName(f.path, f.delimiter),
        count: m.count,
        uids: m.uids,
      };
      streams.push(stream);
      found = stream;
    } catch (err) {
      if (!client.usable) throw err;
      // Perhaps deleted, renamed or made unselectable since the list was taken: ask the server again.
      if (remembered) throw new StaleFolderList();
      partial.push({
        account: account.name,
        folder: displayName(f.path, f.delimiter),
        error: folderError(client, err, "SEARCH"),
      });
    }
    if (found) await onFolder(found);
  }
  return streams;
}

/** What a page's row is built from: the fields RawFetch and imapflow's `fetch` both give. */
type PageMessage = Pick<
  FetchMessageObject,
  "uid" | "envelope" | "flags" | "size" | "internalDate" | "bodyStructure" | "headers" | "threadId"
>;

/** The search rows of these UIDs of one folder, in the order given; only their envelopes are fetched. */
async function serverRows(
  client: ImapFlow,
  account: AccountConfig,
  stream: Stream,
  uids: number[],
): Promise<Hit[]> {
  if (uids.length === 0) return [];
  const gmail = account.provider === "google" && client.capabilities.has("X-GM-EXT-1");
  // The folder's search just selected it, so the lock sends nothing: selecting it again would cost
  // a round trip per page. The lock keeps imapflow from sending anything while RawFetch reads.
  const lock = await client.getMailboxLock(stream.path, { readOnly: true });
  let uidValidity: number;
  let fetched: PageMessage[];
  try {
    uidValidity = Number(client.mailbox ? client.mailbox.uidValidity : Number.NaN);
    // The page's envelopes through the lean FETCH reader (imap/raw-fetch.ts): imapflow's tokenizer
    // took most of the page's time. imapflow answers when the connection cannot be borrowed.
    const raw = RawFetch.open(client);
    if (raw) {
      try {
        fetched = await raw.fetch(uidSet(uids), headerItems(client, gmail));
      } finally {
        raw.close();
      }
    } else {
      fetched = await client.fetchAll(
        uidSet(uids),
        {
          uid: true,
          envelope: true,
          flags: true,
          size: true,
          internalDate: true,
          bodyStructure: true,
          headers: ["references"],
          ...(gmail ? { threadId: true } : {}),
        },
        { uid: true },
      );
    }
  } finally {
    lock.release();
  }
  const byUid = new Map<number, Hit>();
  for (const m of fetched) {
    const env = m.envelope;
    const hdr = m.headers?.toString("utf8") ?? "";
    const refsLine = /^references:\s*([\s\S]*?)(?=^\S|$(?![\s\S]))/im.exec(hdr)?.[1] ?? "";
    const references = refsLine.match(/<[^>]+>/g) ?? [];
    const inReplyTo = env?.inReplyTo?.match(/<[^>]+>/)?.[0] ?? null;
    const ref = encodeRef({ account: account.name, folder: stream.path, uidValidity, uid: m.uid });
    const date = env?.date ?? m.internalDate;
    // Rows are ordered by arrival (INTERNALDATE), as the server's SORT ARRIVAL and the cache order them.
    const arrived = m.internalDate ?? env?.date;
    const from = env?.from?.[0];
    const { flags, keywords } = splitFlags(m.flags);
    byUid.set(m.uid, {
      ref,
      account: account.name,
      folder: stream.name,
      date: date ? new Date(date).toISOString() : null,
      from: from ? { name: from.name ?? "", address: from.address ?? "" } : null,
      subject: env?.subject ?? "",
      flags,
      keywords,
      size: m.size ?? 0,
      has_attachment: attachmentsFromStructure(m.bodyStructure).length > 0,
      message_id: env?.messageId ?? null,
      thread_id: canonicalThreadKey({
        gmThreadId: m.threadId,
        references,
        inReplyTo,
        messageId: env?.messageId,
        date: env?.date,
        fromAddress: from?.address,
        subject: env?.subject,
      }),
      sortDate: arrived ? new Date(arrived).getTime() : 0,
      uid: m.uid,
      path: stream.path,
    });
  }
  // A message expunged since the SEARCH has no FETCH answer and is left out.
  return uids.flatMap((u) => byUid.get(u) ?? []);
}

/** On Gmail, All Mail answers the whole query in one X-GM-RAW search (Gmail's own syntax). */
async function gmailSearch(
  client: ImapFlow,
  path: string,
  ast: QueryNode,
  account: string,
  countOnly: boolean,
): Promise<FolderMatches> {
  const raw = compileToGmailRaw(bindQuery(ast, { account }));
  if (raw === null) return { count: 0, uids: [] };
  await client.mailboxOpen(path, { readOnly: true });
  const uids = await client.search(raw === "" ? { all: true } : { gmraw: raw }, { uid: true });
  if (!Array.isArray(uids)) throw searchRefused(client, "SEARCH");
  return { count: uids.length, uids: countOnly ? [] : await newestFirst(client, uids) };
}

async function addSnippets(ctx: ServiceContext, rows: Hit[]): Promise<void> {
  const byAccount = new Map<string, Hit[]>();
  for (const r of rows) byAccount.set(r.account, [...(byAccount.get(r.account) ?? []), r]);
  for (const [name, list] of byAccount) {
    const account = accountOf(ctx, name);
    await ctx.pool.read(account, async (client) => {
      for (const r of list) {
        await client.mailboxOpen(r.path, { readOnly: true });
        const m = await client.fetchOne(
          String(r.uid),
          { uid: true, source: { maxLength: 256 * 1024 } },
          { uid: true },
        );
        const source = m ? m.source : undefined; // fetchOne answers false for a UID that is gone
        if (!source) continue;
        const parsed = await simpleParser(source);
        let text = parsed.text ?? "";
        if (!text.trim() && typeof parsed.html === "string") text = htmlToText(parsed.html);
        r.snippet = text.replace(/\s+/g, " ").trim().slice(0, 200);
      }
    });
  }
}

/** How one account is answered. */
type Plan = { name: string; bound: QueryNode; use: "cache" | "server" };

function planAccounts(
  ctx: ServiceContext,
  p: SearchParams,
  perAccount: Map<string, QueryNode>,
  partial: SearchResult["partial"],
): Plan[] {
  const plans: Plan[] = [];
  for (const [name, bound] of perAccount) {
    if (p.source === "server" || !ctx.cache) {
      if (p.source === "cache") cacheOf(ctx);
      plans.push({ name, bound, use: "server" });
      continue;
    }
    const can = cacheCanAnswerQuery(ctx.cache.db, name, bound, {
      freshSeconds: ctx.cache.settings.fresh_seconds,
    });
    if (p.source === "cache") {
      // Forced: answer from what is cached, and say which folders may be missing matches.
      for (const l of can.lacking) {
        partial.push({
          account: name,
          folder: l.folder,
          error: {
            reason: "UNSUPPORTED",
            message: LACKING[l.reason],
            hint: 'Use source "auto" or "server" for a complete answer, or run `chainmail cache sync`.',
          },
        });
      }
      if (can.lacking.length === 0 && !can.complete) {
        partial.push({
          account: name,
          error: {
            reason: "UNSUPPORTED",
            message: LACKING.never_synced,
            hint: "Run `chainmail cache sync`, or use the server.",
          },
        });
      }
      plans.push({ name, bound, use: "cache" });
    } else {
      const use = can.complete && can.fresh && !ctx.cache.isDirty(name) ? "cache" : "server";
      plans.push({ name, bound, use });
    }
  }
  return plans;
}

/** Accounts whose mail all sits in All Mail (Google): searched there alone unless the query says in:. */
function googleAccounts(ctx: ServiceContext): string[] {
  return ctx.config.accounts.filter((a) => a.provider === "google").map((a) => a.name);
}

const LACKING = {
  never_synced: "the cache has not synced this account or folder yet",
  headers: "the cache does not hold every message's headers of this folder yet",
  bodies: "the cache does not hold every body of this folder yet, so word searches may miss messages",
  stale: "the cache of this folder may be out of date",
} as const;

const SHORT_FLAG_ORDER = (flags: string[]) => [...flags].sort();

/** A cache row in the search row shape. */
function rowFromCache(r: CacheRow): Hit {
  const ref = encodeRef({
    account: r.account,
    folder: r.folder,
    uidValidity: Number(r.uidvalidity),
    uid: r.uid,
  });
  return {
    ref,
    account: r.account,
    folder: r.folder,
    date: r.date,
    from: r.from ? { name: r.from.name, address: r.from.address } : null,
    subject: r.subject,
    flags: SHORT_FLAG_ORDER(r.flags),
    keywords: [...r.keywords].sort(),
    size: r.size,
    has_attachment: r.has_attachment,
    message_id: r.message_id,
    // The cache stores the canonical key, so collapsing and the row's thread_id agree with the server path.
    thread_id: r.thread_key,
    // No stored text (evicted, or beyond a settled cache's reach): addSnippets asks the server
    ...(typeof r.snippet === "string" ? { snippet: r.snippet } : {}),
    sortDate: Date.parse(r.received),
    uid: r.uid,
    path: r.folder,
  };
}

/** Every cache match of these accounts up to `want` rows, newest first by arrival. */
function cacheHits(
  ctx: ServiceContext,
  plans: Plan[],
  p: SearchParams,
  want: number,
): { hits: Hit[]; counts: Map<string, number> } {
  const hits: Hit[] = [];
  const counts = new Map<string, number>();
  for (const plan of plans) {
    let cursor: string | null = null;
    let taken = 0;
    do {
      const res = searchCache(ctx.cache!.db, plan.bound, {
        accounts: [plan.name],
        allMailAccounts: googleAccounts(ctx),
        limit: 200,
        cursor,
        threads: p.threads,
        snippets: p.snippets,
        countOnly: p.count_only,
      });
      counts.set(plan.name, res.account_counts[plan.name] ?? 0);
      for (const r of res.rows) hits.push(rowFromCache(r));
      taken += res.rows.length;
      cursor = res.next_cursor;
    } while (cursor && taken < want);
  }
  return { hits, counts };
}

export async function search(ctx: ServiceContext, call: Call, p: SearchParams): Promise<SearchResult> {
  const ast = withItemThreads(ctx, parse(p.query), p.source);
  for (const name of p.accounts) accountOf(ctx, name);
  const { perAccount, named } = splitAccounts(
    ast,
    ctx.config.accounts.map((a) => a.name),
    p.accounts,
  );
  for (const n of named) {
    if (!ctx.config.accounts.some((a) => a.name.toLowerCase() === n.toLowerCase())) {
      throw new MailError(
        "NOT_FOUND",
        `query names an unknown account ${JSON.stringify(n)}`,
        "list_accounts gives the account names.",
      );
    }
  }
  const listed = new Map<string, ListResponse[]>();
  await checkInFolders(ctx, ast, [...perAccount.keys()], listed);
  const partial: SearchResult["partial"] = [];
  const cursor = decodeCursor(p);
  // item: terms are answered from the cache alone (the server knows nothing of work items).
  const planned = leaves(ast).some((l) => l.kind === "item") ? { ...p, source: "cache" as const } : p;
  let plans = planAccounts(ctx, planned, perAccount, partial);
  // A search that began on the cache keeps paging the cache, so its pages stay consistent.
  if (cursor.kind === "cache") plans = plans.map((x) => ({ ...x, use: "cache" as const }));
  const onCache = plans.filter((x) => x.use === "cache");
  const onServer = plans.filter((x) => x.use === "server");
  // One keyset-paged cache query when every account is answered by the cache: the fast path.
  if (onServer.length === 0 && onCache.length > 0 && (cursor.kind === "none" || cursor.kind === "cache")) {
    return cacheOnly(ctx, call, p, onCache, partial, cursor.cache);
  }
  if (p.threads) return collapsedSearch(ctx, call, p, plans, partial, cursor, listed);
  if (cursor.kind === "offset") throw badCursor();
  const from = cursor.kind === "streams" ? cursor.streams : new Map<string, StreamPos>();
  const counts: SearchResult["account_counts"] = [];
  /** Each stream's rows of this page, newest first, from its position on. */
  const streams: Array<{ key: string; start: number; count: number; rows: Hit[]; failed: boolean }> = [];
  for (const plan of onCache) {
    const start = from.get(plan.name)?.taken ?? 0;
    const got = cacheHits(
      ctx,
      [plan],
      { ...p, count_only: p.count_only },
      p.count_only ? 0 : start + p.limit,
    );
    const n = got.counts.get(plan.name) ?? 0;
    counts.push({ account: plan.name, count: n, source: "cache" });
    streams.push({ key: plan.name, start, count: n, rows: got.hits.slice(start), failed: false });
    auditRead(ctx, call, plan.name, "allowed", `search (${p.query.length} chars): ${n} match(es) from cache`);
  }
  const serverCounts = new Map<string, number>();
  await Promise.all(
    onServer.map(async ({ name, bound }) => {
      const account = accountOf(ctx, name);
      try {
        // Each attempt collects its own partial entries and rows: a read may run twice after a reconnect.
        const got = await ctx.pool.read(account, (c) =>
          withFolderList(ctx, c, account, bound, listed, async (folders, remembered) => {
            const mine: SearchResult["partial"] = [];
            const pages: typeof streams = [];
            await serverMatches(
              c,
              account,
              bound,
              mine,
              p.count_only,
              async (s) => {
                const pos = from.get(s.key);
                const after = pos?.uid === undefined ? -1 : s.uids.indexOf(pos.uid);
                const start = after >= 0 ? after + 1 : (pos?.taken ?? 0);
                const page = { key: s.key, start, count: s.count, rows: [] as Hit[], failed: false };
                pages.push(page);
                if (p.count_only) return;
                try {
                  page.rows = await serverRows(c, account, s, s.uids.slice(start, start + p.limit));
                } catch (err) {
                  if (!c.usable) throw err;
                  page.failed = true;
                  mine.push({ account: name, folder: s.name, error: folderError(c, err, "FETCH") });
                }
              },
              folders,
              remembered,
            );
            return { pages, mine };
          }),
        );
        partial.push(...got.mine);
        streams.push(...got.pages);
        const n = got.pages.reduce((sum, s) => sum + s.count, 0);
        serverCounts.set(name, n);
        auditRead(ctx, call, name, "allowed", `search (${p.query.length} chars): ${n} match(es) from server`);
      } catch (err) {
        partial.push({ account: name, error: toWireError(err) });
        auditRead(ctx, call, name, "error", `search: ${toWireError(err).reason}`);
      }
    }),
  );
  for (const plan of onServer) {
    const n = serverCounts.get(plan.name);
    if (n !== undefined) counts.push({ account: plan.name, count: n, source: "server" });
  }
  if (perAccount.size > 0 && counts.length === 0) {
    const first = partial[0]!.error;
    throw new MailError(first.reason, first.message, first.hint, first.detail);
  }
  counts.sort(
    (a, b) => plans.findIndex((x) => x.name === a.account) - plans.findIndex((x) => x.name === b.account),
  );
  const count = counts.reduce((sum, c) => sum + c.count, 0);
  const { page, taken } = p.count_only
    ? { page: [], taken: new Map<string, number>() }
    : mergePage(streams, p.limit);
  const missing = page.filter((r) => r.snippet === undefined);
  if (p.snippets && missing.length) await addSnippets(ctx, missing);
  const next = new Map(from);
  for (const s of streams) {
    const n = taken.get(s.key) ?? 0;
    const last = n > 0 ? s.rows[n - 1] : undefined;
    const server = s.key.includes("\u0000");
    next.set(s.key, {
      taken: s.start + n,
      ...(server && last ? { uid: last.uid } : server ? { uid: from.get(s.key)?.uid } : {}),
    });
  }
  const more = streams.some((s) => !s.failed && (next.get(s.key)?.taken ?? 0) < s.count);
  const saved = Object.fromEntries(
    [...next].map(([k, v]): [string, number | [number, number]] => [
      k,
      v.uid === undefined ? v.taken : [v.taken, v.uid],
    ]),
  );
  return {
    rows: page.map(({ sortDate: _d, uid: _u, path: _p, ...row }) => row),
    count,
    next_cursor: !p.count_only && more ? encodeCursor(p, { s: saved }) : null,
    source: overallSource(counts),
    account_counts: counts,
    partial,
  };
}

/**
 * A k-way merge, newest first by arrival (`sortDate`; ties by stream key): each stream is already in
 * that order, so a page takes at most `limit` rows of any one stream, and `taken` says how many of
 * each, for the next page to resume each stream where this one stopped.
 */
export function mergePage<T extends { sortDate: number }>(
  streams: ReadonlyArray<{ key: string; rows: readonly T[] }>,
  limit: number,
): { page: T[]; taken: Map<string, number> } {
  const page: T[] = [];
  const taken = new Map<string, number>();
  const heads = streams.map(() => 0);
  while (page.length < limit) {
    let best = -1;
    for (let i = 0; i < streams.length; i++) {
      const r = streams[i]!.rows[heads[i]!];
      if (!r) continue;
      const b = best < 0 ? undefined : streams[best]!.rows[heads[best]!]!;
      if (
        !b ||
        r.sortDate > b.sortDate ||
        (r.sortDate === b.sortDate && streams[i]!.key < streams[best]!.key)
      )
        best = i;
    }
    if (best < 0) break;
    page.push(streams[best]!.rows[heads[best]!]!);
    heads[best]!++;
    taken.set(streams[best]!.key, heads[best]!);
  }
  return { page, taken };
}

/**
 * threads: true off the cache fast path. Collapsing a thread to its newest row needs every match's
 * thread, so every match's envelope is fetched (no cap), and pages are offsets into the collapsed list.
 */
async function collapsedSearch(
  ctx: ServiceContext,
  call: Call,
  p: SearchParams,
  plans: Plan[],
  partial: SearchResult["partial"],
  cursor: DecodedCursor,
  listed: ReadonlyMap<string, ListResponse[]>,
): Promise<SearchResult> {
  if (cursor.kind === "streams") throw badCursor();
  const onCache = plans.filter((x) => x.use === "cache");
  const onServer = plans.filter((x) => x.use === "server");
  const offset = cursor.kind === "offset" ? cursor.offset : 0;
  const all: Hit[] = [];
  const counts: SearchResult["account_counts"] = [];
  const fromCache = onCache.length
    ? cacheHits(ctx, onCache, { ...p, snippets: p.snippets, count_only: false }, offset + p.limit)
    : null;
  if (fromCache) {
    all.push(...fromCache.hits);
    for (const plan of onCache) {
      const n = fromCache.counts.get(plan.name) ?? 0;
      auditRead(
        ctx,
        call,
        plan.name,
        "allowed",
        `search (${p.query.length} chars): ${n} match(es) from cache`,
      );
    }
  }
  await Promise.all(
    onServer.map(async ({ name, bound }) => {
      const account = accountOf(ctx, name);
      try {
        const got = await ctx.pool.read(account, (c) =>
          withFolderList(ctx, c, account, bound, listed, async (folders, remembered) => {
            const mine: SearchResult["partial"] = [];
            const hits: Hit[] = [];
            for (const s of await serverMatches(
              c,
              account,
              bound,
              mine,
              false,
              undefined,
              folders,
              remembered,
            )) {
              try {
                hits.push(...(await serverRows(c, account, s, s.uids)));
              } catch (err) {
                if (!c.usable) throw err;
                mine.push({ account: name, folder: s.name, error: folderError(c, err, "FETCH") });
              }
            }
            return { hits, mine };
          }),
        );
        partial.push(...got.mine);
        all.push(...got.hits);
        auditRead(
          ctx,
          call,
          name,
          "allowed",
          `search (${p.query.length} chars): ${got.hits.length} match(es) from server`,
        );
      } catch (err) {
        partial.push({ account: name, error: toWireError(err) });
        auditRead(ctx, call, name, "error", `search: ${toWireError(err).reason}`);
      }
    }),
  );
  all.sort((a, b) => b.sortDate - a.sortDate || a.account.localeCompare(b.account) || b.uid - a.uid);
  const seen = new Set<string>();
  const rows = all.filter((r) => {
    const key = `${r.account}\u0000${r.thread_id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  let count = 0;
  for (const plan of plans) {
    if (plan.use === "server" && partial.some((x) => x.account === plan.name && !x.folder)) continue;
    const n =
      plan.use === "cache"
        ? (fromCache?.counts.get(plan.name) ?? 0)
        : rows.filter((r) => r.account === plan.name).length;
    count += n;
    counts.push({ account: plan.name, count: n, source: plan.use });
  }
  if (plans.length > 0 && counts.length === 0) {
    const first = partial[0]!.error;
    throw new MailError(first.reason, first.message, first.hint, first.detail);
  }
  const page = p.count_only ? [] : rows.slice(offset, offset + p.limit);
  const missing = page.filter((r) => r.snippet === undefined);
  if (p.snippets && missing.length) await addSnippets(ctx, missing);
  const next = !p.count_only && offset + p.limit < count ? encodeCursor(p, { o: offset + p.limit }) : null;
  return {
    rows: page.map(({ sortDate: _d, uid: _u, path: _p, ...row }) => row),
    count,
    next_cursor: next,
    source: overallSource(counts),
    account_counts: counts,
    partial,
  };
}

/**
 * Refuses an `in:` that names no folder of any searched account, as move refuses a destination that
 * does not exist: silently matching nothing would read as "no such mail". The cache's folder list
 * answers when it knows the name (no round trip); the server is asked only about a name the cache
 * does not know. Google accounts are left out (in: also names labels there), and when an account's
 * folders cannot be listed the search goes ahead: its partial entry says why.
 */
async function checkInFolders(
  ctx: ServiceContext,
  ast: QueryNode,
  names: string[],
  /** Where the folder lists it asks the server for are kept, for the server path to reuse. */
  listed: Map<string, ListResponse[]>,
): Promise<void> {
  let values = namedInValues(ast);
  const accounts = names.map((n) => accountOf(ctx, n));
  if (values.length === 0 || accounts.length === 0 || accounts.some((a) => a.provider === "google")) return;
  const known = (lists: FolderInfo[][]) => (v: string) =>
    lists.some((l) => l.some((f) => inMatchesFolder(v, f)));
  if (ctx.cache) {
    const stmt = ctx.cache.db.prepare("SELECT path, role FROM folders WHERE account = ?");
    const cached = accounts.map((a) => stmt.all(a.name) as FolderInfo[]);
    values = values.filter((v) => !known(cached)(v));
    if (values.length === 0) return;
  }
  // Nor when the lists the last searches took know it (a folder gone since: see withFolderList).
  const remembered = accounts.map((a) =>
    (rememberedLists.get(ctx.pool)?.get(a.name) ?? []).map((f) => ({ path: f.path, role: roleOf(f) })),
  );
  values = values.filter((v) => !known(remembered)(v));
  if (values.length === 0) return;
  let lists: FolderInfo[][];
  try {
    lists = await Promise.all(
      accounts.map((a) =>
        ctx.pool.read(a, async (c) => {
          const all = await listAll(c, false);
          listed.set(a.name, all);
          remember(ctx, a.name, all);
          return all.map((f) => ({ path: f.path, role: roleOf(f) }));
        }),
      ),
    );
  } catch {
    return;
  }
  const unknown = values.filter((v) => !known(lists)(v));
  if (unknown.length > 0) throw unknownFolders(unknown, accounts.length);
}

/** in: names no folder of the accounts searched. */
function unknownFolders(unknown: string[], accounts: number): MailError {
  return new MailError(
    "NOT_FOUND",
    `in: names no folder of the ${accounts === 1 ? "account" : "accounts"} searched; the name is in detail`,
    "list_folders gives the folder names; in: also takes inbox, sent, drafts, trash, junk, archive and anywhere.",
    unknown.map((v) => `folder: ${v}`).join("\n"),
  );
}

function overallSource(counts: SearchResult["account_counts"]): SearchResult["source"] {
  const kinds = new Set(counts.map((c) => c.source));
  return kinds.size > 1 ? "mixed" : kinds.has("cache") ? "cache" : "server";
}

async function cacheOnly(
  ctx: ServiceContext,
  call: Call,
  p: SearchParams,
  plans: Plan[],
  partial: SearchResult["partial"],
  cacheCursor: string | null,
): Promise<SearchResult> {
  const names = plans.map((x) => x.name);
  // Each account's bound query differs only in its account:/in: folding; bind per account and OR
  // them would lose the keyset order, so the unbound query runs with the accounts filter.
  const ast = plans.length === 1 ? plans[0]!.bound : parse(p.query);
  let res: ReturnType<typeof searchCache>;
  try {
    res = searchCache(ctx.cache!.db, ast, {
      accounts: names,
      allMailAccounts: googleAccounts(ctx),
      limit: p.limit,
      cursor: cacheCursor,
      threads: p.threads,
      snippets: p.snippets,
      countOnly: p.count_only,
    });
  } catch (err) {
    if (err instanceof CursorError) throw badCursor();
    throw err;
  }
  const counts = names.map((name) => ({
    account: name,
    count: res.account_counts[name] ?? 0,
    source: "cache" as const,
  }));
  for (const c of counts)
    auditRead(
      ctx,
      call,
      c.account,
      "allowed",
      `search (${p.query.length} chars): ${c.count} match(es) from cache`,
    );
  const hits = res.rows.map(rowFromCache);
  const missing = hits.filter((r) => r.snippet === undefined);
  if (p.snippets && missing.length) {
    // Rows whose body text is not stored (evicted, or older than a settled cache's reach) get their
    // snippet from the server; without the server they keep an empty one, as the cache has no text.
    await addSnippets(ctx, missing).catch(() => undefined);
    for (const r of missing) r.snippet ??= "";
  }
  return {
    rows: hits.map(({ sortDate: _d, uid: _u, path: _p, ...row }) => row),
    count: res.count,
    next_cursor: res.next_cursor ? encodeCursor(p, { c: res.next_cursor }) : null,
    source: "cache",
    account_counts: counts,
    partial,
  };
}
