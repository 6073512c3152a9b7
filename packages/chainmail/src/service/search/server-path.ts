/**
 * The server path: each folder's matches by IMAP SEARCH/SORT (one X-GM-RAW search of All Mail on
 * Gmail), a page's envelopes fetched while its folder is still selected, and snippets read from the
 * server. A folder the server refuses becomes a partial entry, not a failed search.
 */
import { envelopeAddress } from "../../cache/store.js";
import type { FetchMessageObject, ImapFlow, ListResponse } from "imapflow";
import { simpleParser } from "mailparser";
import { type KnownArrivals, cachedArrivals } from "../../cache/arrivals.js";
import type { AccountConfig } from "../../config.js";
import { type WireError, isMailError, partOfResult, toWireError } from "../../errors.js";
import { htmlToText, MAILPARSER_TEXT, parsedBodyText } from "../../imap/body.js";
import { displayName, listAll, roleOf } from "../../imap/folders.js";
import { splitFlags } from "../../imap/messages.js";
import { RawFetch, headerItems } from "../../imap/raw-fetch.js";
import { bindQuery, folderInScope, mentionsIn } from "../../query/analyze.js";
import type { QueryNode } from "../../query/ast.js";
import { compileToGmailRaw } from "../../query/imap.js";
import {
  type FolderMatches,
  imapFolderMatches,
  newestFirst,
  searchRefused,
  uidSet,
} from "../../query/imap-run.js";
import { attachmentsFromStructure } from "../../query/structure.js";
import { encodeRef } from "../../refs.js";
import { canonicalThreadKey, parseReferences } from "../../thread-key.js";
import { type ServiceContext, accountOf } from "../context.js";
import { headerIso, headerTime } from "../../header-date.js";
import { StaleFolderList } from "./folder-lists.js";
import type { Hit, SearchResult, Stream } from "./types.js";

/**
 * The error of one folder: a server's NO/BAD is a refusal with its text in detail, not INTERNAL. A
 * fault of ours is INTERNAL, its stack in the daemon's log (`log`), as for a call that fails whole.
 */
export function folderError(
  client: ImapFlow,
  err: unknown,
  what: string,
  log?: (line: string) => void,
): WireError {
  const e = err as { responseStatus?: string; responseText?: string; serverResponseCode?: string };
  if (!isMailError(err) && (e?.responseStatus === "NO" || e?.responseStatus === "BAD"))
    return toWireError(searchRefused(client, what, { text: e.responseText, code: e.serverResponseCode }));
  return partOfResult(err, log, `search: ${what} of a folder`);
}

/** Every folder of the account the query reads, with its exact number of matches (and their UIDs newest first unless only counted). */
export async function serverMatches(
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
  /** The cache's arrival times of a folder's UIDs (arrivalsFrom), which spare a folder's first search the server's SORT. */
  arrivals?: (path: string, uidValidity: string, refresh?: boolean) => Promise<KnownArrivals | null>,
  /** The daemon's log, for a folder's fault answered in `partial` (folderError). */
  log?: (line: string) => void,
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
              {
                countOnly,
                arrivals: arrivals && ((uidValidity, refresh) => arrivals(f.path, uidValidity, refresh)),
              },
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
        error: folderError(client, err, "SEARCH", log),
      });
    }
    if (found) await onFolder(found);
  }
  return streams;
}

/**
 * The arrival times the local cache holds for one folder's UIDs under a UIDVALIDITY (see
 * cache/arrivals.ts), or undefined without a cache. The cache never decides which messages match
 * or how many: it only orders the server's matches. A cache that cannot be read answers null (the
 * server sorts), never a failed search.
 */
export function arrivalsFrom(
  ctx: ServiceContext,
  account: string,
): ((path: string, uidValidity: string, refresh?: boolean) => Promise<KnownArrivals | null>) | undefined {
  const cache = ctx.cache;
  if (!cache) return undefined;
  return async (path, uidValidity, refresh) => {
    try {
      return await cachedArrivals(cache.db, account, path, uidValidity, refresh);
    } catch {
      return null;
    }
  };
}

/** What a page's row is built from: the fields RawFetch and imapflow's `fetch` both give. */
type PageMessage = Pick<
  FetchMessageObject,
  "uid" | "envelope" | "flags" | "size" | "internalDate" | "bodyStructure" | "headers" | "threadId"
>;

/** The search rows of these UIDs of one folder, in the order given; only their envelopes are fetched. */
export async function serverRows(
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
    const references = parseReferences(m.headers);
    const ref = encodeRef({ account: account.name, folder: stream.path, uidValidity, uid: m.uid });
    // (a Date header no clock can hold is none: the arrival time stands for it, as in the cache)
    const date = headerIso(env?.date) ?? headerIso(m.internalDate);
    // Rows are ordered by arrival (INTERNALDATE), as the server's SORT ARRIVAL and the cache order them.
    const arrived = headerTime(m.internalDate) ?? headerTime(env?.date) ?? 0;
    const from = env?.from?.[0];
    const { flags, keywords } = splitFlags(m.flags);
    byUid.set(m.uid, {
      ref,
      account: account.name,
      folder: stream.name,
      date,
      from: from ? { name: from.name ?? "", address: envelopeAddress(from.address) } : null,
      subject: env?.subject ?? "",
      flags,
      keywords,
      size: m.size ?? 0,
      has_attachment: attachmentsFromStructure(m.bodyStructure).length > 0,
      message_id: env?.messageId ?? null,
      thread_id: canonicalThreadKey({
        gmThreadId: m.threadId,
        references,
        // (the raw value, as the cache's stored key and get_message make it: ../../thread-key.ts)
        inReplyTo: env?.inReplyTo,
        messageId: env?.messageId,
        date: env?.date,
        fromAddress: envelopeAddress(from?.address),
        subject: env?.subject,
      }),
      sortDate: arrived,
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

export async function addSnippets(ctx: ServiceContext, rows: Hit[]): Promise<void> {
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
        // A message the parser refuses (mailsplit's bounds: more than 1,000 MIME parts, a header
        // over 1 MB) has no snippet: it failed the whole search before, so one stranger's crafted
        // message broke every search with snippets that found it.
        const parsed = await simpleParser(source, MAILPARSER_TEXT).catch(() => undefined);
        if (!parsed) continue;
        const text = parsedBodyText(parsed, htmlToText);
        r.snippet = text.replace(/\s+/g, " ").trim().slice(0, 200);
      }
    });
  }
}
