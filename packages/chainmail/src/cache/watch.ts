import { errorText } from "../errors.js";
import type { ImapFlow } from "imapflow";
import type { ImapAttribute } from "imapflow/lib/handler/types.js";
import { decodePath } from "imapflow/lib/tools.js";
import { type BackfillOptions, backfillBodies, evictBodies } from "./backfill.js";
import type { CacheDb } from "./schema.js";
import { getFolder } from "./store.js";
import { type SyncEvents, type SyncResult, syncFolder } from "./sync.js";

/**
 * Folders with a live IDLE watch in this process, as "account\u0000path", and whether the watch's
 * last sync succeeded: only then does the watch keep the folder fresh.
 */
const watched = new Map<string, { healthy: boolean }>();
/** The last failure of a folder's watch (its sync, its IDLE, its connection, or starting it). */
const watchErrors = new Map<string, { message: string; at: number }>();
const key = (account: string, path: string) => `${account}\u0000${path}`;

/**
 * Accounts whose watch has NOTIFY (RFC 5465) live on every personal folder, with the test of whether
 * a path is one of them (folders under another user's or a shared namespace are not).
 */
const notifying = new Map<string, { covers: (path: string) => boolean }>();

/** The account's watch hears changes of this folder: its IDLE, or NOTIFY on the personal folders. */
const covered = (account: string, path: string) =>
  watched.has(key(account, path)) || notifying.get(account)?.covers(path) === true;

/** A live watch hears the folder's changes (its syncs may still be failing: see watchKeepsFresh). */
export const isWatched = (account: string, path: string) => covered(account, path);

/**
 * A live watch hears the folder's changes and its last sync of it succeeded (or, under NOTIFY, no
 * sync of it has failed since the last success): the folder is as fresh as the server.
 */
export const watchKeepsFresh = (account: string, path: string) => {
  const own = watched.get(key(account, path));
  if (own) return own.healthy;
  return notifying.get(account)?.covers(path) === true && !watchErrors.has(key(account, path));
};

/** The folder's last watch failure, until the watch syncs successfully again. */
export function watchError(account: string, path: string): { message: string; at: number } | undefined {
  return watchErrors.get(key(account, path));
}

/** Records a failure of the folder's watch; the daemon calls it when a watch cannot start. */
export function recordWatchError(account: string, path: string, err: unknown): void {
  const raw = errorText(err);
  const message =
    raw
      .replace(/[\p{Cc}]+/gu, " ")
      .trim()
      .slice(0, 500) || "unknown error";
  watchErrors.set(key(account, path), { message, at: Date.now() });
  const w = watched.get(key(account, path));
  if (w) w.healthy = false;
}

function recordWatchSync(account: string, path: string): void {
  watchErrors.delete(key(account, path));
  const w = watched.get(key(account, path));
  if (w) w.healthy = true;
}

/**
 * The folder to watch for new mail: INBOX, or on Gmail, whose cache holds All Mail instead of INBOX
 * (see `cachedFolders`), All Mail, where new mail appears too.
 */
export async function newMailFolder(client: ImapFlow): Promise<string> {
  if (!client.capabilities.has("X-GM-EXT-1")) return "INBOX";
  const all = (await client.list()).find((f) => f.specialUse?.toLowerCase() === "\\all");
  return all?.path ?? "INBOX";
}

/** How often a watch checks whether polling is wanted while it is not (no request is sent). */
const POLL_CHECK_MS = 100;

/**
 * Sends a NOOP every `pollMs()` ms while that is above 0 and the watch is not busy; its EXISTS,
 * FLAGS and EXPUNGE replies reach the watch like IDLE's. Returns the function that stops it.
 */
export function pollWhileWanted(
  client: Pick<ImapFlow, "noop" | "usable">,
  pollMs: () => number,
  busy: () => boolean,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const tick = () => {
    if (ended || !client.usable) return;
    const ms = pollMs();
    // A failed NOOP is the connection's failure: IDLE reports it and ends the watch.
    if (ms > 0 && !busy()) client.noop().catch(() => undefined);
    timer = setTimeout(tick, ms > 0 ? ms : POLL_CHECK_MS);
  };
  timer = setTimeout(tick, POLL_CHECK_MS);
  return () => {
    ended = true;
    clearTimeout(timer);
  };
}

/** Bodies fetched after one sync of the watched folder; a larger arrival waits for the background pass. */
const NEW_BODIES = 50;

export interface InboxWatch {
  /** Resolves when the watch ends (stop() or the connection closed). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Keeps one folder (INBOX by default) fresh over a dedicated connection: syncs it, selects it,
 * IDLEs, and on every EXISTS/EXPUNGE/FLAGS notice syncs again (coalescing notices that arrive
 * during a sync). With `allFolders` on a server that offers NOTIFY it keeps every personal folder
 * fresh the same way, syncing on this connection each folder a notification names (startNotify).
 * While it runs and its last sync succeeded the folder counts as fresh; a failed
 * sync, a failed IDLE or a closed connection is kept for cache_status (watchError). With `bodies`, new messages' bodies are
 * fetched right after the sync that found them (within the daily budget, at most 50 a time), so a
 * word search can stay on the cache instead of waiting for the next background pass. The client must not be shared: the
 * daemon gives each watched folder its own ImapFlow. When the connection drops, the watch ends
 * and the folder falls back to the last-sync rule; the daemon reconnects and calls this again.
 * Once this returns the watch owns the client (stop() and the watch's end close it); when it throws
 * (its first sync or SELECT failed), the client is left open for the caller to close.
 */
export async function watchInbox(
  db: CacheDb,
  client: ImapFlow,
  account: string,
  options: {
    folder?: string;
    onSync?: (r: SyncResult) => void;
    onError?: (e: unknown) => void;
    bodies?: Pick<BackfillOptions, "dailyBudgetBytes" | "now" | "maxSizeBytes">;
    events?: SyncEvents;
    /**
     * Besides IDLE, ask the server for news (NOOP) every this many ms while it returns more than 0:
     * some servers hold IDLE notices back (Dovecot 2.3 by 500 ms), a NOOP is answered at once.
     */
    pollMs?: () => number;
    /**
     * Watch every personal folder, not only `folder`, where the server offers NOTIFY (RFC 5465): a
     * change by another client in any of them is synced within moments. Without NOTIFY the watch
     * stays on `folder` alone; cache_status's `watching` says which folders are covered.
     */
    allFolders?: boolean;
  } = {},
): Promise<InboxWatch> {
  const path = options.folder ?? "INBOX";
  const sync = options.events ? { events: options.events } : {};
  let stopped = false;
  let running = false;
  let notify = false;
  /** Folders to sync, in the order their news came; a folder already queued is not queued twice. */
  const pending = new Set<string>();

  const syncOne = async (folder: string) => {
    try {
      const r = await syncFolder(db, client, account, folder, sync);
      if (r.added > 0 && options.bodies) {
        const b = await backfillBodies(db, client, account, folder, { ...options.bodies, limit: NEW_BODIES });
        // New mail's bodies push the oldest stored ones out under the bound, as a pass does
        const max = options.bodies.maxSizeBytes;
        if (b.fetched > 0 && max !== undefined) evictBodies(db, max);
      }
      recordWatchSync(account, folder);
      options.onSync?.(r);
    } catch (e) {
      // Until a later sync succeeds the folder falls back to the last-sync rule, and
      // cache_status shows why.
      recordWatchError(account, folder, e);
      options.onError?.(e);
    }
  };

  const runSync = async (folder: string) => {
    pending.add(folder);
    if (running) return;
    running = true;
    try {
      while (pending.size > 0 && !stopped) {
        const next = pending.values().next().value as string;
        pending.delete(next);
        await syncOne(next);
      }
      // A sync of another folder selected it; the watched folder is selected again so that its
      // news keeps coming as EXISTS/EXPUNGE/FETCH (the others' come as STATUS under NOTIFY).
      if (notify && !stopped && client.usable && client.mailbox && client.mailbox.path !== path)
        await client.mailboxOpen(path, { readOnly: true }).catch((e: unknown) => {
          recordWatchError(account, path, e);
          options.onError?.(e);
        });
    } finally {
      running = false;
    }
  };

  let first: SyncResult;
  try {
    first = await syncFolder(db, client, account, path, sync);
    await client.mailboxOpen(path, { readOnly: true });
  } catch (e) {
    recordWatchError(account, path, e);
    throw e;
  }
  recordWatchSync(account, path);
  options.onSync?.(first);
  const onChange = (ev: { path?: string }) => {
    if (stopped) return;
    if (ev.path === undefined || ev.path === path) void runSync(path);
    else if (notify) void runSync(ev.path);
  };
  client.on("exists", onChange);
  client.on("expunge", onChange);
  client.on("flags", onChange);
  watched.set(key(account, path), { healthy: true });
  if (options.allFolders && client.capabilities.has("NOTIFY")) {
    // The watched folder's news comes as STATUS too while a sync of another folder has it unselected.
    notify = await startNotify(client, (folder, status) => {
      if (!stopped && statusDiffers(db, account, folder, status)) void runSync(folder);
    });
    if (notify) {
      const others = [...(client.namespaces?.other || []), ...(client.namespaces?.shared || [])].filter(
        (ns) => ns.prefix,
      );
      notifying.set(account, {
        covers: (p) => !others.some((ns) => p.startsWith(ns.prefix)),
      });
      // A folder whose last watch sync failed stays stale until synced again: sync it now.
      for (const k of watchErrors.keys()) {
        const [a, folder] = k.split("\u0000");
        if (a === account && folder !== undefined && folder !== path) void runSync(folder);
      }
    }
  }

  const done = new Promise<void>((resolve) => {
    const end = () => {
      if (!stopped && watched.has(key(account, path)))
        recordWatchError(account, path, new Error("the watch's IMAP connection closed"));
      watched.delete(key(account, path));
      if (notify) notifying.delete(account);
      client.off("exists", onChange);
      client.off("expunge", onChange);
      client.off("flags", onChange);
      resolve();
    };
    client.once("close", end);
    (async () => {
      // imapflow leaves IDLE by itself to run a command (our syncs) and idle() is called again
      while (!stopped && client.usable) {
        try {
          await client.idle();
        } catch (e) {
          if (!stopped) {
            recordWatchError(account, path, e);
            options.onError?.(e);
          }
          break;
        }
        if (running) await new Promise((r) => setTimeout(r, 20));
      }
      if (!stopped && client.usable) {
        // IDLE failed on a live connection: the watch ends, and its connection with it, or each
        // restart by the daemon would leave one open. Its failure is recorded, the close is not one.
        watched.delete(key(account, path));
        if (notify) notifying.delete(account);
        await client.logout().catch(() => client.close());
      }
      end();
    })();
  });

  const stopPolling = options.pollMs
    ? pollWhileWanted(client, options.pollMs, () => running || stopped)
    : () => undefined;
  void done.then(stopPolling);

  return {
    done,
    stop: async () => {
      stopped = true;
      stopPolling();
      watched.delete(key(account, path));
      if (notify) notifying.delete(account);
      await client.logout().catch(() => undefined);
      await done;
    },
  };
}

/** What an unsolicited STATUS says of a folder (RFC 3501 7.2.4), the fields the cache keeps. */
export interface FolderStatus {
  messages?: number;
  uidnext?: number;
  uidvalidity?: string;
  highestmodseq?: string;
}

/** The part of imapflow this file reaches past its typed API for: the untagged-response table. */
interface UntaggedTable {
  untaggedHandlers: Record<string, ((u: { attributes?: ImapAttribute[] }) => Promise<void>) | null>;
  exec(command: string, attributes: ImapAttribute[]): Promise<{ next?: () => void }>;
}

const atom = (value: string): ImapAttribute => ({ type: "ATOM", value });
const EVENTS = () => [atom("MessageNew"), atom("MessageExpunge"), atom("FlagChange")];

/**
 * Sends `NOTIFY SET STATUS (selected (…)) (personal (…))` and routes the unsolicited STATUS responses
 * that follow (one per personal folder at once, for STATUS, then one per change) to `onStatus`.
 * imapflow has no NOTIFY: its low-level exec sends the command, and a STATUS outside its own STATUS
 * command reaches the connection's untagged table, where nothing else listens. Returns false when
 * the server refused NOTIFY (the watch then stays on its one folder).
 */
export async function startNotify(
  client: ImapFlow,
  onStatus: (folder: string, status: FolderStatus) => void,
): Promise<boolean> {
  // untaggedHandlers and exec are imapflow internals (marked @internal, left out of its types).
  const raw = client as unknown as UntaggedTable;
  raw.untaggedHandlers.STATUS = async (u) => {
    const name = u.attributes?.[0];
    const list = u.attributes?.[1];
    if (!name || Array.isArray(name) || typeof name.value !== "string" || !Array.isArray(list)) return;
    const status: FolderStatus = {};
    for (let i = 0; i + 1 < list.length; i += 2) {
      const k = list[i];
      const v = list[i + 1];
      if (!k || Array.isArray(k) || !v || Array.isArray(v)) continue;
      const value = String(v.value);
      switch (String(k.value).toUpperCase()) {
        case "MESSAGES":
          status.messages = Number(value);
          break;
        case "UIDNEXT":
          status.uidnext = Number(value);
          break;
        case "UIDVALIDITY":
          status.uidvalidity = value;
          break;
        case "HIGHESTMODSEQ":
          status.highestmodseq = value;
          break;
      }
    }
    onStatus(decodePath(client, name.value), status);
  };
  try {
    const r = await raw.exec("NOTIFY", [
      atom("SET"),
      atom("STATUS"),
      [atom("selected"), EVENTS()],
      [atom("personal"), EVENTS()],
    ]);
    r.next?.();
    return true;
  } catch {
    raw.untaggedHandlers.STATUS = null;
    return false;
  }
}

/**
 * Whether a STATUS says something the cache's row of the folder does not: any field that differs,
 * or a folder the cache does not hold yet. A STATUS that matches (the news of a change the watch or
 * a pass has already synced) costs no sync.
 */
export function statusDiffers(db: CacheDb, account: string, folder: string, s: FolderStatus): boolean {
  const row = getFolder(db, account, folder);
  if (!row || row.last_sync === null) return true;
  if (s.uidvalidity !== undefined && s.uidvalidity !== row.uidvalidity) return true;
  if (s.uidnext !== undefined && s.uidnext !== row.uidnext) return true;
  if (s.messages !== undefined && s.messages !== row.server_count) return true;
  if (s.highestmodseq !== undefined && s.highestmodseq !== row.highestmodseq) return true;
  return false;
}
