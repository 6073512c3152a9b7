import { randomUUID } from "node:crypto";
import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "./define.js";
import type { KitServer } from "./server.js";
import type { HttpHandle, HttpOptions } from "./transports.js";

// biome-ignore lint/suspicious/noExplicitAny: KitServer's context and state types do not matter to a transport
type AnyKit = KitServer<any, any>;

/** Streamable HTTP, one SDK session per client, behind a bearer token. */
export async function serveHttpNow(kit: AnyKit, options: HttpOptions): Promise<HttpHandle> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const app = createMcpExpressApp({
    host,
    ...(options.allowedHosts
      ? { allowedHosts: [...options.allowedHosts, host, "localhost", "127.0.0.1"] }
      : {}),
  });
  const auth = requireBearerAuth({
    verifier: options.verifier,
    ...(options.requiredScopes ? { requiredScopes: options.requiredScopes } : {}),
  });
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const noCaller: Caller = { scopes: [] };

  app.all(path, auth, async (req, res) => {
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (existing) {
      await existing.handleRequest(req, res, req.body);
      return;
    }
    if (req.method !== "POST" || !isInitializeRequest(req.body)) {
      res.status(400).json({
        jsonrpc: "2.0",
        error: { code: -32000, message: "No valid session: send initialize first" },
        id: null,
      });
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await kit.connect(transport, noCaller);
    await transport.handleRequest(req, res, req.body);
  });

  const server: HttpServer = await new Promise((resolve, reject) => {
    const s = app.listen(options.port, host, () => resolve(s));
    s.on("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}${path}`,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
