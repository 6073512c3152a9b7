/**
 * search. Today every account is answered by its IMAP server (the query module's imapSearchFolder);
 * `source: "cache"` is refused until the cache module lands. The cache hook: `answerFromCache` below
 * is where a fresh, complete cache answers an account instead (see README, "What is not done").
 */
import crypto from "node:crypto";
import type { ImapFlow } from "imapflow";
import { simpleParser } from "mailparser";
import type { AccountConfig } from "../config.js";
import { type ErrorBody, MailError, toErrorBody } from "../errors.js";
import { htmlToText } from "../imap/body.js";
import { displayName, listAll, roleOf } from "../imap/folders.js";
import { splitFlags, threadKey } from "../imap/messages.js";
import { folderInScope, mentionsIn, splitAccounts } from "../query/analyze.js";
import type { QueryNode } from "../query/ast.js";
import { QueryParseError } from "../query/errors.js";
import { imapSearchFolder } from "../query/imap-run.js";
import { parseQuery } from "../query/parser.js";
import { attachmentsFromStructure } from "../query/structure.js";
import { encodeRef } from "../refs.js";
import { type Call, type ServiceContext, accountOf, audit } from "./context.js";

export type SearchSource = "auto" | "cache" | "server";

export interface SearchParams {
  query: string;
  accounts: string[];
  limit: number;
  cursor: string | undefined;
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
  partial: Array<{ account: string; folder?: string; error: ErrorBody }>;
}

/** Per account, at most this many matches are sorted and paged on the server path. */
export const SERVER_MAX_MATCHES = 5000;

function cursorKey(p: SearchParams): string {
  const basis = JSON.stringify([p.query, [...p.accounts].sort(), p.threads, p.source]);
  return crypto.createHash("sha256").update(basis).digest("base64url").slice(0, 16);
}

export function encodeCursor(p: SearchParams, offset: number): string {
  return `c1.${Buffer.from(JSON.stringify({ k: cursorKey(p), o: offset })).toString("base64url")}`;
}

export function decodeCursor(p: SearchParams): number {
  if (!p.cursor) return 0;
  const bad = new MailError(
    "INVALID_ARGUMENT",
    "cursor is not a next_cursor of this search",
    "Pass next_cursor unchanged, with the same query and arguments.",
  );
  if (!p.cursor.startsWith("c1.")) throw bad;
  try {
    const v = JSON.parse(Buffer.from(p.cursor.slice(3), "base64url").toString("utf8")) as {
      k?: unknown;
      o?: unknown;
    };
    if (v.k !== cursorKey(p) || typeof v.o !== "number" || !Number.isInteger(v.o) || v.o < 0) throw bad;
    return v.o;
  } catch {
    throw bad;
  }
}

function parse(query: string): QueryNode {
  try {
    return parseQuery(query);
  } catch (err) {
    if (err instanceof QueryParseError) throw new MailError("INVALID_ARGUMENT", `query: ${err.message}`);
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
  for (const f of scope) {
    try {
      const uids = await imapSearchFolder(client, ast, {
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
          thread_id: threadKey(env?.messageId ?? null, inReplyTo, references, ref),
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
        error: toErrorBody(err),
      });
    }
  }
  return hits;
}

async function addSnippets(ctx: ServiceContext, rows: Hit[]): Promise<void> {
  const byAccount = new Map<string, Hit[]>();
  for (const r of rows) byAccount.set(r.account, [...(byAccount.get(r.account) ?? []), r]);
  for (const [name, list] of byAccount) {
    const account = accountOf(ctx, name);
    await ctx.pool.use(account, async (client) => {
      for (const r of list) {
        await client.mailboxOpen(r.path, { readOnly: true });
        const m = await client.fetchOne(
          String(r.uid),
          { uid: true, source: { maxLength: 256 * 1024 } },
          { uid: true },
        );
        if (!m || !m.source) continue;
        const parsed = await simpleParser(m.source);
        let text = parsed.text ?? "";
        if (!text.trim() && typeof parsed.html === "string") text = htmlToText(parsed.html);
        r.snippet = text.replace(/\s+/g, " ").trim().slice(0, 200);
      }
    });
  }
}

export async function search(ctx: ServiceContext, call: Call, p: SearchParams): Promise<SearchResult> {
  const ast = parse(p.query);
  const offset = decodeCursor(p);
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
  if (p.source === "cache") {
    throw new MailError(
      "UNSUPPORTED",
      "the local cache is not available in this build",
      'Use source "auto" or "server".',
    );
  }
  const partial: SearchResult["partial"] = [];
  const all: Hit[] = [];
  const counts: SearchResult["account_counts"] = [];
  await Promise.all(
    [...perAccount].map(async ([name, bound]) => {
      const account = accountOf(ctx, name);
      try {
        const hits = await ctx.pool.use(account, (c) => serverSearch(c, account, bound, partial));
        all.push(...hits);
        audit(
          ctx,
          call,
          "search",
          name,
          "allowed",
          `search (${p.query.length} chars): ${hits.length} match(es) from server`,
        );
      } catch (err) {
        partial.push({ account: name, error: toErrorBody(err) });
        audit(ctx, call, "search", name, "error", `search: ${toErrorBody(err).reason}`);
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
  for (const name of perAccount.keys()) {
    if (partial.some((x) => x.account === name && !x.folder)) continue;
    counts.push({ account: name, count: rows.filter((r) => r.account === name).length, source: "server" });
  }
  if (perAccount.size > 0 && counts.length === 0) {
    const first = partial[0]!.error;
    throw new MailError(first.reason, first.message, first.hint);
  }
  const count = rows.length;
  const page = p.count_only ? [] : rows.slice(offset, offset + p.limit);
  if (p.snippets && page.length) await addSnippets(ctx, page);
  const next = !p.count_only && offset + p.limit < count ? encodeCursor(p, offset + p.limit) : null;
  return {
    rows: page.map(({ sortDate: _d, uid: _u, path: _p, ...row }) => row),
    count,
    next_cursor: next,
    source: "server",
    account_counts: counts,
    partial,
  };
}
