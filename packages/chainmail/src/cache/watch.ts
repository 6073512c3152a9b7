import { errorText } from "../errors.js";
import type { ImapFlow } from "imapflow";
import { type BackfillOptions, backfillBodies, evictBodies } from "./backfill.js";
import type { CacheDb } from "./schema.js";
import { type SyncEvents, type SyncResult, syncFolder } from "./sync.js";

/**
 * Folders with a live IDLE watch in this process, as "account\u0000path", and whether the watch's
 * last sync succeeded: only then does the watch keep the folder fresh.
 */
const watched = new Map<string, { healthy: boolean }>();
/** The last failure of a folder's watch (its sync, its IDLE, its connection, or starting it). */
const watchErrors = new Map<string, { message: string; at: number }>();
const key = (account: string, path: string) => `${account}\u0000${path}`;

/** An IDLE watch on the folder is live (its syncs may still be failing: see watchKeepsFresh). */
export const isWatched = (account: string, path: string) => watched.has(key(account, path));

/** A live watch whose last sync succeeded: the folder is as fresh as the server. */
export const watchKeepsFresh = (account: string, path: string) =>
  watched.get(key(account, path))?.healthy === true;

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
 * during a sync). While it runs and its last sync succeeded the folder counts as fresh; a failed
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
  } = {},
): Promise<InboxWatch> {
  const path = options.folder ?? "INBOX";
  const sync = options.events ? { events: options.events } : {};
  let stopped = false;
  let running = false;
  let again = false;

  const runSync = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const r = await syncFolder(db, client, account, path, sync);
        if (r.added > 0 && options.bodies) {
          const b = await backfillBodies(db, client, account, path, { ...options.bodies, limit: NEW_BODIES });
          // New mail's bodies push the oldest stored ones out under the bound, as a pass does
          const max = options.bodies.maxSizeBytes;
          if (b.fetched > 0 && max !== undefined) evictBodies(db, max);
        }
        recordWatchSync(account, path);
        options.onSync?.(r);
      } while (again && !stopped);
    } catch (e) {
      // Until a later sync succeeds the folder falls back to the last-sync rule, and
      // cache_status shows why.
      recordWatchError(account, path, e);
      options.onError?.(e);
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
    if (!stopped && (ev.path === undefined || ev.path === path)) void runSync();
  };
  client.on("exists", onChange);
  client.on("expunge", onChange);
  client.on("flags", onChange);
  watched.set(key(account, path), { healthy: true });

  const done = new Promise<void>((resolve) => {
    const end = () => {
      if (!stopped && watched.has(key(account, path)))
        recordWatchError(account, path, new Error("the watch's IMAP connection closed"));
      watched.delete(key(account, path));
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
      await client.logout().catch(() => undefined);
      await done;
    },
  };
}
