/**
 * A round-robin HTTP proxy for the bench, loopback only:
 * `node proxy.js [--affinity] PORT_A PORT_B ...` prints `listening on http://127.0.0.1:PORT`.
 *
 * Each request goes to the next backend in turn. A 2025-era session lives in one process, so with
 * `--affinity` a request carrying an `Mcp-Session-Id` goes to the backend that issued that id
 * (learned from its response); 2026-07-28 requests carry no session and always rotate.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const args = process.argv.slice(2);
const affinity = args.includes("--affinity");
const ports = args.filter((a) => a !== "--affinity").map(Number);
if (ports.length === 0 || ports.some((p) => !Number.isInteger(p) || p <= 0)) {
  process.stderr.write("usage: proxy.js [--affinity] PORT...\n");
  process.exit(2);
}
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const owner = new Map<string, number>();
let turn = 0;

function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, retried: boolean): void {
  const sid = req.headers["mcp-session-id"];
  const pinned = affinity && typeof sid === "string" ? owner.get(sid) : undefined;
  const backend = pinned ?? turn++ % ports.length;
  const upstream = request(
    {
      host: "127.0.0.1",
      port: ports[backend],
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent,
    },
    (answer) => {
      const issued = answer.headers["mcp-session-id"];
      if (affinity && typeof issued === "string") owner.set(issued, backend);
      if (affinity && req.method === "DELETE" && typeof sid === "string") owner.delete(sid);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", (err: NodeJS.ErrnoException) => {
    // A kept-alive socket the backend closed while idle fails before the request reached it: retry once.
    if (!retried && upstream.reusedSocket && err.code === "ECONNRESET") return forward(req, res, body, true);
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`proxy: ${err.message}`);
  });
  upstream.end(body);
}

const server = createServer((req, res) => {
  // Bodies here are small JSON-RPC messages; holding one whole makes a retry possible.
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => forward(req, res, Buffer.concat(chunks), false));
});
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(`proxy listening on http://127.0.0.1:${port}\n`);
});
process.once("SIGTERM", () => process.exit(0));
