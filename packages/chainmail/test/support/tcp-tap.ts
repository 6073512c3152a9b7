/**
 * A TCP proxy to a test server that sees the server's bytes pass: it counts them, can hold them
 * back once a number more have gone through (a download stalled halfway), and can drop every
 * connection. For tests that judge what crossed the wire, or what a client does mid-transfer.
 */
import net from "node:net";

export interface TcpTap {
  port: number;
  /** Bytes the server sent through the tap so far. */
  fromServer(): number;
  /** From now on, hold back what the server sends once `bytes` more have gone through. */
  stallAfter(bytes: number): void;
  stalled(): boolean;
  /** Ends every connection (held-back bytes are lost) and stops holding back. */
  dropAll(): void;
  /**
   * Hears each chunk either side sends, before it is passed on (null: nobody hears): what the
   * hearer does synchronously is done before the other side sees the chunk.
   */
  onData(hear: ((chunk: Buffer, from: "client" | "server") => void) | null): void;
  stop(): Promise<void>;
}

export async function startTcpTap(upstream: number): Promise<TcpTap> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let budget = Number.POSITIVE_INFINITY;
  let holding = false;
  let fromServer = 0;
  let hear: ((chunk: Buffer, from: "client" | "server") => void) | null = null;
  const server = net.createServer((client) => {
    const up = net.connect(upstream, "127.0.0.1");
    const pair: [net.Socket, net.Socket] = [client, up];
    pairs.add(pair);
    const end = () => {
      client.destroy();
      up.destroy();
      pairs.delete(pair);
    };
    client.on("error", end).on("close", end);
    up.on("error", end).on("close", end);
    client.on("data", (b: Buffer) => {
      hear?.(b, "client");
      up.write(b);
    });
    up.on("data", (b: Buffer) => {
      hear?.(b, "server");
      if (holding) return;
      const passed = b.length > budget ? b.subarray(0, budget) : b;
      budget -= passed.length;
      fromServer += passed.length;
      client.write(passed);
      if (passed.length < b.length) holding = true;
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const dropAll = () => {
    budget = Number.POSITIVE_INFINITY;
    holding = false;
    for (const [a, b] of [...pairs]) {
      a.destroy();
      b.destroy();
    }
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    fromServer: () => fromServer,
    stallAfter: (bytes) => {
      budget = bytes;
      holding = false;
    },
    stalled: () => holding,
    dropAll,
    onData: (h) => {
      hear = h;
    },
    stop: () =>
      new Promise<void>((r) => {
        dropAll();
        server.close(() => r());
      }),
  };
}
