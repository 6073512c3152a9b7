/**
 * The daemon client the CLI and the MCP server share: one socket, requests matched to responses by
 * id. `call` takes any operation with the params and result its declaration gives
 * (src/daemon/operations); the named methods are shorthands. A failure comes back as a MailError with
 * the daemon's reason; an unreachable daemon is DAEMON_UNAVAILABLE.
 */
import crypto from "node:crypto";
import net from "node:net";
import type { ClientKind, Method, ParamsOf, Response, ResultOf } from "../daemon/protocol.js";
import { PROTOCOL_VERSION } from "../daemon/protocol.js";
import type { WireError } from "../errors.js";
import { MailError } from "../errors.js";
import { socketRefusal } from "../home.js";

type RequiredKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];
/** The params argument of `call`: optional when the operation has no required field (or none at all). */
type ParamsArg<M extends Method> = string extends keyof ParamsOf<M>
  ? [params?: ParamsOf<M>]
  : [RequiredKeys<ParamsOf<M>>] extends [never]
    ? [params?: ParamsOf<M>]
    : [params: ParamsOf<M>];

export interface ClientOptions {
  socketPath: string;
  client: ClientKind;
  /**
   * The socket was named by CHAINMAIL_SOCKET or --socket (Home.socketNamed): it may belong to
   * another OS user. Otherwise its dir and itself must be this user's (home.ts, socketRefusal).
   */
  socketNamed?: boolean | undefined;
  /** Milliseconds to wait for any one response; default 5 minutes (big batches over slow IMAP). */
  timeoutMs?: number;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class DaemonClient {
  private sock: net.Socket | undefined;
  private connecting: Promise<net.Socket> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buf = "";

  /**
   * This client's name as a reader of consumer groups, shared with its dedicated() copies: a group
   * page out to it does not keep its own next read waiting (a retry after a lost reply), while it
   * keeps another client's (src/events/leases.ts).
   */
  readonly reader: string;

  constructor(
    private readonly opts: ClientOptions,
    reader?: string,
  ) {
    this.reader = reader ?? `r_${crypto.randomBytes(9).toString("base64url")}`;
  }

  private unavailable(detail: string): MailError {
    return new MailError(
      "DAEMON_UNAVAILABLE",
      `cannot reach the chainmail daemon at ${this.opts.socketPath} (${detail})`,
    );
  }

  private connect(): Promise<net.Socket> {
    if (this.sock && !this.sock.destroyed) return Promise.resolve(this.sock);
    if (!this.connecting) {
      const refused = socketRefusal(this.opts.socketPath, this.opts.socketNamed === true);
      if (refused !== undefined)
        return Promise.reject(
          new MailError(
            "DAEMON_UNAVAILABLE",
            `will not connect to ${this.opts.socketPath}: ${refused}, so another user could be listening there`,
            "Remove what is at that path and start the daemon again (or point CHAINMAIL_HOME, XDG_RUNTIME_DIR or CHAINMAIL_SOCKET elsewhere). A daemon that runs as another OS user (the strong mode) is reached by naming its socket with CHAINMAIL_SOCKET or --socket.",
          ),
        );
    }
    this.connecting ??= new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(this.opts.socketPath);
      s.once("connect", () => {
        this.sock = s;
        this.connecting = undefined;
        resolve(s);
      });
      s.once("error", (err: NodeJS.ErrnoException) => {
        this.connecting = undefined;
        reject(this.unavailable(err.code ?? err.message));
      });
      s.setEncoding("utf8"); // whole characters even when one is split across reads
      s.on("data", (chunk: string) => this.onData(chunk));
      s.on("close", () => {
        this.sock = undefined;
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer);
          p.reject(this.unavailable("the connection closed"));
          this.pending.delete(id);
        }
      });
    });
    return this.connecting;
  }

  private onData(text: string): void {
    this.buf += text;
    let nl = this.buf.indexOf("\n");
    while (nl >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      nl = this.buf.indexOf("\n");
      let res: Response;
      try {
        res = JSON.parse(line) as Response;
      } catch {
        continue;
      }
      const p = typeof res.id === "number" ? this.pending.get(res.id) : undefined;
      if (!p) continue;
      this.pending.delete(res.id as number);
      clearTimeout(p.timer);
      if ("error" in res) {
        const e: WireError = res.error;
        p.reject(new MailError(e.reason, e.message, e.hint, e.detail));
      } else p.resolve(res.result);
    }
  }

  /**
   * A second client with the same options and a connection of its own: closing it hangs up only
   * its calls (a long-poll whose caller went away acknowledges nothing).
   */
  dedicated(): DaemonClient {
    return new DaemonClient(this.opts, this.reader);
  }

  /** One request; resolves with the result or rejects with a MailError. */
  async call<M extends Method>(method: M, ...args: ParamsArg<M>): Promise<ResultOf<M>> {
    const params = args[0] ?? {};
    const sock = await this.connect();
    const id = this.nextId++;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          reject(new MailError("SERVER_UNAVAILABLE", `the daemon did not answer ${method} in time`));
        },
        this.opts.timeoutMs ?? 5 * 60_000,
      );
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      sock.write(
        `${JSON.stringify({ v: PROTOCOL_VERSION, id, method, params, client: this.opts.client })}\n`,
      );
    });
  }

  close(): void {
    this.sock?.end();
    this.sock = undefined;
  }

  ping = () => this.call("ping");
  listAccounts = () => this.call("accounts.list");
  testAccount = (p: ParamsOf<"account.test">) => this.call("account.test", p);
  listFolders = (p: ParamsOf<"folders.list"> = {}) => this.call("folders.list", p);
  createFolder = (p: ParamsOf<"folders.create">) => this.call("folders.create", p);
  renameFolder = (p: ParamsOf<"folders.rename">) => this.call("folders.rename", p);
  deleteFolder = (p: ParamsOf<"folders.delete">) => this.call("folders.delete", p);
  search = (p: ParamsOf<"search">) => this.call("search", p);
  getMessages = (p: ParamsOf<"messages.get">) => this.call("messages.get", p);
  getThread = (p: ParamsOf<"thread.get">) => this.call("thread.get", p);
  downloadAttachment = (p: ParamsOf<"attachment.download">) => this.call("attachment.download", p);
  saveRaw = (p: ParamsOf<"raw.save">) => this.call("raw.save", p);
  move = (p: ParamsOf<"move">) => this.call("move", p);
  copy = (p: ParamsOf<"copy">) => this.call("copy", p);
  archive = (p: ParamsOf<"archive">) => this.call("archive", p);
  trash = (p: ParamsOf<"trash">) => this.call("trash", p);
  expunge = (p: ParamsOf<"expunge">) => this.call("expunge", p);
  setFlags = (p: ParamsOf<"flags">) => this.call("flags", p);
  setLabels = (p: ParamsOf<"labels">) => this.call("labels", p);
  cacheStatus = (p: ParamsOf<"cache.status"> = {}) => this.call("cache.status", p);
  /** Runs one cache pass (headers, bodies, eviction) per account now and waits for it. */
  cacheSync = (p: ParamsOf<"cache.sync"> = {}) => this.call("cache.sync", p);
  readAudit = (p: ParamsOf<"audit.read"> = {}) => this.call("audit.read", p);
  readEvents = (p: ParamsOf<"watch.read"> = {}) => this.call("watch.read", { reader: this.reader, ...p });
  ackEvents = (p: ParamsOf<"watch.ack">) => this.call("watch.ack", p);
  watchStatus = () => this.call("watch.status");
  watchGroups = () => this.call("watch.groups");
  deleteWatchGroup = (p: ParamsOf<"watch.groups.delete">) => this.call("watch.groups.delete", p);
}
