/**
 * Hands a built message to the account's SMTP server with an explicit envelope. A failure says
 * whether the server may have taken the message: only a refusal before or at the end of DATA, or a
 * connection that never got that far, is `delivered: false` for sure.
 */
import SMTPConnection, { type SMTPConnectionAuth } from "nodemailer/lib/smtp-connection";
import type { AccountConfig } from "../config.js";
import XOAuth2 from "nodemailer/lib/xoauth2";
import { credentialsFor, type Login } from "../auth/credentials.js";
import { MailError } from "../errors.js";
import { certificateError, tlsOptions } from "../tls.js";

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
    super(err.reason, err.message, err.hint, err.detail);
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

/**
 * SMTPConnection's login for a password or an OAuth2 access token (XOAUTH2: nodemailer's XOAuth2
 * with a token it only hands on; the refresh and the refused-token retry are the credentials' own).
 */
function smtpAuth(login: Login): SMTPConnectionAuth {
  if (!("accessToken" in login)) return { user: login.user, pass: login.pass };
  const oauth2 = new XOAuth2({ user: login.user, accessToken: login.accessToken });
  return { user: login.user, method: "XOAUTH2", oauth2 } as SMTPConnectionAuth;
}

interface SendInfo {
  response?: string;
  rejected?: string[];
  rejectedErrors?: Array<{ recipient?: string; response?: string; message?: string }>;
}

/**
 * One SMTP transaction over nodemailer's SMTPConnection, given the envelope as it is: MAIL FROM and
 * each RCPT TO carry these strings byte for byte. (nodemailer's transport would parse envelope
 * strings again with its own address parser, which splits `<a@x,b@y>` in two.) As the transport
 * does, it logs in when the server offers AUTH.
 */
function transaction(
  account: AccountConfig & { smtp: NonNullable<AccountConfig["smtp"]> },
  auth: SMTPConnectionAuth,
  envelope: Envelope,
  raw: Buffer,
): Promise<SendInfo> {
  const conn = new SMTPConnection({
    host: account.smtp.host,
    port: account.smtp.port,
    secure: account.smtp.tls === "tls",
    requireTLS: account.smtp.tls === "starttls",
    ignoreTLS: account.smtp.tls === "none",
    // The system CAs, plus the server's ca_file when it has one.
    tls: tlsOptions(account.smtp),
    connectionTimeout: 15_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    logger: false,
  });
  return new Promise<SendInfo>((resolve, reject) => {
    let settled = false;
    const finish = (err: unknown, info?: SendInfo) => {
      if (settled) return;
      settled = true;
      conn.close();
      if (err) reject(err);
      else resolve(info ?? {});
    };
    // Kept for the connection's life: an error after the answer (a late socket error) must find a listener.
    conn.on("error", (err: Error) => finish(err));
    conn.connect((err) => {
      if (err) return finish(err);
      // A copy: SMTPConnection keeps its state on the envelope object it is given.
      const send = () =>
        conn.send({ from: envelope.from, to: [...envelope.to] }, raw, (e, info) =>
          e ? finish(e) : finish(null, info as SendInfo),
        );
      if (conn.allowsAuth) conn.login(auth, (e) => (e ? finish(e) : send()));
      else send();
    });
  });
}

export async function sendRaw(
  account: AccountConfig,
  secretsDir: string,
  envelope: Envelope,
  raw: Buffer,
): Promise<{ response: string; refused: Refused[] }> {
  const smtp = account.smtp;
  if (!smtp)
    throw new MailError(
      "UNSUPPORTED",
      `account ${account.name} has no SMTP server configured`,
      "Add [accounts.smtp] for the account in config.toml.",
    );
  // The login (a password, or an OAuth2 token refreshed once when refused) and the auth state.
  return credentialsFor(secretsDir).withLogin(
    account,
    smtp,
    "SMTP",
    (err) => err instanceof SmtpFailure && err.reason === "AUTH_REJECTED",
    (login) => sendOnce(account, smtp, smtpAuth(login), envelope, raw),
  );
}

async function sendOnce(
  account: AccountConfig,
  smtp: NonNullable<AccountConfig["smtp"]>,
  auth: SMTPConnectionAuth,
  envelope: Envelope,
  raw: Buffer,
): Promise<{ response: string; refused: Refused[] }> {
  try {
    const info = await transaction({ ...account, smtp }, auth, envelope, raw);
    // Some recipients refused at RCPT, the rest accepted: the message went to those (a refusal of
    // every recipient is EENVELOPE, below).
    const refused = (info.rejected ?? []).map((address) => {
      const e = info.rejectedErrors?.find((x) => x.recipient === address);
      return { address: String(address), response: e?.response ?? e?.message ?? "" };
    });
    return { response: String(info.response ?? ""), refused };
  } catch (err) {
    // A certificate failure comes before any command: the message was not sent.
    const cert = certificateError(err, smtp, "smtp");
    if (cert) throw new SmtpFailure(cert, false);
    const e = err as {
      code?: string;
      command?: string;
      responseCode?: number;
      response?: string;
      message?: string;
    };
    // Only an answer of the server (a response) is its text; a socket failure (ECONNREFUSED,
    // ETIMEDOUT) is nodemailer's, and says the server was not reached.
    const answered = e.response !== undefined || e.responseCode !== undefined;
    const network = answered ? undefined : (/\bE[A-Z]{3,}\b/.exec(e.message ?? "")?.[0] ?? e.code ?? "error");
    // The server's reply is outside text: it goes in detail, never in the message.
    const reply = e.response ?? e.message ?? String(err);
    const auth = e.code === "EAUTH" || e.responseCode === 535;
    const refusedRecipients = e.code === "EENVELOPE";
    // A server's answer (a code) at any step means it did not take the message; so does a failure
    // before the message was handed over. A connection lost during or after DATA leaves it open.
    const sure = e.responseCode !== undefined || SURE_COMMANDS.has(e.command ?? "CONN") || auth;
    const reason = auth ? "AUTH_REJECTED" : refusedRecipients ? "INVALID_ARGUMENT" : "SERVER_UNAVAILABLE";
    throw new SmtpFailure(
      network !== undefined && !auth && !refusedRecipients
        ? new MailError(
            "SERVER_UNAVAILABLE",
            `the connection to the SMTP server of account ${account.name} failed (${network}); ${sure ? "the message was not sent" : "the message may or may not have gone out"}`,
            sure ? "Try again later, or run test_account to check the SMTP settings." : undefined,
          )
        : new MailError(
            reason,
            `the SMTP server of account ${account.name} did not take the message; its reply is in detail`,
            undefined,
            reply,
          ),
      !sure,
    );
  }
}
