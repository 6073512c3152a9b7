/**
 * Which folders a server-path search reads: the folder lists remembered per daemon (so `in:Bulk`
 * does not LIST every time), the fresh LIST when a remembered one turns stale, and the refusal of
 * an `in:` that names no folder.
 */
import type { ImapFlow, ListResponse } from "imapflow";
import type { AccountConfig } from "../../config.js";
import { MailError } from "../../errors.js";
import { listAll, roleOf } from "../../imap/folders.js";
import {
  bindQuery,
  type FolderInfo,
  IN_ANYWHERE,
  IN_ROLE_ALIASES,
  inMatchesFolder,
} from "../../query/analyze.js";
import { leaves, type QueryNode } from "../../query/ast.js";
import { type ServiceContext, accountOf } from "../context.js";

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
export class StaleFolderList extends Error {}

/**
 * Runs one account's server-path search (`attempt`) on the right folder list: the one checkInFolders
 * already asked for, else the remembered one where it can answer (rememberedFor), else a fresh LIST.
 * When a remembered folder turns out gone, the fresh list decides, and an `in:` name it lacks is
 * refused as checkInFolders refuses it.
 */
export async function withFolderList<T>(
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

/**
 * Refuses an `in:` that names no folder of any searched account, as move refuses a destination that
 * does not exist: silently matching nothing would read as "no such mail". The cache's folder list
 * answers when it knows the name (no round trip); the server is asked only about a name the cache
 * does not know. Google accounts are left out (in: also names labels there), and when an account's
 * folders cannot be listed the search goes ahead: its partial entry says why.
 */
export async function checkInFolders(
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
