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
    throw err;
  }
}

export function hasSecret(dir: string, account: string): boolean {
  return fs.existsSync(fileOf(dir, account));
}
