/**
 * `chainmail daemon`: the Unix socket server. The runtime dir is 0700 and the socket 0600, or, with
 * `[daemon] socket_group` (the strong mode: the daemon under its own OS user), 0750 and 0660 owned by
 * that group; the runtime dir is refused when it is a symlink or another user's. A stale socket left
 * by a crash is replaced, a live one is refused. stop() (and SIGTERM in the CLI) stops
 * accepting, lets in-flight calls finish, logs out of IMAP and closes state.db.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { credentialsFor, releaseCredentials } from "../auth/credentials.js";
import { releaseFlows } from "../auth/flows.js";
import { type Config, changedConnections, loadConfig } from "../config.js";
import { MailError, toWireError } from "../errors.js";
import { removeStaleParts } from "../files/save.js";
import { ensurePrivateDir, groupId, type Home } from "../home.js";
import { ImapPool } from "../imap/connection.js";
import type { ServiceContext } from "../service/context.js";
import { StateDb } from "../store/state.js";
import { EventLog } from "../events/log.js";
import { syncSink } from "../events/sync-sink.js";
import { itemsOf } from "../service/items.js";
import { requestSeen } from "../cache/priority.js";
import { CacheRunner } from "./cache-runner.js";
import { recoverOutbox } from "../outbox/service.js";
import { narrowedOnly, reconcilePolicies } from "../policy/service.js";
import { UploadSpool } from "../uploads/spool.js";
import { dispatch } from "./methods.js";
import { MAX_LINE_BYTES, PROTOCOL_VERSION, type Request, type Response } from "./protocol.js";

export interface Daemon {
  socketPath: string;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  home: Home;
  /** Where unexpected errors go; never given secrets or bodies. */
  log?: (line: string) => void;
  /** How often config.toml's mtime is checked between requests (default 2000 ms). */
  configPollMs?: number;
  /** How long the cache's writes wait for cache.db's write lock (tests; CACHE_WRITE_WAIT_MS). */
  cacheWriteWaitMs?: number;
  /** The work items linked to a thread, for item_mail events (the items store's linkedItems). */
  linkedItems?: (account: string, threadKey: string) => string[];
  /** An item and its ancestors, where an item_mail event happens and read_events' `item` (null: no such item). */
  itemPath?: (itemId: string) => string[] | null;
  /** How long a group's unacknowledged page holds the group (tests; src/events/leases.ts). */
  groupLeaseMs?: number;
}

async function socketIsLive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(path);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

function badRequest(id: Response["id"], message: string): Response {
  return {
    v: PROTOCOL_VERSION,
    id,
    error: { reason: "INVALID_ARGUMENT", message, hint: "Send one JSON request per line." },
  };
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { home } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let fileConfig: Config = loadConfig(home.configFile);
  const group = fileConfig.daemon.socket_group;
  const gid = group === undefined ? undefined : groupId(group);
  ensurePrivateDir(home.runtimeDir, gid === undefined ? {} : { mode: 0o750, gid });
  if (fs.existsSync(home.socketPath)) {
    if (await socketIsLive(home.socketPath)) {
      throw new MailError("CONFLICT", `a daemon is already listening on ${home.socketPath}`);
    }
    fs.rmSync(home.socketPath, { force: true });
  }
  let configMtime = fs.existsSync(home.configFile) ? fs.statSync(home.configFile).mtimeMs : 0;
  const state = new StateDb(home.dbFile, { log });
  // The daemon runs on the confirmed policies: a widening written into config.toml waits for the owner.
  const config: Config = reconcilePolicies(state, fileConfig);
  const pool = new ImapPool(home.secretsDir);
  // Temp files a crash left in the default save dir; other dirs are cleaned before each save there.
  removeStaleParts(home.attachmentsDir);
  // The work items store lives in state.db beside the log; ctx exists by the time either is asked.
  const events = new EventLog(state, {
    retentionSeconds: () => fileConfig.events.retention_seconds,
    log,
    linkedItems:
      options.linkedItems ?? ((account, threadKey) => itemsOf(ctx).linkedItems(account, threadKey)),
    itemPath: options.itemPath ?? ((itemId) => itemsOf(ctx).pathOf(itemId)),
    ...(options.groupLeaseMs !== undefined ? { leaseMs: options.groupLeaseMs } : {}),
  });
  const uploads = new UploadSpool(path.join(home.stateDir, "uploads"));
  const ctx: ServiceContext = {
    log,
    config,
    fileConfig,
    home,
    pool,
    state,
    events,
    uploads,
    startedAt: Date.now(),
  };
  // cache.db sits next to state.db; the runner reads ctx.config on every use, so reloads apply.
  if (config.cache.enabled)
    ctx.cache = new CacheRunner(home.cacheFile, () => ctx.config, home.secretsDir, log, {
      events: syncSink(events),
      status: (account, ok, reason) => events.status(account, ok, reason),
      // Polling costs the server a NOOP per interval, so only while somebody waits for an event.
      pollMs: () => (events.waiting > 0 ? ctx.config.events.poll_ms : 0),
      ...(options.cacheWriteWaitMs !== undefined ? { writeWaitMs: options.cacheWriteWaitMs } : {}),
    });

  // config.toml is re-read before every call that follows an edit and on a timer, so a user's change
  // (policy, a new account) takes effect without a restart; an invalid edit keeps the last good
  // config and is logged. Calls in flight keep their connections: an account whose connection
  // settings changed gets a new one after them, and the cache's watches follow the new accounts.
  const refreshConfig = () => {
    // One stat per call (not an exists check and a stat): this runs before every request
    const m = fs.statSync(home.configFile, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (m === configMtime) return;
    try {
      const prev = ctx.config;
      fileConfig = loadConfig(home.configFile);
      configMtime = m;
      ctx.fileConfig = fileConfig;
      try {
        ctx.config = reconcilePolicies(state, fileConfig);
      } catch (err) {
        // state.db refused (locked, read-only): the file's narrowings still apply at once, its
        // widenings and server changes wait, and the next call tries to record them again.
        log(`recording the policy failed, applying only its narrowings for now: ${(err as Error).message}`);
        ctx.config = narrowedOnly(ctx.config, fileConfig, state);
        configMtime = -1;
      }
      ctx.configError = undefined;
      const changed = changedConnections(prev, ctx.config);
      for (const name of changed) {
        pool.retire(name);
        credentialsFor(home.secretsDir).forget(name);
      }
      ctx.cache?.reconcile(changed);
    } catch (err) {
      log(`config reload failed, keeping the previous config: ${(err as Error).message}`);
      configMtime = m;
      // Reported by accounts and policy status until an edit loads, not only in this log.
      ctx.configError = {
        file: home.configFile,
        message: (err as Error).message,
        since: ctx.configError?.since ?? new Date().toISOString(),
      };
    }
  };

  const inflight = new Set<Promise<unknown>>();
  const sockets = new Set<net.Socket>();

  const handle = async (
    line: string,
    transport: Pick<Parameters<typeof dispatch>[1], "signal" | "afterReply">,
  ): Promise<Response> => {
    let req: Partial<Request>;
    try {
      req = JSON.parse(line) as Partial<Request>;
    } catch {
      return badRequest(null, "the request is not valid JSON");
    }
    if (typeof req !== "object" || req === null || Array.isArray(req))
      return badRequest(null, "the request must be a JSON object");
    const id = typeof req.id === "string" || typeof req.id === "number" ? req.id : null;
    // An answer the client cannot match to its request is worse than a refusal.
    if (id === null) return badRequest(null, "id must be a string or a number");
    if (req.v !== PROTOCOL_VERSION) {
      return {
        v: PROTOCOL_VERSION,
        id,
        error: {
          reason: "INVALID_ARGUMENT",
          message: `protocol version ${JSON.stringify(req.v)} is not supported; this daemon speaks v${PROTOCOL_VERSION}`,
          hint: "Use a client of the same chainmail version as the daemon.",
        },
      };
    }
    if (typeof req.method !== "string") return badRequest(id, "method must be a string");
    if (req.client !== "cli" && req.client !== "mcp") return badRequest(id, 'client must be "cli" or "mcp"');
    try {
      refreshConfig();
      const result = await dispatch(ctx, { client: req.client, ...transport }, req.method, req.params);
      return { v: PROTOCOL_VERSION, id, result };
    } catch (err) {
      const body = toWireError(err);
      if (body.reason === "INTERNAL")
        log(`method ${req.method} failed: ${(err as Error)?.stack ?? String(err)}`);
      return { v: PROTOCOL_VERSION, id, error: body };
    }
  };

  const server = net.createServer((sock) => {
    sockets.add(sock);
    // Aborts the calls of this connection that still wait (read_events), so they answer nothing.
    const hangup = new AbortController();
    sock.on("close", () => {
      sockets.delete(sock);
      hangup.abort();
    });
    sock.on("error", () => undefined);
    let buf = "";
    // A decoding stream: a character split across two reads arrives whole, not as two U+FFFDs.
    sock.setEncoding("utf8");
    sock.on("data", (chunk: string) => {
      buf += chunk;
      if (buf.length > MAX_LINE_BYTES && !buf.includes("\n")) {
        sock.end(
          `${JSON.stringify(badRequest(null, `a request line is longer than ${MAX_LINE_BYTES} bytes`))}\n`,
        );
        buf = "";
        return;
      }
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) {
          // The cache's background sync holds its next slice back while requests come in
          requestSeen();
          const after: Array<{ fn: () => void; lost: (() => void) | undefined }> = [];
          const transport = {
            signal: hangup.signal,
            afterReply: (fn: () => void, lost?: () => void) => void after.push({ fn, lost }),
          };
          const settle = (written: boolean) => {
            for (const a of after) {
              try {
                if (written) a.fn();
                else a.lost?.();
              } catch (err) {
                log(`after the reply to a call: ${(err as Error).message}`);
              }
            }
          };
          const p = handle(line, transport).then(async (res) => {
            if (sock.destroyed || hangup.signal.aborted) return settle(false);
            const written = await new Promise<boolean>((resolve) =>
              sock.write(`${JSON.stringify(res)}\n`, (err) => resolve(!err)),
            );
            requestSeen();
            settle(written && !sock.destroyed);
          });
          inflight.add(p);
          void p.finally(() => inflight.delete(p));
        }
        nl = buf.indexOf("\n");
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // The umask decides the socket's mode at bind time; tighten it so it is never world-connectable.
    const old = process.umask(gid === undefined ? 0o177 : 0o117);
    server.listen(home.socketPath, () => {
      process.umask(old);
      resolve();
    });
  });
  if (gid !== undefined) fs.chownSync(home.socketPath, process.getuid?.() ?? -1, gid);
  fs.chmodSync(home.socketPath, gid === undefined ? 0o600 : 0o660);
  ctx.cache?.start();
  // Not awaited: a mail server that is down must not hold up the socket; a retry of a send being
  // looked up waits for its lookup (the outbox lock).
  void recoverOutbox(ctx, log).catch((err: Error) => log(`outbox recovery failed: ${err.message}`));
  const configTimer = setInterval(() => {
    try {
      refreshConfig();
    } catch (err) {
      log(`config check failed: ${(err as Error).message}`);
    }
  }, options.configPollMs ?? 2000);
  configTimer.unref();

  let stopping: Promise<void> | undefined;
  return {
    socketPath: home.socketPath,
    stop: () => {
      stopping ??= (async () => {
        clearInterval(configTimer);
        // Background passes end at their next batch, so a sync call in flight answers soon
        ctx.cache?.interrupt();
        // Long-polls answer now with what they have, so the calls in flight can finish.
        events.close();
        // close() stops accepting at once but calls back only when every connection has ended.
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await Promise.allSettled([...inflight]);
        for (const s of sockets) s.end();
        const timer = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 1000);
        await closed;
        clearTimeout(timer);
        await ctx.cache?.stop();
        await pool.closeAll();
        // Access tokens live only as long as the daemon that obtained them.
        releaseCredentials(home.secretsDir);
        releaseFlows(home.secretsDir);
        uploads.close();
        state.close();
        fs.rmSync(home.socketPath, { force: true });
      })();
      return stopping;
    },
  };
}
