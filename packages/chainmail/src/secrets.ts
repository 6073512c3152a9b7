/**
 * Account passwords: one 0600 file per account in a 0700 dir. Only the daemon's IMAP/SMTP login reads
 * them; nothing here logs, audits or returns a secret.
 */
import fs from "node:fs";
import path from "node:path";
import { MailError } from "./errors.js";
import { ensurePrivateDir } from "./home.js";

export const ACCOUNT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function secretFile(dir: string, account: string): string {
  return fileOf(dir, account);
}

function fileOf(dir: string, account: string): string {
  if (!ACCOUNT_NAME_RE.test(account)) {
    throw new MailError("INVALID_ARGUMENT", `account name ${JSON.stringify(account)} is not valid`);
  }
  return path.join(dir, `${account}.secret`);
}

export function setSecret(dir: string, account: string, secret: string): void {
  // A trailing newline from `echo pw |` or a terminal is not part of the password.
  const value = secret.replace(/\r?\n$/, "");
  if (value.length === 0) throw new MailError("INVALID_ARGUMENT", "the password read from stdin is empty");
  if (value.length > 4096)
    throw new MailError("INVALID_ARGUMENT", "the password is longer than 4096 characters");
  ensurePrivateDir(dir);
  const file = fileOf(dir, account);
  // Write-then-rename so a reader never sees half a secret; the temp file is 0600 from the start.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, value, { mode: 0o600 });
  fs.renameSync(tmp, file);
  fs.chmodSync(file, 0o600);
}

export function getSecret(dir: string, account: string): string | undefined {
  const file = fileOf(dir, account);
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw unreadableSecret(account, file, err);
  }
}

/**
 * A stored secret (password or OAuth2 grant) that is there but cannot be read or looked at: its
 * file's permissions, a link, a directory in its place. Said as such, not as an internal error, and
 * without anything of the file's content.
 */
export function unreadableSecret(account: string, file: string, err: unknown): MailError {
  const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
  return new MailError(
    "AUTH_REQUIRED",
    `the stored secret of account ${account} cannot be read (${code}: ${file})`,
    "The user checks that file (a regular file the daemon's user can read), or stores the secret again with `chainmail secret set ACCOUNT` (`chainmail auth login ACCOUNT` for OAuth2).",
  );
}

export function hasSecret(dir: string, account: string): boolean {
  return fs.existsSync(fileOf(dir, account));
}
