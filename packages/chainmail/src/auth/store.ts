/**
 * The stored OAuth2 grant of an account: its refresh token, kept like a password (a 0600 file in the
 * 0700 secrets dir, written by rename so a reader never sees half of one). Access tokens are never
 * written anywhere: they live in the daemon's memory (./tokens.ts).
 */
import fs from "node:fs";
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

export function saveGrant(dir: string, account: string, grant: Omit<StoredGrant, "saved_at">): void {
  ensurePrivateDir(dir);
  const file = grantFile(dir, account);
  const tmp = `${file}.${process.pid}.tmp`;
  const body: StoredGrant = { ...grant, saved_at: new Date().toISOString() };
  fs.writeFileSync(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
  // The new refresh token must be on disk before the old one is forgotten: a provider that rotates
  // accepts each one once, and a crash between the two would otherwise lose the grant.
  const fd = fs.openSync(tmp, "r");
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  fs.chmodSync(file, 0o600);
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

/** Deletes the stored grant; true when there was one. */
export function deleteGrant(dir: string, account: string): boolean {
  try {
    fs.unlinkSync(grantFile(dir, account));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
