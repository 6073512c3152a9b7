import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface RoundRobinProxy {
  url: string;
  /** Which upstream answered each request, in order (0-based). */
  served: number[];
  close(): Promise<void>;
}

/**
 * A plain round-robin HTTP proxy on 127.0.0.1: each request goes to the next upstream in turn, with no
 * session affinity, as a load balancer in front of stateless instances would send it. Responses
 * (SSE streams included) are piped back as they come.
 */
export async function roundRobinProxy(upstreams: readonly string[], path = "/mcp"): Promise<RoundRobinProxy> {
  const targets = upstreams.map((u) => new URL(u));
  const served: number[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const index = next++ % targets.length;
    const target = targets[index]!;
    served.push(index);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    served,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
