import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  originValidationResponse,
  requireBearerAuth,
  validateHostHeader,
} from "@modelcontextprotocol/server";
import type { Caller } from "../define.js";
import { decodeLine } from "../jsonrpc.js";
import type { AnyKit } from "../server.js";
import type { HttpHandlerOptions } from "./options.js";
import { LegacySessions } from "./sessions.js";

export interface KitHttpHandler {
  /** Web-standard face: one HTTP request in, one response out. */
  fetch(request: Request): Promise<Response>;
  liveSessions(): number;
  close(): Promise<void>;
}

const JSON_HEADERS = { "content-type": "application/json" };

function jsonError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: JSON_HEADERS,
  });
}

/**
 * The kit's Streamable HTTP endpoint as a fetch handler, both eras on one path: a 2026-07-28
 * request is answered statelessly by a fresh protocol instance (so instances behind a plain
 * round-robin proxy serve one client's calls), a 2025-era request by its session. In front of
 * both: DNS-rebinding protection (Host and Origin), the bearer token, and the kit's JSON-RPC
 * checks, which answer malformed requests with the code JSON-RPC names and one line of text.
 */
export function createKitHttpHandler(kit: AnyKit, options: HttpHandlerOptions): KitHttpHandler {
  const path = options.path ?? "/mcp";
  const fallback: Caller = options.caller ?? { scopes: [] };
  const callerOf = (auth: AuthInfo | undefined): Caller =>
    auth
      ? { scopes: auth.scopes, clientId: auth.clientId, ...(auth.extra ? { extra: auth.extra } : {}) }
      : fallback;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const onerror = (err: Error) => log(`http: ${err.message}`);

  const modern = createMcpHandler(() => kit.protocolInstance(fallback, { listening: false }), {
    legacy: "reject",
    onerror,
  });
  const stopNotifying = kit.onToolsChanged(() => modern.notify.toolsChanged());
  const sessions = new LegacySessions(
    (auth) => kit.protocolInstance(callerOf(auth), { listening: true }),
    options.legacySessions,
  );
  const gate = options.verifier
    ? requireBearerAuth({
        verifier: options.verifier,
        ...(options.requiredScopes ? { requiredScopes: options.requiredScopes } : {}),
        ...(options.resourceMetadataUrl ? { resourceMetadataUrl: options.resourceMetadataUrl } : {}),
      })
    : undefined;
  const allowedOrigins = options.allowedHosts.map((h) => h.replace(/^\[|\]$/g, ""));

  async function fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== path) return new Response("Not found", { status: 404 });
    // A request built in process (tests, the benchmark) has no Host header: its URL says the host.
    const host = validateHostHeader(
      request.headers.get("host") ?? new URL(request.url).host,
      options.allowedHosts,
    );
    if (!host.ok) return jsonError(403, -32000, `Forbidden: ${host.message}`);
    const origin = request.headers.has("origin")
      ? originValidationResponse(request, allowedOrigins)
      : undefined;
    if (origin) return origin;
    let auth: AuthInfo | undefined;
    if (gate) {
      const verdict = await gate(request);
      if (verdict instanceof Response) return verdict;
      auth = verdict;
    }
    let parsedBody: unknown;
    if (request.method === "POST") {
      const text = await request.text();
      const checked = decodeLine(text);
      const first = checked[0];
      if (checked.length === 1 && first && !first.ok) {
        if (!first.answer) return new Response(null, { status: 202 });
        const status = first.answer.error.code === -32602 ? 200 : 400;
        return new Response(JSON.stringify(first.answer), { status, headers: JSON_HEADERS });
      }
      // Both legs take the parsed body and, given one, read nothing of the request's own (the SDK
      // documents `parsedBody` so). A copy of the request carrying the bytes again would hang a
      // listener on the original's abort signal, reachable until a finalizer ran after GC: under
      // load (20 clients) that kept about 10 MB more alive and V8 sized a larger heap for it.
      parsedBody = JSON.parse(text);
    }
    await kit.ready();
    if (await isLegacyRequest(request, parsedBody)) return sessions.handle(request, auth, parsedBody);
    return modern.fetch(request, { ...(auth ? { authInfo: auth } : {}), parsedBody });
  }

  return {
    fetch,
    liveSessions: () => sessions.size,
    close: async () => {
      stopNotifying();
      await sessions.close();
      await modern.close();
    },
  };
}
