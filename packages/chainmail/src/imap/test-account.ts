/** test_account: an IMAP login with the capabilities, and an SMTP connect + auth (nodemailer verify). */
import nodemailer from "nodemailer";
import type { AccountConfig } from "../config.js";
import { isMailError, type Reason } from "../errors.js";
import { getSecret } from "../secrets.js";
import { openImap } from "./connection.js";

export interface CheckResult {
  ok: boolean;
  /** Server-provided text (untrusted). */
  capabilities?: string[];
  /** `detail` is the server's own text (untrusted), kept out of `message`. */
  error?: { reason: Reason; message: string; detail?: string };
  skipped?: boolean;
}

export async function testImap(account: AccountConfig, secretsDir: string): Promise<CheckResult> {
  try {
    const client = await openImap(account, secretsDir);
    const capabilities = [...client.capabilities.keys()].sort();
    await client.logout().catch(() => client.close());
    return { ok: true, capabilities };
  } catch (err) {
    const e = isMailError(err) ? err : undefined;
    return {
      ok: false,
      error: {
        reason: e?.reason ?? "SERVER_UNAVAILABLE",
        message: e?.message ?? "IMAP check failed",
        ...(e?.detail ? { detail: e.detail } : {}),
      },
    };
  }
}

export async function testSmtp(account: AccountConfig, secretsDir: string): Promise<CheckResult> {
  if (!account.smtp)
    return {
      ok: false,
      skipped: true,
      error: { reason: "NOT_FOUND", message: "no smtp server is configured" },
    };
  const pass = getSecret(secretsDir, account.name);
  if (pass === undefined) {
    return {
      ok: false,
      error: { reason: "AUTH_REQUIRED", message: `no password is stored for account ${account.name}` },
    };
  }
  const t = nodemailer.createTransport({
    host: account.smtp.host,
    port: account.smtp.port,
    secure: account.smtp.tls === "tls",
    requireTLS: account.smtp.tls === "starttls",
    ignoreTLS: account.smtp.tls === "none",
    auth: { user: account.username, pass },
    connectionTimeout: 15_000,
    greetingTimeout: 10_000,
    logger: false,
  });
  try {
    await t.verify();
    return { ok: true };
  } catch (err) {
    const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
    const auth = e.code === "EAUTH" || e.responseCode === 535;
    return {
      ok: false,
      error: {
        reason: auth ? "AUTH_REJECTED" : "SERVER_UNAVAILABLE",
        message: "the SMTP check failed; the server's reply is in detail",
        detail: (e.response ?? e.message ?? String(err)).slice(0, 300),
      },
    };
  } finally {
    t.close();
  }
}
