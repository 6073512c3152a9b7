/**
 * The stored OAuth2 grant of an account: its refresh token, kept like a password (a 0600 file in the
 * 0700 secrets dir, written by rename so a reader never sees half of one, and synced so a crash never
 * leaves a truncated one). Access tokens are never written anywhere: they live in the daemon's memory
 * (./credentials.ts).
 *
 * Every change of the file (a sign-in, a rotation, a sign-out) happens under the account's grant
 * lock, a file next to it: two processes may share the secrets dir (two daemons whose sockets differ,
 * the CLI signing in), and a provider that rotates refresh tokens accepts each one once, so the
 * refresh that reads the grant, presents it and stores its successor must not interleave with another.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MailError } from "../errors.js";
import { ensurePrivateDir } from "../home.js";
import { ACCOUNT_NAME_RE, unreadableSecret } from "../secrets.js";

export interface StoredGrant {
  refresh_token: string;
  scope?: string | undefined;
  /** ISO time of the sign-in or the rotation that wrote it. */
  saved_at: string;
}

export function grantFile(dir: string, account: string): string {
  if (!ACCOUNT_NAME_RE.test(account))
    throw new MailError("INVALID_ARGUMENT", `account name ${JSON.stringify(account)} is not valid`);
  return path.join(dir, `${account}.oauth.json`);
}

/** What identifies one version of a file: a write by rename gives a new inode. */
export function fileVersion(file: string): string | undefined {
  try {
    const st = fs.statSync(file);
    return `${st.ino}:${st.mtimeMs}:${st.size}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** How long a lock may be held before another process takes it (a refresh's requests end well before). */
const LOCK_STALE_MS = 120_000;
const LOCK_POLL_MS = 25;
/** When this process started: a lock older than that with our pid is a previous life's (containers). */
const STARTED = Date.now() - process.uptime() * 1000;

function lockFile(dir: string, account: string): string {
  return `${grantFile(dir, account)}.lock`;
}

/** True when the lock's holder is gone: its process ended, or it held it far too long. */
function staleLock(file: string): boolean {
  let text: string;
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
    text = fs.readFileSync(file, "utf8");
  } catch {
    return false; // released meanwhile: try again
  }
  if (Date.now() - st.mtimeMs > LOCK_STALE_MS) return true;
  const [pid, host] = text.trim().split(" ");
  if (host !== os.hostname()) return false; // a process elsewhere (a shared home): only its age tells
  const n = Number(pid);
  if (n === process.pid) return st.mtimeMs < STARTED;
  try {
    process.kill(n, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Takes the account's grant lock (waiting for another holder), returns its release. A holder that
 * died or hung is taken over: the lock is removed and taken afresh, which two waiters could do at
 * once only if both judged it stale in the same few microseconds.
 */
export async function lockGrant(dir: string, account: string): Promise<() => void> {
  ensurePrivateDir(dir);
  const file = lockFile(dir, account);
  for (;;) {
    try {
      const fd = fs.openSync(
        file,
        fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
        0o600,
      );
      fs.writeSync(fd, `${process.pid} ${os.hostname()}\n`);
      fs.closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        fs.rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (staleLock(file)) fs.rmSync(file, { force: true });
    else await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
}

/** Runs `fn` holding the account's grant lock. */
export async function withGrantLock<T>(dir: string, account: string, fn: () => T | Promise<T>): Promise<T> {
  const release = await lockGrant(dir, account);
  try {
    return await fn();
  } finally {
    release();
  }
}

/**
 * Writes the grant; the caller holds the grant lock. The temporary file is created afresh (never
 * through a link or over a leftover), synced, renamed over the grant, and the rename synced: the new
 * refresh token must be on disk before the old one is forgotten, since a provider that rotates
 * accepts each one once.
 */
export function writeGrant(dir: string, account: string, grant: Omit<StoredGrant, "saved_at">): void {
  ensurePrivateDir(dir);
  const file = grantFile(dir, account);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  const body: StoredGrant = { ...grant, saved_at: new Date().toISOString() };
  const fd = fs.openSync(
    tmp,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    0o600,
  );
  try {
    fs.writeFileSync(fd, `${JSON.stringify(body)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  const dfd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    fs.fsyncSync(dfd);
  } finally {
    fs.closeSync(dfd);
  }
}

/** Stores a new sign-in's grant, under the lock. */
export function saveGrant(dir: string, account: string, grant: Omit<StoredGrant, "saved_at">): Promise<void> {
  return withGrantLock(dir, account, () => writeGrant(dir, account, grant));
}

export function loadGrant(dir: string, account: string): StoredGrant | undefined {
  let text: string;
  try {
    text = fs.readFileSync(grantFile(dir, account), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw unreadableSecret(account, grantFile(dir, account), err);
  }
  try {
    const v = JSON.parse(text) as Partial<StoredGrant>;
    if (typeof v.refresh_token === "string" && v.refresh_token.length > 0)
      return { refresh_token: v.refresh_token, scope: v.scope, saved_at: String(v.saved_at ?? "") };
  } catch {
    // fall through: a damaged file is no grant
  }
  return undefined;
}

/** Deletes the stored grant, under the lock (a refresh under way cannot write it back); true when there was one. */
export function deleteGrant(dir: string, account: string): Promise<boolean> {
  return withGrantLock(dir, account, () => {
    try {
      fs.unlinkSync(grantFile(dir, account));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw err;
    }
  });
}
