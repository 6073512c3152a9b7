import type { ImapFlow } from "imapflow";
import type { AccountConfig } from "../config.js";
import { type WireError, MailError, toWireError, partOfResult } from "../errors.js";
import { MESSAGE_GONE_HINT } from "../imap/refusal.js";
import {
  appendPart,
  checkDir,
  discardPart,
  openPart,
  type PartFile,
  placePart,
  sanitizeFilename,
  saveForbidden,
} from "../files/save.js";
import { downloadPart, downloadRaw, fetchMessages, type Message } from "../imap/messages.js";
import { fetchMembers, readThread, type ThreadResult } from "../imap/thread.js";
import { threadMessages, threadResult } from "../imap/thread-plan.js";
import { decodeRef, type MessageRef } from "../refs.js";
import { readCached } from "./cached-read.js";
import { cachedThreadPlan } from "./cached-thread.js";
import { type Call, type ServiceContext, accountOf, audit, auditRead } from "./context.js";

export interface GetMessagesResult {
  messages: Message[];
  errors: Array<{ ref: string; error: WireError }>;
  source: "server" | "cache" | "mixed";
}

function overall(messages: Message[]): "server" | "cache" | "mixed" {
  const kinds = new Set(messages.map((m) => m.source));
  return kinds.size > 1 ? "mixed" : kinds.has("cache") ? "cache" : "server";
}

export async function getMessages(
  ctx: ServiceContext,
  call: Call,
  refs: string[],
  full: boolean,
): Promise<GetMessagesResult> {
  const errors: GetMessagesResult["errors"] = [];
  const decoded: Array<{ ref: string; r: MessageRef }> = [];
  for (const ref of refs) {
    try {
      decoded.push({ ref, r: decodeRef(ref) });
    } catch (err) {
      errors.push({ ref, error: toWireError(err) });
    }
  }
  const byAccount = new Map<string, Array<{ ref: string; r: MessageRef }>>();
  for (const d of decoded) byAccount.set(d.r.account, [...(byAccount.get(d.r.account) ?? []), d]);
  const found = new Map<string, Message>();
  for (const [name, list] of byAccount) {
    try {
      const account = accountOf(ctx, name);
      const byFolder = new Map<string, Array<{ ref: string; r: MessageRef }>>();
      const google = account.provider === "google";
      for (const d of list) {
        const m = readCached(ctx, d.r, { full, google });
        if (m) {
          found.set(d.ref, { ...m, ref: d.ref });
          continue;
        }
        const key = `${d.r.folder}\u0000${d.r.uidValidity}`;
        byFolder.set(key, [...(byFolder.get(key) ?? []), d]);
      }
      if (byFolder.size > 0)
        await ctx.pool.read(account, async (client) => {
          for (const group of byFolder.values()) {
            const first = group[0]!.r;
            try {
              const failures = new Map<number, MailError>();
              const got = await fetchMessages(
                client,
                name,
                first.folder,
                first.uidValidity,
                group.map((g) => g.r.uid),
                { full, bodyLimit: ctx.config.daemon.body_limit },
                account.provider === "google",
                failures,
              );
              for (const g of group) {
                const m = got.get(g.r.uid);
                const failed = failures.get(g.r.uid);
                if (m) {
                  found.set(g.ref, { ...m, ref: g.ref });
                } else if (failed) errors.push({ ref: g.ref, error: toWireError(failed) });
                else
                  errors.push({
                    ref: g.ref,
                    error: toWireError(
                      new MailError(
                        "NOT_FOUND",
                        "the message is no longer in its folder on the server",
                        MESSAGE_GONE_HINT,
                      ),
                    ),
                  });
              }
            } catch (err) {
              if (!client.usable) throw err;
              for (const g of group)
                errors.push({ ref: g.ref, error: partOfResult(err, ctx.log, "get_message") });
            }
          }
        });
    } catch (err) {
      for (const d of list)
        if (!found.has(d.ref)) errors.push({ ref: d.ref, error: partOfResult(err, ctx.log, "get_message") });
    }
    // Counted from what was found, since a read that ran twice after a reconnect sets refs twice.
    const ok = list.filter((d) => found.has(d.ref)).length;
    auditRead(ctx, call, name, ok > 0 ? "allowed" : "error", `${list.length} ref(s): ${ok} read`);
  }
  // Keep the caller's order, and each failed ref once.
  const messages = refs.filter((r, i) => refs.indexOf(r) === i && found.has(r)).map((r) => found.get(r)!);
  const seen = new Set<string>();
  const uniqueErrors = errors
    .filter((e) => !found.has(e.ref) && !seen.has(e.ref) && seen.add(e.ref))
    .sort((a, b) => refs.indexOf(a.ref) - refs.indexOf(b.ref));
  if (messages.length === 0 && uniqueErrors.length > 0) {
    const first = uniqueErrors[0]!.error;
    throw new MailError(first.reason, first.message, first.hint, first.detail);
  }
  return { messages, errors: uniqueErrors, source: overall(messages) };
}

export async function getThread(
  ctx: ServiceContext,
  call: Call,
  ref: string,
  full: boolean,
): Promise<ThreadResult & { source: "server" | "cache" | "mixed" }> {
  let account: string | null = null;
  try {
    const r = decodeRef(ref);
    account = r.account;
    const a = accountOf(ctx, r.account);
    const google = a.provider === "google";
    const cached = (folder: string, uidValidity: number, uid: number) =>
      readCached(ctx, { account: r.account, folder, uidValidity, uid }, { full, google });
    const res =
      (await threadFromCache(ctx, a, r, full, google, cached)) ??
      (await ctx.pool.read(a, (c) =>
        readThread(c, r, { full, bodyLimit: ctx.config.daemon.body_limit }, google, cached),
      ));
    auditRead(
      ctx,
      call,
      account,
      "allowed",
      `thread of ${res.messages.length} message(s)${res.errors.length ? `, ${res.errors.length} not read` : ""}`,
    );
    return { ...res, source: overall(res.messages) };
  } catch (err) {
    auditRead(ctx, call, account, "error", `thread: ${toWireError(err).reason}`);
    throw err;
  }
}

/**
 * The thread from the cache's thread key index when the cache can name every member
 * (./cached-thread.ts); members the cache cannot give whole (a body not stored) come from the server.
 */
async function threadFromCache(
  ctx: ServiceContext,
  a: AccountConfig,
  r: MessageRef,
  full: boolean,
  google: boolean,
  cached: (folder: string, uidValidity: number, uid: number) => Message | null,
): Promise<ThreadResult | null> {
  const plan = cachedThreadPlan(ctx, r, { full }, google);
  if (!plan) return null;
  const read = await threadMessages(r, plan.start, plan.shown, cached, async (folder, uv, uids, failures) => {
    try {
      return await ctx.pool.read(a, (c) =>
        fetchMembers(
          c,
          r.account,
          folder,
          uv,
          uids,
          { full, bodyLimit: ctx.config.daemon.body_limit },
          google,
          failures,
        ),
      );
    } catch (err) {
      // The ref's own message came from the cache: the thread is answered, these members are errors.
      for (const uid of uids) failures.set(uid, partOfResult(err, ctx.log, "get_thread"));
      return new Map();
    }
  });
  return threadResult(r, plan.start.thread_id, read, plan.omitted);
}

export interface SavedFile {
  path: string;
  size: number;
  content_type: string;
  filename?: string;
}

/**
 * Streams what `download` hands its sink into a new file in `target` (a temp file there first:
 * ../files/save.ts), named by `name` once complete. The pool runs a read again after a dropped
 * connection: the temp file then starts over. A failed download leaves no file behind.
 */
async function downloadToNewFile<T extends { size: number }>(
  ctx: ServiceContext,
  account: AccountConfig,
  target: string,
  download: (client: ImapFlow, sink: (chunk: Buffer) => void) => Promise<T>,
  name: (got: T) => string,
): Promise<T & { path: string }> {
  let file: PartFile | undefined;
  try {
    const got = await ctx.pool.read(account, (c) => {
      if (file) discardPart(file);
      const into = openPart(target);
      file = into;
      return download(c, (chunk) => appendPart(into, chunk));
    });
    const written = file as PartFile | undefined;
    if (!written) throw new Error("the download wrote no file");
    file = undefined;
    return { ...got, path: placePart(written, name(got)) };
  } finally {
    if (file) discardPart(file);
  }
}

export async function downloadAttachment(
  ctx: ServiceContext,
  call: Call,
  ref: string,
  part: string,
  dir: string | undefined,
): Promise<SavedFile & { filename: string }> {
  let account: string | null = null;
  try {
    const r = decodeRef(ref);
    account = r.account;
    const a = accountOf(ctx, r.account);
    const target = checkDir(dir, ctx.home.attachmentsDir, saveForbidden(ctx.home));
    let filename = "";
    const got = await downloadToNewFile(
      ctx,
      a,
      target,
      (c, sink) => downloadPart(c, r, part, sink),
      (g) => {
        filename = sanitizeFilename(g.filename, `attachment-${part}`);
        return filename;
      },
    );
    audit(ctx, call, account, "allowed", `part ${part}, ${got.size} bytes`);
    return { path: got.path, size: got.size, content_type: got.contentType, filename };
  } catch (err) {
    audit(ctx, call, account, "error", `part ${part.slice(0, 20)}: ${toWireError(err).reason}`);
    throw err;
  }
}

export async function saveRaw(
  ctx: ServiceContext,
  call: Call,
  ref: string,
  dir: string | undefined,
): Promise<SavedFile> {
  let account: string | null = null;
  try {
    const r = decodeRef(ref);
    account = r.account;
    const a = accountOf(ctx, r.account);
    const target = checkDir(dir, ctx.home.attachmentsDir, saveForbidden(ctx.home));
    const got = await downloadToNewFile(
      ctx,
      a,
      target,
      async (c, sink) => ({ size: await downloadRaw(c, r, sink) }),
      () => "message.eml",
    );
    audit(ctx, call, account, "allowed", `${got.size} bytes`);
    return { path: got.path, size: got.size, content_type: "message/rfc822" };
  } catch (err) {
    audit(ctx, call, account, "error", `raw: ${toWireError(err).reason}`);
    throw err;
  }
}
