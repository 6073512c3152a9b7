/**
 * IMAP connections, one per account, reused across calls and reopened when the server dropped them.
 * Calls on one account run one at a time (IMAP has one selected mailbox per connection); accounts run
 * in parallel. `openImap` gives a dedicated connection to code that needs its own (sync, IDLE).
 */
import { ImapFlow } from "imapflow";
import type { AccountConfig } from "../config.js";
import { isMailError, quoteServerText, MailError } from "../errors.js";
import { getSecret } from "../secrets.js";

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "GREETING_TIMEOUT",
  "UPGRADE_TIMEOUT",
  "ETIMEOUT",
  "NoConnection",
  "EConnectionClosed",
  "ClosedAfterConnectText",
  "ClosedAfterConnectTLS",
]);

/** Maps a failure from imapflow or the network to a chainmail reason; server text is never a secret. */
export function mapImapError(err: unknown, account: string): MailError {
  if (isMailError(err)) return err;
  const e = err as { code?: string; authenticationFailed?: boolean; message?: string; responseText?: string };
  if (e?.authenticationFailed) {
    return new MailError("AUTH_REJECTED", `the IMAP server of account ${account} rejected the login`);
  }
  if (e?.code && NETWORK_CODES.has(e.code)) {
    return new MailError(
      "SERVER_UNAVAILABLE",
      `the IMAP server of account ${account} is unreachable (${e.code})`,
    );
  }
  const text = e?.responseText ?? e?.message ?? String(err);
  return new MailError(
    "SERVER_UNAVAILABLE",
    `the IMAP server of account ${account} failed ${quoteServerText(text)}`,
  );
}

export function imapOptions(account: AccountConfig, password: string) {
  return {
    host: account.imap.host,
    port: account.imap.port,
    secure: account.imap.tls === "tls",
    doSTARTTLS: account.imap.tls === "starttls" ? true : account.imap.tls === "none" ? false : undefined,
    auth: { user: account.username, pass: password },
    logger: false as const,
    // Test servers and some hosts answer slowly to the first command; imapflow's defaults are minutes.
    connectionTimeout: 15_000,
    greetingTimeout: 10_000,
    socketTimeout: 5 * 60_000,
    disableAutoIdle: true,
  };
}

/** Opens and logs in a new connection; AUTH_REQUIRED when no password is stored. */
export async function openImap(account: AccountConfig, secretsDir: string): Promise<ImapFlow> {
  const password = getSecret(secretsDir, account.name);
  if (password === undefined) {
    throw new MailError("AUTH_REQUIRED", `no password is stored for account ${account.name}`);
  }
  const client = new ImapFlow(imapOptions(account, password));
  // imapflow emits 'error' on socket failures; unhandled it would crash the daemon.
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (err) {
    client.close();
    throw mapImapError(err, account.name);
  }
  return client;
}

interface Slot {
  client: ImapFlow | undefined;
  queue: Promise<unknown>;
}

export class ImapPool {
  private readonly slots = new Map<string, Slot>();
  constructor(private readonly secretsDir: string) {}

  /** Runs `fn` with this account's connection, serialized with the account's other calls. */
  use<T>(account: AccountConfig, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    let slot = this.slots.get(account.name);
    if (!slot) {
      slot = { client: undefined, queue: Promise.resolve() };
      this.slots.set(account.name, slot);
    }
    const s = slot;
    const run = async (): Promise<T> => {
      if (!s.client?.usable) {
        s.client?.close();
        s.client = undefined;
        s.client = await openImap(account, this.secretsDir);
      }
      const client = s.client;
      try {
        return await fn(client);
      } catch (err) {
        if (!client.usable) s.client = undefined;
        // NoConnection means the server had already closed the connection (a BYE, e.g. after its
        // selected folder was deleted) before our first command went out: nothing ran, so a
        // fresh connection may run the whole call once more.
        if ((err as { code?: string })?.code === "NoConnection") {
          client.close();
          s.client = await openImap(account, this.secretsDir);
          try {
            return await fn(s.client);
          } catch (again) {
            if (!s.client.usable) s.client = undefined;
            throw mapImapError(again, account.name);
          }
        }
        throw mapImapError(err, account.name);
      }
    };
    const result = s.queue.then(run, run);
    s.queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Replaces an account's connection once the calls already queued on it have finished (a config
   * change): a call in flight keeps its connection; the next call opens a new one.
   */
  retire(name: string): void {
    const s = this.slots.get(name);
    if (!s) return;
    s.queue = s.queue.then(() => {
      const old = s.client;
      s.client = undefined;
      // Not awaited: a server slow to answer LOGOUT must not hold up the account's next call.
      if (old?.usable) void old.logout().catch(() => old.close());
      else old?.close();
    });
  }

  /** Drops an account's connection at once, even under a call in flight (retire waits for it). */
  drop(name: string): void {
    const slot = this.slots.get(name);
    slot?.client?.close();
    if (slot) slot.client = undefined;
  }

  async closeAll(): Promise<void> {
    const all = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(
      all.map(async (s) => {
        await s.queue;
        if (s.client?.usable) await s.client.logout().catch(() => s.client?.close());
        else s.client?.close();
      }),
    );
  }
}
