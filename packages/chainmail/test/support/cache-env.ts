// Shared set-up for the cache tests: a Dovecot with one user, a temp cache.db, and IMAP clients
// built here (so tests can choose QRESYNC and kill connections).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ImapFlow } from "imapflow";
import { type CacheDb, openCache } from "../../src/cache/index.js";
import { type Dovecot, startDovecot } from "../../src/testing/dovecot.js";

export const USER = "carla";
export const PASSWORD = "cache-test-pw";

export interface CacheEnv {
  dovecot: Dovecot;
  dir: string;
  db: CacheDb;
  client(opts?: { qresync?: boolean }): Promise<ImapFlow>;
  /** Appends with an explicit INTERNALDATE, returning the UID. */
  append(folder: string, raw: string | Buffer, flags?: string[], date?: Date): Promise<number>;
  close(): Promise<void>;
}

/** `extraConfig`: lines added to dovecot.conf (another namespace, say). */
export async function startCacheEnv(options: { extraConfig?: string } = {}): Promise<CacheEnv> {
  const dovecot = await startDovecot({ users: [{ name: USER, password: PASSWORD }], ...options });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-cache-"));
  const db = openCache(path.join(dir, "cache.db"));
  const clients: ImapFlow[] = [];
  const client = async (opts: { qresync?: boolean } = {}) => {
    const c = new ImapFlow({
      host: dovecot.host,
      port: dovecot.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: USER, pass: PASSWORD },
      logger: false,
      qresync: opts.qresync ?? false,
    });
    c.on("error", () => undefined);
    await c.connect();
    clients.push(c);
    return c;
  };
  let writer: ImapFlow | null = null;
  return {
    dovecot,
    dir,
    db,
    client,
    append: async (folder, raw, flags = [], date) => {
      writer ??= await client();
      const r = await writer.append(folder, raw, flags, date);
      if (!r || r.uid === undefined) throw new Error("APPEND gave no UID");
      return r.uid;
    },
    close: async () => {
      for (const c of clients) await c.logout().catch(() => c.close());
      db.close();
      await dovecot.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Message-IDs of the given UIDs in a folder, via a fresh FETCH. */
export async function messageIds(c: ImapFlow, folder: string, uids: number[]): Promise<string[]> {
  if (uids.length === 0) return [];
  const lock = await c.getMailboxLock(folder, { readOnly: true });
  try {
    const out: string[] = [];
    for await (const m of c.fetch(uids.join(","), { uid: true, envelope: true }, { uid: true }))
      out.push(m.envelope?.messageId ?? `uid:${m.uid}`);
    return out.sort();
  } finally {
    lock.release();
  }
}

/** Waits until `ok()` holds, polling every 20 ms, and fails with `what` after `ms`. */
export async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
