/**
 * A TCP proxy in front of a test IMAP server that makes the server refuse chosen commands: a
 * command whose text (after the tag) matches a rule still reaches the server, but its tagged answer
 * is rewritten to the rule's NO or BAD and text. The server really ran it, so a refused SEARCH or
 * FETCH looks to the client exactly as a server's refusal does (untagged data, then a tagged NO).
 * Plain connections only (no TLS, no COMPRESS), which is what the test Dovecot speaks.
 */
import net from "node:net";

export interface RefuseRule {
  /** Tested against a command line without its tag, e.g. /^UID SEARCH/i. */
  command: RegExp;
  status: "NO" | "BAD";
  /** The text after the status; it must not contain CR or LF. */
  text: string;
}

export interface RefusingProxy {
  port: number;
  /** Sets the rules applied from the next command on; [] forwards everything unchanged. */
  refuse(rules: RefuseRule[]): void;
  /** How many tagged answers were rewritten so far. */
  refused(): number;
  /** Every command line the clients sent so far, without its tag (e.g. "UID SORT RETURN (ALL) ..."). */
  commands(): string[];
  stop(): Promise<void>;
}

/**
 * Splits an IMAP byte stream into lines, each with any literals it announces ({n} or {n+} at its
 * end) included, so a line inside a message body is never taken for a command or an answer.
 */
class LineReader {
  private buf = Buffer.alloc(0);
  private literal = 0;
  private current: Buffer[] = [];
  constructor(private readonly onLine: (firstLine: string, whole: Buffer) => void) {}
  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      if (this.literal > 0) {
        if (this.buf.length < this.literal) return;
        this.current.push(this.buf.subarray(0, this.literal));
        this.buf = this.buf.subarray(this.literal);
        this.literal = 0;
      }
      const nl = this.buf.indexOf("\n");
      if (nl < 0) return;
      const line = this.buf.subarray(0, nl + 1);
      this.buf = this.buf.subarray(nl + 1);
      this.current.push(line);
      const m = /\{(\d+)\+?\}\r?\n$/.exec(line.toString("latin1"));
      if (m) {
        this.literal = Number(m[1]);
        continue;
      }
      const whole = Buffer.concat(this.current);
      this.current = [];
      this.onLine(whole.subarray(0, whole.indexOf("\n") + 1).toString("latin1"), whole);
    }
  }
}

/**
 * `target` may be a function, read at each connection, so the proxy can start before the server
 * whose port it forwards to (a test env whose config names the proxy's port).
 */
export async function startRefusingProxy(
  target: { host: string; port: number } | (() => { host: string; port: number }),
): Promise<RefusingProxy> {
  let rules: RefuseRule[] = [];
  let count = 0;
  const sent: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const to = typeof target === "function" ? target() : target;
    const upstream = net.connect(to.port, to.host);
    sockets.add(client);
    sockets.add(upstream);
    // Tags of commands in flight whose tagged answer is to be rewritten.
    const marked = new Map<string, RefuseRule>();
    const fromClient = new LineReader((first, whole) => {
      const m = /^(\S+) (.*)$/s.exec(first.trimEnd());
      if (m) sent.push(m[2]!);
      const rule = m ? rules.find((r) => r.command.test(m[2]!)) : undefined;
      if (m && rule) marked.set(m[1]!, rule);
      upstream.write(whole);
    });
    const fromServer = new LineReader((first, whole) => {
      const tag = /^(\S+) (OK|NO|BAD)\b/i.exec(first)?.[1];
      const rule = tag ? marked.get(tag) : undefined;
      if (tag && rule) {
        marked.delete(tag);
        count++;
        client.write(`${tag} ${rule.status} ${rule.text}\r\n`);
        return;
      }
      client.write(whole);
    });
    client.on("data", (d: Buffer) => fromClient.push(d));
    upstream.on("data", (d: Buffer) => fromServer.push(d));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", close);
    upstream.on("close", close);
    client.on("error", close);
    upstream.on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    refuse: (r) => {
      rules = r;
    },
    refused: () => count,
    commands: () => [...sent],
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
