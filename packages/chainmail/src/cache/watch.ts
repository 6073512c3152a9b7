import { errorText } from "../errors.js";
import type { ImapFlow, ListResponse, StatusObject } from "imapflow";
import type { ImapAttribute } from "imapflow/lib/handler/types.js";
import { decodePath } from "imapflow/lib/tools.js";
import type { Provider } from "../providers/presets.js";
import { type FolderRole, roleFromSpecialUse } from "../query/index.js";
import { type BackfillOptions, backfillBodies, evictBodies } from "./backfill.js";
import { type CacheDb, stmt } from "./schema.js";
import { dropFolder, getFolder } from "./store.js";
import { type SyncEvents, type SyncResult, cachedFolders, syncFolder } from "./sync.js";
import { isBusy, writeWhenFree } from "./busy.js";

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

/**
 * How an account's live watch hears changes: "notify", NOTIFY on every personal folder (and IDLE on
 * the watched one); "idle", IDLE on the watched folder alone, the folders queries read checked by
 * STATUS every few seconds in the background (watchInbox's checkMs).
 */
export type WatchMode = "notify" | "idle";
const modes = new Map<string, WatchMode>();

/** The account's watch mode while a watch runs in this process, else null. */
export const watchMode = (account: string): WatchMode | null => modes.get(account) ?? null;

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

/**
 * When the cache last answered a read of a folder (a search's folders, a message read): the folders
 * a watch without NOTIFY checks in the background. A Map write, nothing else: it is on the cache
 * path of `search`, which must not wait for anything.
 */
const reads = new Map<string, number>();

/** The cache is answering a read of this folder now (search, get_message, thread). */
export function noteCacheRead(account: string, path: string, now = Date.now()): void {
  const k = key(account, path);
  // Re-inserted, so the Map's order is the order of last reads (the check takes the newest).
  reads.delete(k);
  reads.set(k, now);
}

/** The account's folders read since `since`, newest read first, at most `max`; older reads are forgotten. */
export function recentReads(account: string, since: number, max: number): string[] {
  const out: string[] = [];
  for (const [k, at] of reads) {
    if (at < since) reads.delete(k);
  }
  const prefix = `${account}\u0000`;
  for (const k of [...reads.keys()].reverse()) {
    if (out.length >= max) break;
    if (k.startsWith(prefix)) out.push(k.slice(prefix.length));
  }
  return out;
}

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
 * The folder to watch for new mail: INBOX, or on Gmail (provider preset "google", or a server with
 * Google's X-GM-EXT-1), whose cache holds All Mail instead of INBOX (see `cachedFolders`), All Mail:
 * every message but Spam and Trash is there, so a change anywhere in the mailbox (a label, a flag, a
 * message filed) reaches that one IDLE. Gmail offers no NOTIFY.
 */
export function watchFolderFor(
  provider: Provider | undefined,
  capabilities: { has(name: string): boolean },
  folders: Pick<ListResponse, "path" | "specialUse">[],
): string {
  if (provider !== "google" && !capabilities.has("X-GM-EXT-1")) return "INBOX";
  const all = folders.find((f) => f.specialUse?.toLowerCase() === "\\all");
  return all?.path ?? "INBOX";
}

/** watchFolderFor on a connected client (a LIST only where All Mail may be the answer). */
export async function newMailFolder(client: ImapFlow, provider?: Provider): Promise<string> {
  if (provider !== "google" && !client.capabilities.has("X-GM-EXT-1")) return "INBOX";
  return watchFolderFor(provider, client.capabilities, await client.list());
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

/** How long after a sync that met cache.db's write lock taken (for the whole wait) it is tried again. */
const BUSY_RETRY_MS = 5_000;

/** Bodies fetched after one sync of the watched folder; a larger arrival waits for the background pass. */
const NEW_BODIES = 50;

/** How often a watch without NOTIFY checks the folders queries read (STATUS), by default. */
export const DEFAULT_CHECK_MS = 5000;
/** How long after its last read a folder keeps being checked by a watch without NOTIFY. */
export const RECENT_READ_MS = 10 * 60_000;
/** At most this many folders (the newest reads) are checked in one round. */
const CHECK_MAX = 16;

export interface InboxWatch {
  /** Resolves when the watch ends (stop() or the connection closed). */
  done: Promise<void>;
  /** How the watch hears changes (see WatchMode). */
  mode: WatchMode;
  stop(): Promise<void>;
}

/**
 * A caller's handler as the watch calls it: the handler is the caller's code, so one that throws
 * must not end the watch, count as the folder's failed sync in cache_status, or become an unhandled
 * rejection (fatal in the daemon). Its failure is reported as a process warning instead.
 */
function callerHandler<A>(handler: ((a: A) => void) | undefined): (a: A) => void {
  return (a) => {
    try {
      handler?.(a);
    } catch (e) {
      process.emitWarning(`a chainmail watch handler threw: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
}

/**
 * Keeps one folder (INBOX by default) fresh over a dedicated connection: syncs it, selects it,
 * IDLEs, and on every EXISTS/EXPUNGE/FLAGS notice syncs again (coalescing notices that arrive
 * during a sync). With `allFolders` it keeps the account's other folders fresh too, on the same
 * connection: where the server offers NOTIFY (RFC 5465, see startNotify) every personal folder's
 * changes arrive as they happen and the folder a notification names is synced; elsewhere the
 * folders queries read in the last RECENT_READ_MS (noteCacheRead) get a STATUS every `checkMs` in
 * the background and a folder whose STATUS differs from the cache is synced. While it runs and its
 * last sync succeeded the folder counts as fresh; a failed sync, a failed IDLE or a closed
 * connection is kept for cache_status (watchError). With `bodies`, new messages' bodies are
 * fetched right after the sync that found them (within the daily budget, at most 50 a time), so a
 * word search can stay on the cache instead of waiting for the next background pass. The client must not be shared: the
 * daemon gives each watched folder its own ImapFlow. When the connection drops, the watch ends
 * and the folder falls back to the last-sync rule; the daemon reconnects and calls this again (a new
 * NOTIFY SET, whose STATUS of every folder catches up what changed while it was down).
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
    /** Keep every folder of the account fresh, not only `folder` (the daemon's choice). */
    allFolders?: boolean;
    /** Use NOTIFY where the server offers it (default true); false: the STATUS checks instead. */
    notify?: boolean;
    /** How often, without NOTIFY, the folders queries read are checked (default DEFAULT_CHECK_MS). */
    checkMs?: number;
  } = {},
): Promise<InboxWatch> {
  const path = options.folder ?? "INBOX";
  const sync = options.events ? { events: options.events } : {};
  const onSync = callerHandler(options.onSync);
  const onError = callerHandler(options.onError);
  const checkMs = options.checkMs ?? DEFAULT_CHECK_MS;
  let stopped = false;
  let running = false;
  let notify = false;
  /** Folders to sync, in the order their news came; a folder already queued is not queued twice. */
  const pending = new Set<string>();
  /** The folder list wants reading again (NOTIFY's MailboxName: created, renamed or deleted). */
  let relist = false;
  /** Roles of the folders the last LIST named, for folders the cache does not hold yet. */
  let roles = new Map<string, FolderRole | null>();

  /** Folders whose last sync here failed: the next one looks for their new mail's bodies too. */
  const unfinished = new Set<string>();
  /** Syncs again of folders whose sync met cache.db's write lock taken for the whole wait. */
  const retries = new Set<NodeJS.Timeout>();

  const syncOne = async (folder: string) => {
    try {
      const role = getFolder(db, account, folder)?.role ?? roles.get(folder);
      // The role is known from the cache or the last LIST: no LIST here, whose own untagged
      // handlers would take a NOTIFY STATUS arriving meanwhile (imapflow gives a running command's
      // handlers the first look at every untagged response).
      const r = await syncFolder(db, client, account, folder, role === undefined ? sync : { ...sync, role });
      // (a sync that failed may have stored new mail's headers but not yet its bodies)
      if ((r.added > 0 || unfinished.has(folder)) && options.bodies) {
        const b = await backfillBodies(db, client, account, folder, { ...options.bodies, limit: NEW_BODIES });
        // New mail's bodies push the oldest stored ones out under the bound, as a pass does
        const max = options.bodies.maxSizeBytes;
        if (b.fetched > 0 && max !== undefined) await evictBodies(db, max);
      }
      unfinished.delete(folder);
      recordWatchSync(account, folder);
      onSync(r);
    } catch (e) {
      // Until a later sync succeeds the folder falls back to the last-sync rule, and
      // cache_status shows why.
      unfinished.add(folder);
      recordWatchError(account, folder, e);
      onError(e);
      // Another program kept cache.db's write lock past the wait (./busy.ts): nothing was half
      // written, and no news may come to sync it again, so the watch tries again itself
      if (isBusy(e) && !stopped) {
        const t = setTimeout(() => {
          retries.delete(t);
          if (!stopped) void work({ folder });
        }, BUSY_RETRY_MS);
        t.unref();
        retries.add(t);
      }
    }
  };

  /**
   * Reads the folder list with each folder's STATUS (LIST-STATUS where offered): drops cached
   * folders the server no longer has, notes the roles, and queues every folder the cache is behind
   * on. It also makes up for any STATUS notification the LIST's own handlers took.
   */
  const readList = async () => {
    const listed = cachedFolders(
      client,
      (await client.list({ statusQuery: STATUS_QUERY(client) })).filter(
        (f) => !f.flags.has("\\Noselect") && !f.flags.has("\\NonExistent"),
      ),
    );
    roles = new Map(listed.map((f) => [f.path, roleFromSpecialUse(f.specialUse, f.path)]));
    for (const cached of stmt(db, "SELECT id, path FROM folders WHERE account = ?").all(account) as {
      id: number;
      path: string;
    }[]) {
      if (!roles.has(cached.path)) await writeWhenFree(db, () => dropFolder(db, cached.id));
    }
    for (const f of listed) {
      if (f.path !== path && statusDiffers(db, account, f.path, folderStatus(f.status))) pending.add(f.path);
    }
  };

  /**
   * A STATUS of each folder read lately that no live notice covers (without NOTIFY every folder but
   * the watched one, whose news IDLE brings; under NOTIFY those in another user's or a shared
   * namespace, which NOTIFY's `personal` leaves out), queueing those the cache is behind on. The
   * background's work alone: a search never waits for it.
   */
  const checkRead = async () => {
    for (const folder of recentReads(account, Date.now() - RECENT_READ_MS, CHECK_MAX)) {
      // Under NOTIFY only the folders it does not cover (another user's or a shared namespace)
      if (stopped || covered(account, folder) || !getFolder(db, account, folder)) continue;
      let st: StatusObject | false;
      try {
        st = await client.status(folder, STATUS_QUERY(client));
      } catch (e) {
        // A dropped connection ends the watch (IDLE reports it). A NO (the folder deleted or
        // renamed by another client) is no failure of the watch: the folder is no longer checked,
        // and the folder list is read again, which drops it from the cache.
        if (!client.usable) throw e;
        reads.delete(key(account, folder));
        relist = true;
        continue;
      }
      if (st && statusDiffers(db, account, folder, folderStatus(st))) pending.add(folder);
    }
  };

  /**
   * A STATUS of each folder other than the watched one that this run synced, now that the watched
   * folder is selected again, queueing those the cache is behind on. A change to a folder while its
   * sync had it selected is told as EXISTS only when the connection next idles with that folder
   * still selected; the worker selects the watched folder first, and Dovecot 2.3 then tells it
   * neither as EXISTS nor as a STATUS, so a message appended while its folder synced stayed out of
   * the cache until the next pass (an hour by default; seen under load in cache-notify). Changes
   * after this STATUS come as NOTIFY's STATUS of a folder not selected.
   */
  const recheckVisited = async (visited: Set<string>) => {
    for (const folder of [...visited]) {
      visited.delete(folder);
      if (stopped || !getFolder(db, account, folder)) continue;
      let st: StatusObject | false;
      try {
        st = await client.status(folder, STATUS_QUERY(client));
      } catch (e) {
        if (!client.usable) throw e;
        // (deleted or renamed meanwhile: the folder list read again drops it)
        relist = true;
        continue;
      }
      if (st && statusDiffers(db, account, folder, folderStatus(st))) pending.add(folder);
    }
  };

  /**
   * The watch's one worker: runs the list read, the checks and the queued syncs one at a time on the
   * watch's connection.
   *
   * Why the watched folder is synced again after any other: a sync of another folder selects that
   * folder, and a change to the watched folder while it is not selected is told (under NOTIFY) by a
   * STATUS that Dovecot 2.3 sends only once the connection is idle again (in IDLE, about half a
   * second later). Selecting the watched folder before then drops that news: the folder is selected
   * again, so the server reports it no more as a STATUS of another folder, and the SELECT's EXISTS
   * only says how many messages are there, which imapflow takes as the new mailbox's state, not as
   * a change. A message appended to INBOX while the watch synced other folders was so never synced
   * (the NOTIFY watch of the session before was reverted for this: cache-watch-leak appends to
   * INBOX right after a watch whose start followed failed passes, so that every folder was behind
   * and being synced). Without NOTIFY no news of the unselected watched folder comes at all. A sync
   * of the watched folder (incremental, by CONDSTORE/QRESYNC where offered) selects it and compares
   * it with the cache, so whatever changed meanwhile is found (test/cache-notify-race.test.ts).
   */
  const work = async (what: { check?: boolean; folder?: string } = {}) => {
    if (what.folder !== undefined) pending.add(what.folder);
    if (running || stopped) return;
    running = true;
    let left = false;
    /** The other folders synced (so selected) in this run, looked at again once they are not. */
    const visited = new Set<string>();
    try {
      for (;;) {
        if (stopped) break;
        if (relist) {
          relist = false;
          await readList().catch((e: unknown) => onError(e));
        }
        if (what.check) {
          what.check = false;
          await checkRead().catch((e: unknown) => onError(e));
        }
        const next = pending.values().next();
        if (next.done) {
          if (left) {
            // Another folder was synced, so selected: the watched folder last, see above
            left = false;
            pending.add(path);
            continue;
          }
          if (notify && visited.size > 0) {
            await recheckVisited(visited).catch((e: unknown) => onError(e));
            if (pending.size > 0 || relist) continue;
          }
          break;
        }
        pending.delete(next.value);
        if (next.value !== path) {
          left = true;
          visited.add(next.value);
        }
        await syncOne(next.value);
      }
      // A failed sync of the watched folder may have left another one selected
      if (!stopped && client.usable && client.mailbox && client.mailbox.path !== path)
        await client.mailboxOpen(path, { readOnly: true }).catch((e: unknown) => {
          recordWatchError(account, path, e);
          onError(e);
        });
    } finally {
      running = false;
    }
    // News that came while the last step ran
    if (!stopped && (pending.size > 0 || relist)) void work();
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
  onSync(first);
  const onChange = (ev: { path?: string }) => {
    if (stopped) return;
    if (ev.path === undefined || ev.path === path) void work({ folder: path });
    // A folder the worker has selected for its sync: its news comes as EXISTS/EXPUNGE/FETCH
    else if (options.allFolders) void work({ folder: ev.path });
  };
  client.on("exists", onChange);
  client.on("expunge", onChange);
  client.on("flags", onChange);
  watched.set(key(account, path), { healthy: true });

  const useNotify =
    options.allFolders === true &&
    options.notify !== false &&
    client.capabilities.has("NOTIFY") &&
    // Gmail's cache holds All Mail, not the label folders (cachedFolders); Gmail has no NOTIFY anyway
    !client.capabilities.has("X-GM-EXT-1");
  if (useNotify) {
    // Roles before any folder sync: NOTIFY SET may answer with STATUS for folders at once, whose
    // syncs (during the await below) must not look a role up themselves (see syncOne)
    relist = true;
    notify = await startNotify(client, {
      status: (folder, status) => {
        if (!stopped && statusDiffers(db, account, folder, status)) void work({ folder });
      },
      mailboxName: () => {
        if (stopped) return;
        relist = true;
        void work();
      },
    });
  }
  const mode: WatchMode = notify ? "notify" : "idle";
  modes.set(account, mode);
  /** Namespaces NOTIFY's `personal` leaves out: another user's and the shared ones. */
  const others = notify
    ? [...(client.namespaces?.other || []), ...(client.namespaces?.shared || [])].filter((ns) => ns.prefix)
    : [];
  if (notify) {
    notifying.set(account, { covers: (p) => !others.some((ns) => p.startsWith(ns.prefix)) });
    // A folder whose last watch sync failed stays stale until synced again: sync it now.
    for (const k of watchErrors.keys()) {
      const [a, folder] = k.split("\u0000");
      if (a === account && folder !== undefined && folder !== path) pending.add(folder);
    }
    // The folder list first: NOTIFY tells of folders created or deleted from now on, and this
    // watch may follow one that ended (Dovecot disconnects a session whose selected folder another
    // client deletes, as the watch's own folder syncs select theirs): a folder deleted meanwhile
    // is dropped here, or it would stay in the cache until the next pass (an hour by default).
    // (Listed again if a sync during NOTIFY's start listed already: this list is the one that
    // comes after NOTIFY is on, so nothing falls between the two.)
    relist = true;
    void work();
  }
  // Under NOTIFY the checks are needed only for folders outside the personal namespace (each
  // check skips the folders NOTIFY covers)
  const checkTimer =
    options.allFolders && (!notify || others.length > 0)
      ? setInterval(() => {
          if (!stopped && client.usable && !running) void work({ check: true });
        }, checkMs)
      : undefined;
  checkTimer?.unref();

  const forget = () => {
    for (const t of retries) clearTimeout(t);
    retries.clear();
    watched.delete(key(account, path));
    if (modes.get(account) === mode) modes.delete(account);
    if (notify) notifying.delete(account);
    if (checkTimer) clearInterval(checkTimer);
  };

  const done = new Promise<void>((resolve) => {
    const end = () => {
      if (!stopped && watched.has(key(account, path)))
        recordWatchError(account, path, new Error("the watch's IMAP connection closed"));
      forget();
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
            onError(e);
          }
          break;
        }
        if (running) await new Promise((r) => setTimeout(r, 20));
      }
      if (!stopped && client.usable) {
        // IDLE failed on a live connection: the watch ends, and its connection with it, or each
        // restart by the daemon would leave one open. Its failure is recorded, the close is not one.
        forget();
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
    mode,
    stop: async () => {
      stopped = true;
      stopPolling();
      forget();
      await client.logout().catch(() => undefined);
      await done;
    },
  };
}

/** The STATUS items the cache compares: HIGHESTMODSEQ only where CONDSTORE is offered. */
const STATUS_QUERY = (client: ImapFlow) => ({
  messages: true,
  uidNext: true,
  uidValidity: true,
  ...(client.capabilities.has("CONDSTORE") ? { highestModseq: true } : {}),
});

/** What a STATUS says of a folder (RFC 3501 7.2.4), the fields the cache keeps. */
export interface FolderStatus {
  messages?: number;
  uidnext?: number;
  uidvalidity?: string;
  highestmodseq?: string;
}

/** imapflow's STATUS answer in the cache's terms. */
function folderStatus(st: StatusObject | undefined): FolderStatus {
  return {
    ...(st?.messages !== undefined ? { messages: st.messages } : {}),
    ...(st?.uidNext !== undefined ? { uidnext: st.uidNext } : {}),
    ...(st?.uidValidity !== undefined ? { uidvalidity: String(st.uidValidity) } : {}),
    ...(st?.highestModseq !== undefined ? { highestmodseq: String(st.highestModseq) } : {}),
  };
}

/** The part of imapflow this file reaches past its typed API for: the untagged-response table. */
interface UntaggedTable {
  untaggedHandlers: Record<string, ((u: { attributes?: ImapAttribute[] }) => Promise<void>) | null>;
  exec(command: string, attributes: ImapAttribute[]): Promise<{ next?: () => void }>;
}

const atom = (value: string): ImapAttribute => ({ type: "ATOM", value });
const MESSAGE_EVENTS = () => [atom("MessageNew"), atom("MessageExpunge"), atom("FlagChange")];

/**
 * Sends `NOTIFY SET STATUS (selected (MessageNew MessageExpunge FlagChange)) (personal (MessageNew
 * MessageExpunge FlagChange MailboxName))` and routes what follows: the unsolicited STATUS responses
 * (one per personal folder at once, for the STATUS option, so a change between the daemon's pass and
 * the NOTIFY is not missed; then one per change) to `status`, and the unsolicited LIST of a folder
 * created, renamed or deleted to `mailboxName`. The selected folder's news keeps coming as
 * EXISTS/EXPUNGE/FETCH, which imapflow turns into its events. imapflow has no NOTIFY: its low-level
 * exec sends the command, and a STATUS or LIST outside imapflow's own STATUS/LIST commands reaches
 * the connection's untagged table, where nothing else listens. (During imapflow's own LIST or STATUS
 * command that command's handlers take them: the watch issues no STATUS under NOTIFY and reads every
 * folder's STATUS with each LIST it makes, see readList.) Returns false when the server refused NOTIFY
 * (the watch then checks the folders queries read instead).
 */
export async function startNotify(
  client: ImapFlow,
  on: { status: (folder: string, status: FolderStatus) => void; mailboxName: () => void },
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
    on.status(decodePath(client, name.value), status);
  };
  raw.untaggedHandlers.LIST = async () => on.mailboxName();
  try {
    const r = await raw.exec("NOTIFY", [
      atom("SET"),
      atom("STATUS"),
      [atom("selected"), MESSAGE_EVENTS()],
      [atom("personal"), [...MESSAGE_EVENTS(), atom("MailboxName")]],
    ]);
    r.next?.();
    return true;
  } catch {
    raw.untaggedHandlers.STATUS = null;
    raw.untaggedHandlers.LIST = null;
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
