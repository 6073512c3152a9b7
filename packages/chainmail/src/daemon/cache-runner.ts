/**
 * The daemon's side of the local cache: it owns cache.db and decides the schedule. Per account, one
 * pass is: header sync of every folder (initial, then incremental), body backfill within the daily
 * budget, and eviction down to the size bound. Passes of one account never overlap (a second request
 * waits for the running one and then runs again, so it sees the server as it is now). With
 * `background`, each account gets a first pass at start, a pass every `sync_interval_seconds`, and an
 * IDLE watch on its INBOX (All Mail on Gmail) over a connection of its own, restarted after a drop;
 * the same watch keeps the other folders fresh, by NOTIFY where the server offers it, else by a STATUS
 * check of the folders queries read (see watchInbox's allFolders). Every pass and watch
 * uses its own IMAP connection, so user calls on the pooled connection never wait for a sync.
 */
import type { ImapFlow } from "imapflow";
import {
  type SyncEvents,
  backfillBodies,
  type CacheDb,
  type CacheStatus,
  cacheStatus,
  compactFts,
  CacheBusyError,
  dropAccount,
  endWaits,
  type EvictChoice,
  evictBodies,
  evictStep,
  type Evicted,
  type InboxWatch,
  openCache,
  recordWatchError,
  REPACK_MIN_ADDED,
  repackIndexes,
  syncAccount,
  newMailFolder,
  truncateWal,
  waitOnTimers,
  watchInbox,
  writeWhenFree,
} from "../cache/index.js";
import type { AccountConfig, CacheConfig, Config } from "../config.js";
import { credentialsFor } from "../auth/credentials.js";
import { loginHint } from "../auth/oauth.js";
import { MailError, toWireError } from "../errors.js";
import { LOGIN_CHECK_MS, loggedInUnderCurrentSecret, mapImapError, openImap } from "../imap/connection.js";

export interface AccountSyncReport {
  account: string;
  ok: boolean;
  folders: number;
  added: number;
  removed: number;
  bodies: number;
  budget_exhausted: boolean;
  evicted: number;
  error?: { reason: string; message: string };
}

/** Who hears what passes and watches find: the event log. */
export interface CacheHooks {
  events?: SyncEvents;
  /** An account's pass or watch succeeded (true) or failed (false, with the reason). */
  status?: (account: string, ok: boolean, reason?: string) => void;
  /** How often the watches ask their folder for news besides IDLE now; 0: IDLE only. */
  pollMs?: () => number;
  /** How long a watch that could not start or whose connection dropped waits to start again. */
  watchRetryMs?: number;
  /** How often the connections are checked against the accounts' secrets (LOGIN_CHECK_MS). */
  loginCheckMs?: number;
  /**
   * How long a write of the daemon's thread waits for cache.db's write lock (CACHE_WRITE_WAIT_MS):
   * the operator's commands', and the passes' and watches'.
   */
  writeWaitMs?: number;
}

/** What `cache rebuild` dropped of an account. */
export interface Dropped {
  folders: number;
  messages: number;
  bodies: number;
}

/** An operator's write that could not have cache.db's write lock, as the daemon answers it. */
function cacheBusy(what: string, err: CacheBusyError): MailError {
  return new MailError(
    "CONFLICT",
    `${what}: ${err.message}`,
    "Run the command again; if the cache stays busy, close any other program that has cache.db open (an sqlite3 shell, a backup).",
  );
}

/** A pass's report before it has done anything. */
function emptyReport(account: string): AccountSyncReport {
  return {
    account,
    ok: false,
    folders: 0,
    added: 0,
    removed: 0,
    bodies: 0,
    budget_exhausted: false,
    evicted: 0,
  };
}

/** A pass that never ran, for `err`. */
function failedReport(account: string, err: unknown): AccountSyncReport {
  const body = toWireError(err);
  return { ...emptyReport(account), error: { reason: body.reason, message: body.message } };
}

/** The default wait before a watch is retried. */
const WATCH_RETRY_MS = 30_000;
/**
 * A watch whose connection ended starts again after this instead of WATCH_RETRY_MS: the server
 * closed a working session (Dovecot does when another client deletes the folder the watch has
 * selected for a sync, or at its restart), and 30 s without a watch would leave every folder on
 * the last-sync rule meanwhile. An end within WATCH_RETRY_MS of the last restart doubles the wait
 * (up to WATCH_RETRY_MS), so a server that drops each new session is not asked every second.
 */
const WATCH_RESTART_MS = 1_000;

/** Logs out, or closes a connection that cannot take a LOGOUT any more. */
async function closeImap(client: ImapFlow | undefined): Promise<void> {
  if (client?.usable) await client.logout().catch(() => client.close());
  else client?.close();
}

export class CacheRunner {
  readonly db: CacheDb;
  private readonly running = new Map<string, Promise<AccountSyncReport>>();
  /** Each account's last restart of a watch whose connection ended: when, and after how long. */
  private readonly restartWaits = new Map<string, { at: number; ms: number }>();
  /** The IMAP connections of the passes under way, with their account (`interrupt` closes them). */
  private readonly passClients = new Map<ImapFlow, string>();
  /** Pass connections `checkLogins` closed: their pass reports why (`endedForSignIn`). */
  private readonly signInEnded = new WeakSet<ImapFlow>();
  /**
   * Each account's running watch's connection and generation, for the check of its login
   * (`checkLogins`): a watch that a config change already replaced is not the one restarted.
   */
  private readonly watchClients = new Map<string, { client: ImapFlow; gen: number }>();
  private readonly loginCheck: NodeJS.Timeout;
  private readonly watches = new Map<string, InboxWatch>();
  /** The folder each account's watch is on (All Mail on Gmail), for errors before it is known. */
  private readonly watchFolders = new Map<string, string>();
  /** Accounts the background schedule covers, each with a generation that a reconnect bumps. */
  private readonly watchGen = new Map<string, number>();
  private generations = 0;
  /** Watches being stopped by a config change; stop() waits for them too. */
  private readonly ending = new Set<Promise<void>>();
  /** Watches being started; stop() waits for them too. */
  private readonly starting = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private timerMs = 0;
  private retryTimers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** Accounts changed through the daemon since their last pass began, with a change counter. */
  private readonly dirty = new Map<string, number>();
  private changes = 0;

  constructor(
    file: string,
    private readonly config: () => Config,
    private readonly secretsDir: string,
    private readonly log: (line: string) => void,
    private readonly hooks: CacheHooks = {},
  ) {
    this.db = openCache(file, log);
    // Nothing on this thread waits in SQLite's busy handler: its writes wait on timers (../cache/busy.ts)
    waitOnTimers(this.db, hooks.writeWaitMs);
    this.loginCheck = setInterval(() => this.checkLogins(), hooks.loginCheckMs ?? LOGIN_CHECK_MS);
    this.loginCheck.unref();
  }

  /**
   * Lets go of the connections logged in under a secret that has changed since (or under the
   * account's connection settings before a config change, which starts the credentials afresh:
   * `Credentials.forget`; the watch itself the config change has already replaced): a pass's is closed
   * (the pass fails at its next command, as when the daemon stops; what it committed stays), and a
   * watch is ended and begun again, which logs in with the new secret or, signed out, fails and is
   * retried as any watch that cannot start.
   */
  private checkLogins(): void {
    if (this.stopped) return;
    try {
      this.letGoOfStaleLogins();
    } catch (err) {
      // (a secrets dir that cannot be read: the next login says so; the daemon goes on)
      this.log(`cache: checking the sessions' sign-ins failed: ${String(err)}`);
    }
  }

  private letGoOfStaleLogins(): void {
    const accounts = new Map(this.config().accounts.map((a) => [a.name, a]));
    const stale = (client: ImapFlow, name: string) => {
      const account = accounts.get(name);
      return (
        account !== undefined &&
        client.usable &&
        !loggedInUnderCurrentSecret(client, account, this.secretsDir)
      );
    };
    for (const [client, name] of this.passClients)
      if (stale(client, name)) {
        this.log(`cache sync of ${name}: its sign-in changed; the pass under way is ended`);
        this.signInEnded.add(client);
        client.close();
      }
    const changed: string[] = [];
    for (const [name, { client, gen }] of this.watchClients)
      if (stale(client, name)) {
        this.watchClients.delete(name);
        if (this.watchGen.get(name) === gen) changed.push(name);
      }
    if (changed.length) {
      this.log(`cache watch of ${changed.join(", ")}: its sign-in changed; starting again`);
      this.reconcile(changed);
    }
  }

  get settings(): CacheConfig {
    return this.config().cache;
  }

  /** Starts the background schedule (when the config asks for it). */
  start(): void {
    this.reconcile([]);
  }

  /**
   * Follows a config change without a restart: an added account gets its first pass and its watch,
   * a removed one loses its watch, and one whose connection settings changed (`changed`) gets a
   * new watch. Turning `background` on or off, or a new interval, applies too.
   */
  reconcile(changed: string[]): void {
    if (this.stopped) return;
    const every = this.settings.background ? this.settings.sync_interval_seconds * 1000 : 0;
    if (this.timer && this.timerMs !== every) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    if (every && !this.timer) {
      this.timer = setInterval(() => {
        for (const a of this.config().accounts) void this.sync(a);
      }, every);
      this.timer.unref();
      this.timerMs = every;
    }
    const names = new Set(every ? this.config().accounts.map((a) => a.name) : []);
    const ending = [...this.watchGen.keys()].filter((n) => !names.has(n) || changed.includes(n));
    for (const name of ending) {
      // Without its generation, the old watch's end and any pending retry stand down.
      this.watchGen.delete(name);
      const w = this.watches.get(name);
      this.watches.delete(name);
      // The new watch starts only after the old one has ended, so one INBOX never has two.
      const ended = (async () => {
        await w?.stop();
        if (this.config().accounts.some((a) => a.name === name)) this.begin(name);
      })();
      this.ending.add(ended);
      void ended.finally(() => this.ending.delete(ended));
    }
    for (const name of names) if (!ending.includes(name)) this.begin(name);
  }

  private begin(name: string): void {
    if (this.stopped || !this.settings.background || this.watchGen.has(name)) return;
    const gen = ++this.generations;
    this.watchGen.set(name, gen);
    const a = this.config().accounts.find((x) => x.name === name);
    if (a) void this.sync(a).then(() => this.watch(name, gen));
  }

  /**
   * One pass over an account. A pass already running is awaited first, then a new one runs, so the
   * caller's answer reflects the server after the call began.
   */
  sync(account: AccountConfig): Promise<AccountSyncReport> {
    const prev = this.running.get(account.name) ?? Promise.resolve(undefined);
    const next = prev.then(() => this.pass(account));
    this.track(account.name, next);
    return next;
  }

  /**
   * Drops everything cached of the account and syncs it again. With no pass running the drop is done
   * before this returns, so a search the daemon handles after this call began reads the server (the
   * account is "never synced", then incomplete until the new pass ends); a running pass is awaited
   * first, so it cannot write rows into the dropped cache. A drop that cannot have cache.db's write
   * lock (../cache/busy.ts) rejects `dropped` with CONFLICT (handled here: a caller may read only
   * `synced`), and `synced` reports that error: nothing was dropped or synced.
   */
  rebuild(account: AccountConfig): {
    dropped: Promise<Dropped>;
    synced: Promise<AccountSyncReport>;
  } {
    const drop = () =>
      writeWhenFree(this.db, () => dropAccount(this.db, account.name)).catch((err: unknown) => {
        throw err instanceof CacheBusyError
          ? cacheBusy(`the cache of account ${account.name} was not dropped`, err)
          : err;
      });
    // Its turn with the header writer's thread, should it write (another account's first sync, a
    // backfill's merging: ../cache/writer.ts); with none, and the lock free, dropped before this returns
    const prev = this.running.get(account.name);
    const dropped = prev ? prev.then(drop) : drop();
    dropped.catch(() => undefined);
    const next = dropped.then(
      () => this.pass(account),
      (err: unknown) => {
        if (!(err instanceof MailError))
          this.log(
            `cache rebuild of ${account.name}: dropping its cache failed: ${(err as Error)?.stack ?? String(err)}`,
          );
        return failedReport(account.name, err);
      },
    );
    this.track(account.name, next);
    return { dropped, synced: next };
  }

  /**
   * Drops stored body text, oldest first (`cache evict`); headers and the FTS words stay. Each
   * transaction when cache.db's write lock is free (../cache/busy.ts): a lock held past the wait
   * is CONFLICT, with what was dropped before it kept and named.
   */
  async evict(choice: EvictChoice): Promise<Evicted> {
    const done: Evicted = { bodies: 0, bytes: 0 };
    try {
      while (await writeWhenFree(this.db, () => evictStep(this.db, choice, done)));
    } catch (err) {
      if (!(err instanceof CacheBusyError)) throw err;
      throw cacheBusy(`cache evict stopped after ${done.bodies} bodies (${done.bytes} bytes)`, err);
    }
    return done;
  }

  /** Forgets the account's running pass once `next` settles (unless a later one took its place). */
  private track(name: string, next: Promise<AccountSyncReport>): void {
    this.running.set(name, next);
    const forget = () => {
      if (this.running.get(name) === next) this.running.delete(name);
    };
    next.then(forget, forget);
  }

  /**
   * The daemon changed mail on this account (move, flags, folders...): the cache may not know yet, so
   * it answers nothing for the account until a pass that began after the change has finished.
   */
  markDirty(name: string): void {
    this.dirty.set(name, ++this.changes);
    const a = this.config().accounts.find((x) => x.name === name);
    if (a && this.settings.background && !this.stopped) void this.sync(a);
  }

  isDirty(name: string): boolean {
    return this.dirty.has(name);
  }

  private async pass(account: AccountConfig): Promise<AccountSyncReport> {
    const startedAt = this.changes;
    const report = emptyReport(account.name);
    if (this.stopped) return report;
    let client: ImapFlow | undefined;
    try {
      client = await openImap(account, this.secretsDir);
      this.passClients.set(client, account.name);
      // Interrupted while it connected: its first command fails and the pass ends
      if (this.stopped) client.close();
      const results = await syncAccount(
        this.db,
        client,
        account.name,
        this.hooks.events ? { events: this.hooks.events } : {},
      );
      report.folders = results.length;
      for (const r of results) {
        report.added += r.added;
        report.removed += r.removed;
      }
      const maxBytes = this.settings.max_size_bytes;
      for (const r of results) {
        // Each call fetches at most 500 bodies; loop until the folder is done, the daily budget is
        // spent or the size bound is reached (the backfill then stops for good: see bodyBudgetCut).
        for (let round = 0; round < 10_000 && !this.stopped; round++) {
          const b = await backfillBodies(this.db, client, account.name, r.folder, {
            dailyBudgetBytes: this.settings.daily_budget_bytes,
            compact: false,
            maxSizeBytes: maxBytes,
          });
          report.bodies += b.fetched;
          // New mail fetched over the bound pushes the oldest bodies out before the next call
          if (b.fetched > 0) report.evicted += await evictBodies(this.db, maxBytes);
          if (b.budgetExhausted) report.budget_exhausted = true;
          if (b.budgetExhausted || b.sizeBudgetReached || b.remaining === 0 || b.fetched === 0) break;
        }
        if (report.budget_exhausted) break;
      }
      if (report.bodies > 0) await compactFts(this.db, { offThread: true });
      // A bulk load leaves its index pages part empty: rebuilt full (src/cache/repack.ts). Only
      // the file's size is at stake: a rebuild that fails leaves the indexes as they were
      if (report.added >= REPACK_MIN_ADDED && !this.stopped)
        await repackIndexes(this.db).catch((err: unknown) =>
          this.log(
            `cache: rebuilding the indexes of ${account.name} failed (they stay as they were): ${String(err)}`,
          ),
        );
      report.evicted += await evictBodies(this.db, maxBytes);
      // The sync has settled: the WAL's pages are copied into cache.db and the file cut to nothing
      // (a backfill leaves it at 16-21 MiB, disk the cache holds for nothing: issue 34). In the
      // checkpoint worker, not this thread; the searches go on meanwhile.
      await truncateWal(this.db);
      report.ok = true;
      this.hooks.status?.(account.name, true);
      const d = this.dirty.get(account.name);
      if (d !== undefined && d <= startedAt) this.dirty.delete(account.name);
    } catch (err) {
      const body = toWireError(
        client && this.signInEnded.has(client)
          ? this.endedForSignIn(account)
          : err instanceof MailError
            ? err
            : mapImapError(err, account.name),
      );
      report.error = { reason: body.reason, message: body.message };
      this.hooks.status?.(account.name, false, body.reason);
      // The message too: a certificate failure says there what to set (it holds no server text).
      this.log(`cache sync of ${account.name} failed: ${body.reason}: ${body.message}`);
    } finally {
      if (client) this.passClients.delete(client);
      await closeImap(client);
    }
    return report;
  }

  /**
   * What a pass `checkLogins` ended reports: not the closed connection's "unreachable", but that the
   * sign-in changed under it, as AUTH_REQUIRED when the account is now signed out.
   */
  private endedForSignIn(account: AccountConfig): MailError {
    const what = `the sync of account ${account.name} was ended`;
    if (credentialsFor(this.secretsDir).state(account) === "missing")
      return new MailError(
        "AUTH_REQUIRED",
        `${what}: the account was signed out while it ran`,
        account.oauth ? loginHint(account.name) : undefined,
      );
    return new MailError(
      "SERVER_UNAVAILABLE",
      `${what}: its sign-in or connection settings changed while it ran; the next sync uses the new ones`,
      "Sync again.",
    );
  }

  private watch(name: string, gen: number): Promise<void> {
    // stop() waits for starts under way too: they use cache.db, and each holds a connection.
    const p = this.startWatch(name, gen);
    this.starting.add(p);
    void p.finally(() => this.starting.delete(p));
    return p;
  }

  private async startWatch(name: string, gen: number): Promise<void> {
    const current = () => !this.stopped && this.watchGen.get(name) === gen;
    if (!current() || this.watches.has(name)) return;
    const account = this.config().accounts.find((a) => a.name === name);
    if (!account) return;
    let folder = this.watchFolders.get(name) ?? "INBOX";
    // Once watchInbox runs it records its own failures.
    let started = false;
    // This call's to close until a running watch owns it: a start retried every WATCH_RETRY_MS
    // must not leave one connection per failure on the server.
    let client: ImapFlow | undefined;
    try {
      client = await openImap(account, this.secretsDir);
      if (!current()) return;
      folder = await newMailFolder(client, account.provider);
      this.watchFolders.set(name, folder);
      if (!current()) return;
      started = true;
      const w = await watchInbox(this.db, client, name, {
        folder,
        allFolders: true,
        // watchInbox keeps the error for cache_status; the log says that it happened.
        onError: (e) => {
          const wire = toWireError(mapImapError(e, name, account.imap));
          const reason = wire.reason;
          this.log(`cache watch of ${name} failed: ${reason}: ${wire.message}`);
          this.hooks.status?.(name, false, reason);
        },
        bodies: {
          dailyBudgetBytes: this.settings.daily_budget_bytes,
          maxSizeBytes: this.settings.max_size_bytes,
        },
        ...(this.hooks.events ? { events: this.hooks.events } : {}),
        ...(this.hooks.pollMs ? { pollMs: this.hooks.pollMs } : {}),
      });
      // From here the watch closes it: w.stop() logs out, and its end leaves no connection open.
      this.watchClients.set(name, { client, gen });
      client = undefined;
      if (!current()) {
        await w.stop();
        return;
      }
      this.watches.set(name, w);
      void w.done.then(() => {
        if (!current()) return;
        this.watches.delete(name);
        const retryMs = this.hooks.watchRetryMs ?? WATCH_RETRY_MS;
        const last = this.restartWaits.get(name);
        const ms = last && Date.now() - last.at < retryMs ? Math.min(last.ms * 2, retryMs) : WATCH_RESTART_MS;
        this.restartWaits.set(name, { at: Date.now(), ms });
        this.log(`cache watch of ${name} ended; starting it again in ${ms} ms`);
        this.retryWatch(name, gen, ms);
      });
    } catch (err) {
      // Closed before the retry is scheduled, so a short retry interval never overlaps it.
      await closeImap(client);
      client = undefined;
      const body = toWireError(mapImapError(err, name, account.imap));
      // A watch that cannot start leaves its folder on the last-sync rule; cache_status says why.
      if (!started)
        recordWatchError(name, folder, new MailError(body.reason, body.message, body.hint, body.detail));
      this.log(`cache watch of ${name} failed: ${body.reason}: ${body.message}`);
      this.retryWatch(name, gen);
    } finally {
      await closeImap(client);
    }
  }

  private retryWatch(name: string, gen: number, soonerMs?: number): void {
    if (this.stopped) return;
    const retryMs = this.hooks.watchRetryMs ?? WATCH_RETRY_MS;
    const t = setTimeout(
      () => {
        this.retryTimers.delete(t);
        void this.watch(name, gen);
      },
      Math.min(retryMs, soonerMs ?? retryMs),
    );
    t.unref();
    this.retryTimers.add(t);
  }

  status(accounts: string[]): CacheStatus {
    const names = accounts.length ? accounts : this.config().accounts.map((a) => a.name);
    return cacheStatus(this.db, {
      accounts: names,
      maxSizeBytes: this.settings.max_size_bytes,
      dailyBudgetBytes: this.settings.daily_budget_bytes,
      freshSeconds: this.settings.fresh_seconds,
    });
  }

  /**
   * Stops what runs in the background, first thing when the daemon stops (before it waits for the
   * calls in flight, a `cache.sync` among them): no pass, watch or retry starts any more, and the
   * passes under way end at their next FETCH batch, body round or write that waits for cache.db's
   * write lock (their connections closed; what
   * was committed stays, as after a crash, and the next pass goes on from there) instead of running
   * a first sync of a large mailbox and its body backfill to the end, which held a SIGTERM up for
   * as long as those take (15 minutes at a million messages).
   */
  interrupt(): void {
    this.stopped = true;
    // (and a write waiting for cache.db's write lock gives up: ../cache/busy.ts)
    endWaits(this.db);
    if (this.timer) clearInterval(this.timer);
    clearInterval(this.loginCheck);
    for (const t of this.retryTimers) clearTimeout(t);
    for (const c of this.passClients.keys()) c.close();
  }

  /** Ends watches and timers, waits for running passes, then closes cache.db. */
  async stop(): Promise<void> {
    this.interrupt();
    await Promise.allSettled([...this.watches.values()].map((w) => w.stop()));
    await Promise.allSettled([...this.ending]);
    await Promise.allSettled([...this.starting]);
    await Promise.allSettled([...this.running.values()]);
    this.db.close();
  }
}
