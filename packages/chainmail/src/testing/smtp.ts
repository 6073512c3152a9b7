/**
 * A real SMTP server for the compose tests (the `smtp-server` package on 127.0.0.1) that relays what
 * it accepts into the test Dovecot over LMTP, so a sent message can be read back over IMAP. It keeps
 * every message it accepted, so a test counts what reached the server (duplicates included).
 */
import net from "node:net";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";

export interface Relayed {
  from: string;
  to: string[];
  raw: Buffer;
}

export interface SmtpRelay {
  port: number;
  /** Every message the server accepted, in order. */
  received: Relayed[];
  /**
   * Every command line clients sent, as it came over the wire (AUTH redacted): the envelope as the
   * client wrote it, since smtp-server hands `onRcptTo` its addresses with punycode decoded.
   */
  commands: string[];
  /**
   * Every SMTP transaction clients began, from the command lines: MAIL FROM's path and each RCPT
   * TO's path exactly as written between the angle brackets (accepted or not), in order. This is
   * where a send policy is judged: what the server was asked to deliver to.
   */
  transactions(): Array<{ from: string; rcpts: string[] }>;
  /** Holds every message's end of DATA (no reply yet, nothing recorded) until `until` settles. */
  holdData(until: Promise<unknown>): void;
  stop(): Promise<void>;
}

/*
 * RFC 5321's Mailbox (with RFC 6531's UTF-8), written out from the grammar independently of the
 * address model under test: a path the send path hands over must read as exactly one of these, so a
 * test judging RCPT TO at the sink does not share a parser (or a bug) with what it judges.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u{80}-\\u{10FFFF}]";
const DOT_STRING = `${ATEXT}+(?:\\.${ATEXT}+)*`;
const QUOTED = '"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e\\u{80}-\\u{10FFFF}]|\\\\[\\x20-\\x7e])*"';
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const MAILBOX = new RegExp(`^(?:${DOT_STRING}|${QUOTED})@(${LABEL}(?:\\.${LABEL})*)$`, "u");

/** The domain (lowercased) of a MAIL FROM / RCPT TO path that is one RFC 5321 Mailbox, else undefined. */
export function smtpMailboxDomain(path: string): string | undefined {
  return MAILBOX.exec(path)?.[1]?.toLowerCase();
}

/** The users of the test Dovecot (src/testing/mailenv.ts). */
const LMTP_USERS = ["alice", "bob", "carol"];

/** The path inside `<…>` of a MAIL FROM or RCPT TO line, as the client wrote it. */
const pathOf = (line: string) => /^[A-Z ]+:\s*<(.*)>/i.exec(line)?.[1] ?? line;

export function transactionsOf(commands: readonly string[]): Array<{ from: string; rcpts: string[] }> {
  const out: Array<{ from: string; rcpts: string[] }> = [];
  for (const line of commands) {
    if (/^MAIL FROM:/i.test(line)) out.push({ from: pathOf(line), rcpts: [] });
    else if (/^RCPT TO:/i.test(line)) {
      if (out.length === 0) out.push({ from: "", rcpts: [] });
      out.at(-1)?.rcpts.push(pathOf(line));
    }
  }
  return out;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** dovecot.conf lines adding an LMTP listener on 127.0.0.1:port that delivers to the local users. */
export function lmtpConfig(port: number): string {
  return `protocols = imap lmtp
protocol lmtp {
  auth_username_format = %Ln
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = ${port}
  }
}
`;
}

export async function startSmtpRelay(opts: {
  lmtpPort: number;
  users: Array<{ name: string; password: string }>;
  /** Recipients refused at RCPT TO with 550 (the others are still accepted). */
  refuse?: (address: string) => boolean;
  /** The text after 550 of that refusal (a hostile server's words, in the injection tests). */
  refuseText?: string;
  /**
   * Accept only XOAUTH2 logins (no PLAIN, no LOGIN): `introspect` names the user a bearer token
   * stands for, or undefined for a token it does not accept (a test authorization server's).
   */
  xoauth2?: { introspect: (token: string) => string | undefined };
  /** Implicit TLS (port 465 style) with this certificate and key (PEM text). */
  tls?: { key: string; cert: string };
}): Promise<SmtpRelay> {
  const received: Relayed[] = [];
  let held: Promise<unknown> = Promise.resolve();
  const commands: string[] = [];
  const quiet = () => undefined;
  const lmtp = nodemailer.createTransport({
    host: "127.0.0.1",
    port: opts.lmtpPort,
    lmtp: true,
    ignoreTLS: true,
  });
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true, // plain AUTH over loopback, as a local relay would allow
    ...(opts.tls ? { secure: true, key: opts.tls.key, cert: opts.tls.cert } : {}),
    // smtp-server logs each command line at debug level (bunyan style); nothing else is kept.
    logger: {
      debug: (meta: { tnx?: string }, _message: string, line?: unknown) => {
        if (meta?.tnx === "command" && typeof line === "string") commands.push(line);
      },
      trace: quiet,
      info: quiet,
      warn: quiet,
      error: quiet,
      fatal: quiet,
    } as never,
    size: 64 * 1024 * 1024,
    ...(opts.xoauth2 ? { authMethods: ["XOAUTH2"] } : {}),
    onAuth(auth, _session, done) {
      if (opts.xoauth2) {
        const user = auth.method === "XOAUTH2" ? opts.xoauth2.introspect(auth.accessToken ?? "") : undefined;
        if (user !== undefined && user === auth.username) done(null, { user });
        // RFC 7628's failure: a JSON status in a 334 challenge, then 535 (smtp-server does both).
        else done(null, { data: { status: "401", schemes: "bearer", scope: "mail" } });
        return;
      }
      const u = opts.users.find((x) => x.name === auth.username && x.password === auth.password);
      if (u) done(null, { user: u.name });
      else done(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
    },
    onRcptTo(address, _session, done) {
      if (opts.refuse?.(address.address))
        done(
          Object.assign(new Error(opts.refuseText ?? "5.1.1 no such mailbox here"), { responseCode: 550 }),
        );
      else done();
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", async () => {
        await held.catch(() => undefined);
        const raw = Buffer.concat(chunks);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        const to = session.envelope.rcptTo.map((r) => r.address);
        received.push({ from, to, raw });
        // Only the test Dovecot's users (by local part, as its LMTP reads them) get a copy; the
        // others are accepted and only recorded, so a recipient LMTP does not know cannot fail it.
        const local = to.filter((a) => LMTP_USERS.includes(a.slice(0, a.lastIndexOf("@")).toLowerCase()));
        if (local.length === 0) return done();
        lmtp.sendMail({ envelope: { from, to: local }, raw }).then(
          () => done(),
          (err: Error) =>
            done(Object.assign(new Error(`relay failed: ${err.message}`), { responseCode: 451 })),
        );
      });
    },
  });
  // With TLS, a client that refuses the certificate ends the handshake; smtp-server emits that as
  // an error, which is the client's business, not a failure of this server.
  if (opts.tls) server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.server.address();
  return {
    port: typeof addr === "object" && addr ? addr.port : 0,
    received,
    commands,
    transactions: () => transactionsOf(commands),
    holdData: (until) => {
      held = until;
    },
    stop: async () => {
      lmtp.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
