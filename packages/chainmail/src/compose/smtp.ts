/**
 * Hands a built message to the account's SMTP server with an explicit envelope. A failure says
 * whether the server may have taken the message: only a refusal before or at the end of DATA, or a
 * connection that never got that far, is `delivered: false` for sure.
 */
import nodemailer from "nodemailer";
import type { AccountConfig } from "../config.js";
import { credentialsFor, type Login, nodemailerAuth } from "../auth/credentials.js";
import { MailError, quoteServerText } from "../errors.js";

export interface Envelope {
  from: string;
  to: string[];
}

/** A recipient the server refused at RCPT TO while it accepted others; its reply is server text. */
export interface Refused {
  address: string;
  response: string;
}

export class SmtpFailure extends MailError {
  constructor(
    err: MailError,
    /** true when the server may have accepted the message despite the error. */
    readonly maybeSent: boolean,
  ) {
    super(err.reason, err.message, err.hint);
  }
}

const SURE_COMMANDS = new Set([
  "CONN",
  "EHLO",
  "HELO",
  "AUTH",
  "AUTH PLAIN",
  "AUTH LOGIN",
  "MAIL FROM",
  "RCPT TO",
  "STARTTLS",
]);

export async function sendRaw(
  account: AccountConfig,
  secretsDir: string,
  envelope: Envelope,
  raw: Buffer,
): Promise<{ response: string; refused: Refused[] }> {
  if (!account.smtp)
    throw new MailError(
      "UNSUPPORTED",
      `account ${account.name} has no SMTP server configured`,
      "Add [accounts.smtp] for the account in config.toml.",
    );
  const smtp = account.smtp;
  // The login (a password, or an OAuth2 token refreshed once when refused) and the auth state.
  return credentialsFor(secretsDir).withLogin(
    account,
    smtp,
    "SMTP",
    (err) => err instanceof SmtpFailure && err.reason === "AUTH_REJECTED",
    (login) => sendOnce(account, smtp, login, envelope, raw),
  );
}

async function sendOnce(
  account: AccountConfig,
  smtp: NonNullable<AccountConfig["smtp"]>,
  login: Login,
  envelope: Envelope,
  raw: Buffer,
): Promise<{ response: string; refused: Refused[] }> {
  const t = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.tls === "tls",
    requireTLS: smtp.tls === "starttls",
    ignoreTLS: smtp.tls === "none",
    auth: nodemailerAuth(login),
    connectionTimeout: 15_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    logger: false,
  });
  try {
    const info = (await t.sendMail({ envelope: { from: envelope.from, to: envelope.to }, raw })) as {
      response?: unknown;
      rejected?: unknown[];
      rejectedErrors?: Array<{ recipient?: string; response?: string; message?: string }>;
    };
    // Some recipients refused at RCPT, the rest accepted: the message went to those (a refusal of
    // every recipient is EENVELOPE, below).
    const refused = (info.rejected ?? []).map((address) => {
      const e = info.rejectedErrors?.find((x) => x.recipient === address);
      return { address: String(address), response: e?.response ?? e?.message ?? "" };
    });
    return { response: String(info.response ?? ""), refused };
  } catch (err) {
    const e = err as {
      code?: string;
      command?: string;
      responseCode?: number;
      response?: string;
      message?: string;
    };
    const text = quoteServerText(e.response ?? e.message ?? String(err));
    const auth = e.code === "EAUTH" || e.responseCode === 535;
    const refusedRecipients = e.code === "EENVELOPE";
    // A server's answer (a code) at any step means it did not take the message; so does a failure
    // before the message was handed over. A connection lost during or after DATA leaves it open.
    const sure = e.responseCode !== undefined || SURE_COMMANDS.has(e.command ?? "CONN") || auth;
    const reason = auth ? "AUTH_REJECTED" : refusedRecipients ? "INVALID_ARGUMENT" : "SERVER_UNAVAILABLE";
    throw new SmtpFailure(
      new MailError(reason, `the SMTP server of account ${account.name} did not take the message ${text}`),
      !sure,
    );
  } finally {
    t.close();
  }
}
