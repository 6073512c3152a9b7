/**
 * A hostile IMAP server for the injection tests: a TCP proxy between chainmail and the test Dovecot
 * that writes a stranger's text into the server's replies. Every tagged OK/NO/BAD and every untagged
 * OK/NO/BAD gets `text` after its response code, and a command whose line names `refuse` (a folder
 * name, a keyword) of the kinds in `REFUSABLE` is answered `NO` with `text` without reaching Dovecot.
 * Literals pass through unread in both directions, so message bodies are never rewritten. Without
 * `text` and `refuse` it only watches (`onCommand`), e.g. to count the FETCHes a backfill sends.
 */
import net from "node:net";

export interface ImapProxy {
  port: number;
  /** How many commands the proxy refused itself. */
  refused(): number;
  stop(): Promise<void>;
}

const REFUSABLE = /^(?:UID )?(?:CREATE|RENAME|DELETE|SELECT|EXAMINE|STORE|COPY|MOVE|APPEND|STATUS)\b/i;

/**
 * Splits a byte stream into lines, passing literals (`{n}` or `{n+}` at a line's end) through as
 * they are. `onLine` returns what to send on for a line (without its CRLF), or undefined to drop it.
 */
function lineSplitter(send: (b: Buffer) => void, onLine: (line: string) => string | undefined) {
  let buf = Buffer.alloc(0);
  let literal = 0;
  return (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (literal > 0) {
        if (buf.length === 0) return;
        const n = Math.min(literal, buf.length);
        send(buf.subarray(0, n));
        buf = buf.subarray(n);
        literal -= n;
        continue;
      }
      const end = buf.indexOf("\r\n");
      if (end < 0) return;
      const line = buf.subarray(0, end).toString("utf8");
      buf = buf.subarray(end + 2);
      const m = /\{(\d+)\+?\}$/.exec(line);
      if (m) {
        // A line ending in a literal's announcement is sent as it is: the literal follows it.
        send(Buffer.from(`${line}\r\n`, "utf8"));
        literal = Number(m[1]);
        continue;
      }
      const out = onLine(line);
      if (out !== undefined) send(Buffer.from(`${out}\r\n`, "utf8"));
    }
  };
}

export async function startImapProxy(opts: {
  /** Dovecot's port on 127.0.0.1. */
  upstream: number;
  /** The stranger's text written into the replies (none when absent). */
  text?: string;
  /** A command line naming this (and of a refusable kind) is refused with `text`. */
  refuse?: string;
  /** Sees every command line the client sends (literals not included), e.g. to count FETCHes. */
  onCommand?: (line: string) => void;
}): Promise<ImapProxy> {
  let refusals = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(opts.upstream, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    const fromServer = lineSplitter(
      (b) => client.write(b),
      (line) => {
        const m = /^(\S+) (OK|NO|BAD)( \[[^\]]*\])?(.*)$/i.exec(line);
        if (!m || m[1] === "+" || opts.text === undefined) return line;
        return `${m[1]} ${m[2]}${m[3] ?? ""} ${opts.text}${m[4]}`;
      },
    );
    const fromClient = lineSplitter(
      (b) => upstream.write(b),
      (line) => {
        opts.onCommand?.(line);
        const m = /^(\S+) (.*)$/.exec(line);
        if (m && opts.refuse !== undefined && REFUSABLE.test(m[2]!) && line.includes(opts.refuse)) {
          refusals++;
          client.write(`${m[1]} NO [CANNOT] ${opts.text ?? "refused"}\r\n`);
          return undefined;
        }
        return line;
      },
    );
    client.on("data", fromClient);
    upstream.on("data", fromServer);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  return {
    port: typeof addr === "object" && addr ? addr.port : 0,
    refused: () => refusals,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
