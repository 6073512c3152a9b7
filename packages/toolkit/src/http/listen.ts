import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import type { AnyKit } from "../server.js";
import { createKitHttpHandler } from "./handler.js";
import type { HttpHandle, HttpOptions } from "./options.js";

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/** Serves the kit's HTTP endpoint on a port: 127.0.0.1 unless told otherwise. */
export async function listenHttp(kit: AnyKit, options: HttpOptions): Promise<HttpHandle> {
  const host = options.host ?? "127.0.0.1";
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const handler = createKitHttpHandler(kit, {
    ...options,
    allowedHosts: [...new Set([shownHost, ...LOOPBACK_NAMES, ...(options.allowedHosts ?? [])])],
  });
  const onerror = (err: Error) =>
    (options.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(`http: ${err.message}`);
  const node = toNodeHandler({ fetch: (r) => handler.fetch(r) }, { onerror });
  const server = createServer((req, res) => {
    if (!options.routes) return void node(req, res);
    // Routes hear the peer's address (sign-in rate limits), which a web-standard Request cannot carry.
    const info = { ...(req.socket.remoteAddress ? { remoteAddress: req.socket.remoteAddress } : {}) };
    void toNodeHandler({ fetch: (r) => handler.fetch(r, info) }, { onerror })(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${shownHost}:${port}${options.path ?? "/mcp"}`,
    liveSessions: () => handler.liveSessions(),
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
