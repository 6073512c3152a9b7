/**
 * The daemon client the CLI and the MCP server share: one socket, requests matched to responses by
 * id, a typed method per operation. A failure comes back as a MailError with the daemon's reason; an
 * unreachable daemon is DAEMON_UNAVAILABLE.
 */
import type { CacheStatus } from "../cache/index.js";
import type { AccountSyncReport } from "../daemon/cache-runner.js";
import net from "node:net";
import type { WireError } from "../errors.js";
import { MailError } from "../errors.js";
import type { ClientKind, Method, Response } from "../daemon/protocol.js";
import { PROTOCOL_VERSION } from "../daemon/protocol.js";
import type { AccountSummary } from "../service/accounts.js";
import type { ListFoldersResult } from "../service/folders.js";
import type { BatchResult } from "../service/organize.js";
import type { GetMessagesResult, SavedFile } from "../service/reading.js";
import type { SearchResult, SearchSource } from "../service/search.js";
import type { CheckResult } from "../imap/test-account.js";
import type { ThreadResult } from "../imap/thread.js";
import type { AuditRow } from "../store/state.js";

export interface ClientOptions {
  socketPath: string;
  client: ClientKind;
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

  constructor(private readonly opts: ClientOptions) {}

  private unavailable(detail: string): MailError {
    return new MailError(
      "DAEMON_UNAVAILABLE",
      `cannot reach the chainmail daemon at ${this.opts.socketPath} (${detail})`,
    );
  }

  private connect(): Promise<net.Socket> {
    if (this.sock && !this.sock.destroyed) return Promise.resolve(this.sock);
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
        p.reject(new MailError(e.reason, e.message, e.hint));
      } else p.resolve(res.result);
    }
  }

  /** One request; resolves with the result or rejects with a MailError. */
  async call<T = unknown>(method: Method, params: Record<string, unknown> = {}): Promise<T> {
    const sock = await this.connect();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
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

  ping() {
    return this.call<{ ok: boolean; protocol: number; pid: number }>("ping");
  }
  listAccounts() {
    return this.call<{ accounts: AccountSummary[] }>("accounts.list");
  }
  testAccount(p: { account: string }) {
    return this.call<{ account: string; imap: CheckResult; smtp: CheckResult }>("account.test", p);
  }
  listFolders(p: { accounts?: string[] } = {}) {
    return this.call<ListFoldersResult>("folders.list", p);
  }
  createFolder(p: { account: string; name: string }) {
    return this.call<{ account: string; name: string }>("folders.create", p);
  }
  renameFolder(p: { account: string; from: string; to: string }) {
    return this.call<{ account: string; name: string }>("folders.rename", p);
  }
  deleteFolder(p: { account: string; name: string; force?: boolean }) {
    return this.call<{ account: string; name: string; deleted: boolean }>("folders.delete", p);
  }
  search(p: {
    query?: string;
    accounts?: string[];
    limit?: number;
    cursor?: string;
    count_only?: boolean;
    snippets?: boolean;
    threads?: boolean;
    source?: SearchSource;
  }) {
    return this.call<SearchResult>("search", p);
  }
  getMessages(p: { refs: string[]; full?: boolean }) {
    return this.call<GetMessagesResult>("messages.get", p);
  }
  getThread(p: { ref: string; full?: boolean }) {
    return this.call<ThreadResult & { source: "server" | "cache" | "mixed" }>("thread.get", p);
  }
  downloadAttachment(p: { ref: string; part: string; dir?: string }) {
    return this.call<SavedFile & { filename: string }>("attachment.download", p);
  }
  saveRaw(p: { ref: string; dir?: string }) {
    return this.call<SavedFile>("raw.save", p);
  }
  move(p: { refs: string[]; folder: string }) {
    return this.call<BatchResult>("move", p);
  }
  copy(p: { refs: string[]; folder: string }) {
    return this.call<BatchResult>("copy", p);
  }
  archive(p: { refs: string[] }) {
    return this.call<BatchResult>("archive", p);
  }
  trash(p: { refs: string[] }) {
    return this.call<BatchResult>("trash", p);
  }
  expunge(p: { refs: string[] }) {
    return this.call<BatchResult>("expunge", p);
  }
  setFlags(p: { refs: string[]; add?: string[]; remove?: string[] }) {
    return this.call<BatchResult>("flags", p);
  }
  setLabels(p: { refs: string[]; add?: string[]; remove?: string[] }) {
    return this.call<BatchResult>("labels", p);
  }
  cacheStatus(p: { accounts?: string[] } = {}) {
    return this.call<CacheStatus>("cache.status", p);
  }
  /** Runs one cache pass (headers, bodies, eviction) per account now and waits for it. */
  cacheSync(p: { accounts?: string[] } = {}) {
    return this.call<{ accounts: AccountSyncReport[] }>("cache.sync", p);
  }
  readAudit(p: { action?: string; since?: string; limit?: number } = {}) {
    return this.call<{ rows: AuditRow[] }>("audit.read", p);
  }
}
