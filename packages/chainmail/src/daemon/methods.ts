/**
 * One handler per operation (the declarations in ./operations say what each takes and returns), and
 * the dispatch that checks params, names the audit action and keeps the cache honest.
 */
import {
  createDraft,
  deleteDraft,
  forward,
  reply,
  judgeCompose,
  sendDraft,
  sendEmail,
  sendRawMessage,
  updateDraft,
} from "../compose/service.js";
import { MailError } from "../errors.js";
import { confirmSend, listOutbox, releaseSend } from "../outbox/service.js";
import { confirmPolicy, policyStatus } from "../policy/service.js";
import { beginUpload, finishUpload, spoolOf } from "../service/uploads.js";
import { decodeRef } from "../refs.js";
import { listAccounts, testAccount } from "../service/accounts.js";
import {
  accountsOf,
  audit,
  type Call,
  cacheOf,
  configErrorField,
  type ServiceContext,
} from "../service/context.js";
import { adminStatus } from "../service/admin.js";
import { beginSignIn, waitSignIn } from "../service/auth.js";
import { evictCache, rebuildCache } from "../service/cache-admin.js";
import { createFolderCall, deleteFolderCall, listFolders, renameFolderCall } from "../service/folders.js";
import { archive, expunge, move, setFlags, setLabels, trash } from "../service/organize.js";
import { downloadAttachment, getMessages, getThread, saveRaw } from "../service/reading.js";
import { ITEM_HANDLERS } from "./item-handlers.js";
import { ackEvents, deleteWatchGroup, readEvents, watchGroups, watchStatus } from "../service/events.js";
import { search } from "../service/search/index.js";
import type { ClientKind } from "../store/state.js";
import {
  type CheckedParamsOf,
  type Method,
  OPERATIONS,
  parseParams,
  type ResultOf,
} from "./operations/index.js";
import { PROTOCOL_VERSION } from "./protocol.js";

export type Handler<M extends Method> = (
  ctx: ServiceContext,
  call: Call,
  p: CheckedParamsOf<M>,
) => ResultOf<M> | Promise<ResultOf<M>>;

export const HANDLERS: { [M in Method]: Handler<M> } = {
  ping: () => ({ ok: true, protocol: PROTOCOL_VERSION, pid: process.pid }),
  "accounts.list": (ctx, call) => ({ ...listAccounts(ctx, call), ...configErrorField(ctx) }),
  "account.test": (ctx, call, p) => testAccount(ctx, call, p.account),
  "folders.list": (ctx, call, p) => listFolders(ctx, call, p.accounts),
  "folders.create": (ctx, call, p) => createFolderCall(ctx, call, p.account, p.name),
  "folders.rename": (ctx, call, p) => renameFolderCall(ctx, call, p.account, p.from, p.to),
  "folders.delete": (ctx, call, p) => deleteFolderCall(ctx, call, p.account, p.name, p.force),
  search: (ctx, call, p) => search(ctx, call, p),
  "messages.get": (ctx, call, p) => getMessages(ctx, call, p.refs, p.full),
  "thread.get": (ctx, call, p) => getThread(ctx, call, p.ref, p.full),
  "attachment.download": (ctx, call, p) => downloadAttachment(ctx, call, p.ref, p.part, p.dir),
  "raw.save": (ctx, call, p) => saveRaw(ctx, call, p.ref, p.dir),
  move: (ctx, call, p) => move(ctx, call, p.refs, p.folder, "move"),
  copy: (ctx, call, p) => move(ctx, call, p.refs, p.folder, "copy"),
  archive: (ctx, call, p) => archive(ctx, call, p.refs),
  trash: (ctx, call, p) => trash(ctx, call, p.refs),
  expunge: (ctx, call, p) => expunge(ctx, call, p.refs),
  flags: (ctx, call, p) => setFlags(ctx, call, p.refs, p.add, p.remove),
  labels: (ctx, call, p) => setLabels(ctx, call, p.refs, p.add, p.remove),
  "cache.status": (ctx, _call, p) => cacheOf(ctx).status(accountsOf(ctx, p.accounts).map((a) => a.name)),
  "cache.sync": async (ctx, call, p) => {
    const cache = cacheOf(ctx);
    const reports = await Promise.all(accountsOf(ctx, p.accounts).map((a) => cache.sync(a)));
    for (const r of reports) {
      const summary = r.ok
        ? `${r.folders} folder(s), +${r.added} -${r.removed}, ${r.bodies} bodies`
        : `sync: ${r.error?.reason}`;
      audit(ctx, call, r.account, r.ok ? "allowed" : "error", summary);
    }
    return { accounts: reports };
  },
  "cache.rebuild": (ctx, call, p) => rebuildCache(ctx, call, p.accounts),
  "cache.evict": (ctx, call, p) => evictCache(ctx, call, p),
  "watch.read": (ctx, call, p) => readEvents(ctx, call, p),
  "watch.ack": (ctx, call, p) => ackEvents(ctx, call, p.group, p.cursor),
  "watch.status": (ctx) => watchStatus(ctx),
  "watch.groups": (ctx) => watchGroups(ctx),
  "watch.groups.delete": (ctx, call, p) => deleteWatchGroup(ctx, call, p.group),
  send: (ctx, call, p) => sendEmail(ctx, call, p),
  reply: (ctx, call, p) => reply(ctx, call, p),
  forward: (ctx, call, p) => forward(ctx, call, p),
  "draft.create": (ctx, call, p) => createDraft(ctx, call, p),
  "draft.update": (ctx, call, p) => updateDraft(ctx, call, p),
  "draft.send": (ctx, call, p) => sendDraft(ctx, call, p),
  "send.judge": (ctx, call, p) => judgeCompose(ctx, call, p),
  "draft.delete": (ctx, call, p) => deleteDraft(ctx, call, p.ref),
  "send.raw": (ctx, call, p) => sendRawMessage(ctx, call, p),
  "outbox.list": (ctx, call, p) => listOutbox(ctx, call, p.status),
  "outbox.confirm": (ctx, call, p) => confirmSend(ctx, call, p.key),
  "outbox.release": (ctx, call, p) => releaseSend(ctx, call, p.key),
  "policy.status": (ctx) => ({ ...policyStatus(ctx), ...configErrorField(ctx) }),
  "admin.status": (ctx, call) => adminStatus(ctx, call),
  "auth.begin": (ctx, call, p) => beginSignIn(ctx, call, p.account),
  "auth.wait": (ctx, call, p) => waitSignIn(ctx, call, p.flow_id, p.timeout_seconds),
  "policy.confirm": (ctx, call, p) => confirmPolicy(ctx, call, p.account, p.digest),
  "upload.begin": (ctx, call, p) => beginUpload(ctx, call, p.path, p.size),
  "upload.chunk": (ctx, _call, p) => spoolOf(ctx).chunk(p.upload_id, p.index, p.data),
  "upload.finish": (ctx, call, p) => finishUpload(ctx, call, p.upload_id),
  "audit.read": (ctx, _call, p) => ({
    rows: ctx.state.readAudit({
      ...(p.action ? { action: p.action } : {}),
      ...(p.since ? { since: new Date(p.since).toISOString() } : {}),
      limit: p.limit,
    }),
  }),
  ...ITEM_HANDLERS,
};

/**
 * The accounts a call changes: its `account`, and the account of each ref it names (`refs`, or the
 * one `ref` of reply, forward and the draft operations, whose drafts land in that account).
 */
function touchedAccounts(p: Record<string, unknown>): string[] {
  const out = new Set<string>();
  if (typeof p["account"] === "string") out.add(p["account"]);
  const refs = [...(Array.isArray(p["refs"]) ? p["refs"] : []), p["ref"]];
  for (const ref of refs) {
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
  caller: { client: ClientKind } & Pick<Call, "signal" | "afterReply">,
  method: string,
  params: unknown,
): Promise<unknown> {
  if (!Object.hasOwn(OPERATIONS, method))
    throw new MailError("NOT_FOUND", `unknown method ${JSON.stringify(method.slice(0, 64))}`);
  const name = method as Method;
  const op = OPERATIONS[name];
  const p = parseParams(op.params, params);
  const call: Call = {
    client: caller.client,
    action: op.audit ?? name,
    signal: caller.signal,
    afterReply: caller.afterReply,
  };
  const run = () => (HANDLERS[name] as Handler<Method>)(ctx, call, p as CheckedParamsOf<Method>);
  if (!op.mutates || !ctx.cache) return run();
  // Marked before (no search during the call trusts the cache) and after (a pass that began during
  // the call may have missed its change).
  const touched = touchedAccounts(p);
  for (const a of touched) ctx.cache.markDirty(a);
  try {
    return await run();
  } finally {
    for (const a of touched) ctx.cache?.markDirty(a);
  }
}
