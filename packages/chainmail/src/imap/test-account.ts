/** test_account: an IMAP login with the capabilities, and an SMTP connect + auth (nodemailer verify). */
import nodemailer from "nodemailer";
import type { AccountConfig } from "../config.js";
import { isMailError, REASONS, type Reason } from "../errors.js";
import { certificateError, tlsOptions } from "../tls.js";
import { credentialsFor, nodemailerAuth } from "../auth/credentials.js";
import { openImap } from "./connection.js";

export interface CheckResult {
  ok: boolean;
  /** Server-provided text (untrusted). */
  capabilities?: string[];
  /** `detail` is the server's own text (untrusted), kept out of `message`. */
  error?: { reason: Reason; message: string; hint?: string; detail?: string };
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
        // A certificate failure's hint names ca_file; the others keep their reason's hint.
        ...(e?.hint && e.hint !== REASONS[e.reason].hint ? { hint: e.hint } : {}),
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
  const smtp = account.smtp;
  const authFailure = (err: unknown) => {
    const e = err as { code?: string; responseCode?: number };
    return e?.code === "EAUTH" || e?.responseCode === 535;
  };
  try {
    await credentialsFor(secretsDir).withLogin(account, smtp, "SMTP", authFailure, async (login) => {
      const t = nodemailer.createTransport({
        host: smtp.host,
        port: smtp.port,
        secure: smtp.tls === "tls",
        requireTLS: smtp.tls === "starttls",
        ignoreTLS: smtp.tls === "none",
        tls: tlsOptions(smtp),
        auth: nodemailerAuth(login),
        connectionTimeout: 15_000,
        greetingTimeout: 10_000,
        logger: false,
      });
      try {
        await t.verify();
      } finally {
        t.close();
      }
    });
    return { ok: true };
  } catch (err) {
    if (isMailError(err)) return { ok: false, error: { reason: err.reason, message: err.message } };
    const cert = certificateError(err, smtp, "smtp");
    if (cert)
      return {
        ok: false,
        error: {
          reason: cert.reason,
          message: cert.message,
          hint: cert.hint,
          ...(cert.detail ? { detail: cert.detail } : {}),
        },
      };
    const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
    return {
      ok: false,
      error: {
        reason: authFailure(err) ? "AUTH_REJECTED" : "SERVER_UNAVAILABLE",
        message: "the SMTP check failed; the server's reply is in detail",
        detail: (e.response ?? e.message ?? String(err)).slice(0, 300),
      },
    };
  }
}
