/** The daemon's method table: checks params, then calls the service. */
import { MailError } from "../errors.js";
import { decodeRef } from "../refs.js";
import { listAccounts, testAccount } from "../service/accounts.js";
import { accountsOf, audit, type Call, cacheOf, type ServiceContext } from "../service/context.js";
import { createFolderCall, deleteFolderCall, listFolders, renameFolderCall } from "../service/folders.js";
import {
  archive,
  expunge,
  MAX_BATCH,
  MAX_LABEL_LENGTH,
  move,
  setFlags,
  setLabels,
  trash,
} from "../service/organize.js";
import { downloadAttachment, getMessages, getThread, saveRaw } from "../service/reading.js";
import { search, type SearchSource } from "../service/search.js";
import { asParams, bool, int, type Params, str, strArray } from "./params.js";
import { type Method, PROTOCOL_VERSION } from "./protocol.js";

type Handler = (ctx: ServiceContext, call: Call, p: Params) => unknown | Promise<unknown>;

const refsOf = (p: Params) => strArray(p, "refs", { min: 1, max: MAX_BATCH, itemMax: 2048 });

export const HANDLERS: Record<Method, Handler> = {
  ping: () => ({ ok: true, protocol: PROTOCOL_VERSION, pid: process.pid }),
  "accounts.list": (ctx, call) => listAccounts(ctx, call),
  "account.test": (ctx, call, p) => testAccount(ctx, call, str(p, "account", { required: true, max: 64 })),
  "folders.list": (ctx, call, p) =>
    listFolders(ctx, call, strArray(p, "accounts", { max: 100, itemMax: 64 })),
  "folders.create": (ctx, call, p) =>
    createFolderCall(
      ctx,
      call,
      str(p, "account", { required: true, max: 64 }),
      str(p, "name", { required: true, max: 500 }),
    ),
  "folders.rename": (ctx, call, p) =>
    renameFolderCall(
      ctx,
      call,
      str(p, "account", { required: true, max: 64 }),
      str(p, "from", { required: true, max: 500 }),
      str(p, "to", { required: true, max: 500 }),
    ),
  "folders.delete": (ctx, call, p) =>
    deleteFolderCall(
      ctx,
      call,
      str(p, "account", { required: true, max: 64 }),
      str(p, "name", { required: true, max: 500 }),
      bool(p, "force"),
    ),
  search: (ctx, call, p) => {
    const source = str(p, "source") ?? "auto";
    if (source !== "auto" && source !== "cache" && source !== "server") {
      throw new MailError("INVALID_ARGUMENT", 'source must be "auto", "cache" or "server"');
    }
    return search(ctx, call, {
      query: str(p, "query", { max: 2000 }) ?? "",
      accounts: strArray(p, "accounts", { max: 100, itemMax: 64 }),
      limit: int(p, "limit", 1, 200, 25),
      cursor: str(p, "cursor", { max: 1000 }),
      count_only: bool(p, "count_only"),
      snippets: bool(p, "snippets"),
      threads: bool(p, "threads"),
      source: source as SearchSource,
    });
  },
  "messages.get": (ctx, call, p) =>
    getMessages(ctx, call, strArray(p, "refs", { min: 1, max: 50, itemMax: 2048 }), bool(p, "full")),
  "thread.get": (ctx, call, p) =>
    getThread(ctx, call, str(p, "ref", { required: true, max: 2048 }), bool(p, "full")),
  "attachment.download": (ctx, call, p) =>
    downloadAttachment(
      ctx,
      call,
      str(p, "ref", { required: true, max: 2048 }),
      str(p, "part", { required: true, max: 64 }),
      str(p, "dir", { max: 4096 }),
    ),
  "raw.save": (ctx, call, p) =>
    saveRaw(ctx, call, str(p, "ref", { required: true, max: 2048 }), str(p, "dir", { max: 4096 })),
  move: (ctx, call, p) => move(ctx, call, refsOf(p), str(p, "folder", { required: true, max: 500 }), "move"),
  copy: (ctx, call, p) => move(ctx, call, refsOf(p), str(p, "folder", { required: true, max: 500 }), "copy"),
  archive: (ctx, call, p) => archive(ctx, call, refsOf(p)),
  trash: (ctx, call, p) => trash(ctx, call, refsOf(p)),
  expunge: (ctx, call, p) => expunge(ctx, call, refsOf(p)),
  flags: (ctx, call, p) =>
    setFlags(
      ctx,
      call,
      refsOf(p),
      strArray(p, "add", { max: 50, itemMax: 200 }),
      strArray(p, "remove", { max: 50, itemMax: 200 }),
    ),
  labels: (ctx, call, p) =>
    setLabels(
      ctx,
      call,
      refsOf(p),
      strArray(p, "add", { max: 50, itemMax: MAX_LABEL_LENGTH }),
      strArray(p, "remove", { max: 50, itemMax: MAX_LABEL_LENGTH }),
    ),
  "cache.status": (ctx, _call, p) => {
    const names = accountsOf(ctx, strArray(p, "accounts", { max: 100, itemMax: 64 })).map((a) => a.name);
    return cacheOf(ctx).status(names);
  },
  "cache.sync": async (ctx, call, p) => {
    const cache = cacheOf(ctx);
    const accounts = accountsOf(ctx, strArray(p, "accounts", { max: 100, itemMax: 64 }));
    const reports = await Promise.all(accounts.map((a) => cache.sync(a)));
    for (const r of reports) {
      audit(
        ctx,
        call,
        "cache.sync",
        r.account,
        r.ok ? "allowed" : "error",
        r.ok
          ? `${r.folders} folder(s), +${r.added} -${r.removed}, ${r.bodies} bodies`
          : `sync: ${r.error?.reason}`,
      );
    }
    return { accounts: reports };
  },
  "audit.read": (ctx, _call, p) => {
    const since = str(p, "since", { max: 64 });
    if (since && Number.isNaN(Date.parse(since)))
      throw new MailError("INVALID_ARGUMENT", "since must be an RFC 3339 time");
    return {
      rows: ctx.state.readAudit({
        ...(str(p, "action", { max: 64 }) ? { action: str(p, "action", { max: 64 })! } : {}),
        ...(since ? { since: new Date(since).toISOString() } : {}),
        limit: int(p, "limit", 1, 10000, 1000),
      }),
    };
  },
};

/** Methods that change mail or folders: the cache of their accounts is out of date afterwards. */
const MUTATING = new Set<string>([
  "folders.create",
  "folders.rename",
  "folders.delete",
  "move",
  "copy",
  "archive",
  "trash",
  "expunge",
  "flags",
  "labels",
]);

function touchedAccounts(p: Params): string[] {
  const out = new Set<string>();
  if (typeof p["account"] === "string") out.add(p["account"]);
  for (const ref of Array.isArray(p["refs"]) ? p["refs"] : []) {
    try {
      if (typeof ref === "string") out.add(decodeRef(ref).account);
    } catch {
      // a bad ref is refused by the method itself
    }
  }
  return [...out];
}

export async function dispatch(
  ctx: ServiceContext,
  call: Call,
  method: string,
  params: unknown,
): Promise<unknown> {
  if (!Object.hasOwn(HANDLERS, method))
    throw new MailError("NOT_FOUND", `unknown method ${JSON.stringify(method.slice(0, 64))}`);
  const p = asParams(params);
  if (!MUTATING.has(method) || !ctx.cache) return HANDLERS[method as Method](ctx, call, p);
  // Marked before (no search during the call trusts the cache) and after (a pass that began during
  // the call may have missed its change).
  const touched = touchedAccounts(p);
  for (const a of touched) ctx.cache.markDirty(a);
  try {
    return await HANDLERS[method as Method](ctx, call, p);
  } finally {
    for (const a of touched) ctx.cache?.markDirty(a);
  }
}
