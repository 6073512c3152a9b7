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
  stop(): Promise<void>;
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
  /**
   * Accept only XOAUTH2 logins (no PLAIN, no LOGIN): `introspect` names the user a bearer token
   * stands for, or undefined for a token it does not accept (a test authorization server's).
   */
  xoauth2?: { introspect: (token: string) => string | undefined };
}): Promise<SmtpRelay> {
  const received: Relayed[] = [];
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
        done(Object.assign(new Error("5.1.1 no such mailbox here"), { responseCode: 550 }));
      else done();
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        const to = session.envelope.rcptTo.map((r) => r.address);
        received.push({ from, to, raw });
        lmtp.sendMail({ envelope: { from, to }, raw }).then(
          () => done(),
          (err: Error) =>
            done(Object.assign(new Error(`relay failed: ${err.message}`), { responseCode: 451 })),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.server.address();
  return {
    port: typeof addr === "object" && addr ? addr.port : 0,
    received,
    commands,
    stop: async () => {
      lmtp.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
