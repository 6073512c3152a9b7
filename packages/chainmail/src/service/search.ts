/**
 * search. Per account: `server` asks the IMAP server (the query module's imapSearchFolder); `cache`
 * answers from cache.db whatever it holds (missing folders in `partial`); `auto` uses the cache when
 * cacheCanAnswerQuery says it is complete and fresh for the query, else the server. When every
 * account is on the cache, one keyset-paged cache query answers (the fast path); otherwise rows of
 * both kinds are merged newest first and paged by offset.
 */
import crypto from "node:crypto";
import type { ImapFlow } from "imapflow";
import { simpleParser } from "mailparser";
import type { AccountConfig } from "../config.js";
import { type WireError, MailError, toWireError } from "../errors.js";
import { htmlToText } from "../imap/body.js";
import type { SearchSource } from "../limits.js";
import { displayName, listAll, roleOf } from "../imap/folders.js";
import { splitFlags } from "../imap/messages.js";
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
import { FIELDS } from "../query/lexer.js";
import { imapSearchFolder } from "../query/imap-run.js";
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

/** Per account, at most this many matches are sorted and paged on the server path. */
export const SERVER_MAX_MATCHES = 5000;

function cursorKey(p: SearchParams): string {
  const basis = JSON.stringify([p.query, [...p.accounts].sort(), p.threads, p.source]);
  return crypto.createHash("sha256").update(basis).digest("base64url").slice(0, 16);
}

type CursorPos = { o: number } | { c: string };

/** A cursor holds the query's hash and either an offset (server or mixed paging) or the cache's keyset cursor. */
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

export function decodeCursor(
  p: SearchParams,
): { kind: "none"; cache: null } | { kind: "offset"; offset: number } | { kind: "cache"; cache: string } {
  if (!p.cursor) return { kind: "none", cache: null };
  if (!p.cursor.startsWith("c1.")) throw badCursor();
  let v: { k?: unknown; o?: unknown; c?: unknown };
  try {
    v = JSON.parse(Buffer.from(p.cursor.slice(3), "base64url").toString("utf8")) as typeof v;
  } catch {
    throw badCursor();
  }
  if (typeof v !== "object" || v === null || v.k !== cursorKey(p)) throw badCursor();
  if (typeof v.o === "number" && Number.isInteger(v.o) && v.o >= 0) return { kind: "offset", offset: v.o };
  if (typeof v.c === "string" && v.c.length > 0) return { kind: "cache", cache: v.c };
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

async function serverSearch(
  client: ImapFlow,
  account: AccountConfig,
  ast: QueryNode,
  partial: SearchResult["partial"],
): Promise<Hit[]> {
  const now = new Date();
  const folders = (await listAll(client, false)).filter(
    (f) => !f.flags.has("\\Noselect") && !f.flags.has("\\NonExistent"),
  );
  let scope = folders.filter((f) => folderInScope(ast, { path: f.path, role: roleOf(f) }));
  // On Gmail every message is in All Mail: searching it alone avoids one row per label.
  const all = folders.find((f) => roleOf(f) === "all");
  if (account.provider === "google" && all && !mentionsIn(ast)) scope = [all];
  const hits: Hit[] = [];
  const gmail = account.provider === "google" && client.capabilities.has("X-GM-EXT-1");
  for (const f of scope) {
    try {
      const uids =
        gmail && roleOf(f) === "all"
          ? await gmailSearch(client, f.path, ast, account.name)
          : await imapSearchFolder(client, ast, {
              folder: { path: f.path, role: roleOf(f) },
              account: account.name,
              now,
            });
      if (uids.length === 0) continue;
      const take = uids.slice(-SERVER_MAX_MATCHES);
      if (take.length < uids.length) {
        partial.push({
          account: account.name,
          folder: displayName(f.path, f.delimiter),
          error: {
            reason: "INTERNAL",
            message: `only the newest ${SERVER_MAX_MATCHES} matches of this folder were ranked`,
            hint: "Narrow the query.",
          },
        });
      }
      const box = await client.mailboxOpen(f.path, { readOnly: true });
      const uidValidity = Number(box.uidValidity);
      const fetched = await client.fetchAll(
        take,
        {
          uid: true,
          envelope: true,
          flags: true,
          size: true,
          internalDate: true,
          bodyStructure: true,
          headers: ["references", "in-reply-to"],
          ...(gmail ? { threadId: true } : {}),
        },
        { uid: true },
      );
      for (const m of fetched) {
        const env = m.envelope;
        const hdr = m.headers?.toString("utf8") ?? "";
        const refsLine = /^references:\s*([\s\S]*?)(?=^\S|$(?![\s\S]))/im.exec(hdr)?.[1] ?? "";
        const references = refsLine.match(/<[^>]+>/g) ?? [];
        const inReplyTo = env?.inReplyTo?.match(/<[^>]+>/)?.[0] ?? null;
        const ref = encodeRef({ account: account.name, folder: f.path, uidValidity, uid: m.uid });
        const date = env?.date ?? m.internalDate;
        const sortDate = date ? new Date(date).getTime() : 0;
        const from = env?.from?.[0];
        const { flags, keywords } = splitFlags(m.flags);
        hits.push({
          ref,
          account: account.name,
          folder: displayName(f.path, f.delimiter),
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
          sortDate,
          uid: m.uid,
          path: f.path,
        });
      }
    } catch (err) {
      if (!client.usable) throw err;
      partial.push({
        account: account.name,
        folder: displayName(f.path, f.delimiter),
        error: toWireError(err),
      });
    }
  }
  return hits;
}

/** On Gmail, All Mail answers the whole query in one X-GM-RAW search (Gmail's own syntax). */
async function gmailSearch(
  client: ImapFlow,
  path: string,
  ast: QueryNode,
  account: string,
): Promise<number[]> {
  const raw = compileToGmailRaw(bindQuery(ast, { account }));
  if (raw === null) return [];
  await client.mailboxOpen(path, { readOnly: true });
  const uids = await client.search(raw === "" ? { all: true } : { gmraw: raw }, { uid: true });
  return (uids || []).sort((a, b) => a - b);
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
    ...(r.snippet !== undefined ? { snippet: r.snippet ?? "" } : {}),
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
  await checkInFolders(ctx, ast, [...perAccount.keys()]);
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
  if (onServer.length === 0 && onCache.length > 0 && cursor.kind !== "offset") {
    return cacheOnly(ctx, call, p, onCache, partial, cursor.cache);
  }
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
        // Each attempt collects its own partial entries: a read may run twice after a reconnect.
        const got = await ctx.pool.read(account, async (c) => {
          const mine: SearchResult["partial"] = [];
          return { hits: await serverSearch(c, account, bound, mine), mine };
        });
        const hits = got.hits;
        partial.push(...got.mine);
        all.push(...hits);
        auditRead(
          ctx,
          call,
          name,
          "allowed",
          `search (${p.query.length} chars): ${hits.length} match(es) from server`,
        );
      } catch (err) {
        partial.push({ account: name, error: toWireError(err) });
        auditRead(ctx, call, name, "error", `search: ${toWireError(err).reason}`);
      }
    }),
  );
  all.sort((a, b) => b.sortDate - a.sortDate || a.account.localeCompare(b.account) || b.uid - a.uid);
  let rows = all;
  if (p.threads) {
    const seen = new Set<string>();
    rows = all.filter((r) => {
      const key = `${r.account}\u0000${r.thread_id}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
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
  if (perAccount.size > 0 && counts.length === 0) {
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
async function checkInFolders(ctx: ServiceContext, ast: QueryNode, names: string[]): Promise<void> {
  let values = [
    ...new Set(
      leaves(ast)
        .filter((l) => l.kind === "in")
        .map((l) => l.value)
        .filter((v) => !IN_ANYWHERE.has(v.toLowerCase()) && IN_ROLE_ALIASES[v.toLowerCase()] === undefined),
    ),
  ];
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
  let lists: FolderInfo[][];
  try {
    lists = await Promise.all(
      accounts.map((a) =>
        ctx.pool.read(a, async (c) =>
          (await listAll(c, false)).map((f) => ({ path: f.path, role: roleOf(f) })),
        ),
      ),
    );
  } catch {
    return;
  }
  const unknown = values.filter((v) => !known(lists)(v));
  if (unknown.length > 0)
    throw new MailError(
      "NOT_FOUND",
      `in: names no folder of the ${accounts.length === 1 ? "account" : "accounts"} searched; the name is in detail`,
      "list_folders gives the folder names; in: also takes inbox, sent, drafts, trash, junk, archive and anywhere.",
      unknown.map((v) => `folder: ${v}`).join("\n"),
    );
}

function overallSource(counts: SearchResult["account_counts"]): SearchResult["source"] {
  const kinds = new Set(counts.map((c) => c.source));
  return kinds.size > 1 ? "mixed" : kinds.has("cache") ? "cache" : "server";
}

function cacheOnly(
  ctx: ServiceContext,
  call: Call,
  p: SearchParams,
  plans: Plan[],
  partial: SearchResult["partial"],
  cacheCursor: string | null,
): SearchResult {
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
  return {
    rows: res.rows.map((r) => {
      const { sortDate: _d, uid: _u, path: _p, ...row } = rowFromCache(r);
      return row;
    }),
    count: res.count,
    next_cursor: res.next_cursor ? encodeCursor(p, { c: res.next_cursor }) : null,
    source: "cache",
    account_counts: counts,
    partial,
  };
}
