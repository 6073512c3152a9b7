import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  createMcpHandler,
  isLegacyRequest,
  originValidationResponse,
  requireBearerAuth,
  OAuthError,
  OAuthErrorCode,
  validateHostHeader,
} from "@modelcontextprotocol/server";
import type { Caller } from "../define.js";
import { decodeLine } from "../jsonrpc.js";
import { BODY_TOO_LARGE, readBodyText } from "./body.js";
import type { AnyKit } from "../server.js";
import { SCOPE_META_KEY } from "../server.js";
import type { HttpHandlerOptions, HttpRequestInfo } from "./options.js";
import { LegacySessions } from "./sessions.js";

export interface KitHttpHandler {
  /** Web-standard face: one HTTP request in, one response out. */
  fetch(request: Request, info?: HttpRequestInfo): Promise<Response>;
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
    log,
  );
  const gate = options.verifier
    ? requireBearerAuth({
        verifier: options.verifier,
        ...(options.requiredScopes ? { requiredScopes: options.requiredScopes } : {}),
        ...(options.resourceMetadataUrl ? { resourceMetadataUrl: options.resourceMetadataUrl } : {}),
      })
    : undefined;
  const allowedOrigins = options.allowedHosts.map((h) => h.replace(/^\[|\]$/g, ""));
  const scopeOf = toolScopes(kit);

  /** A 403 naming what a tools/call in `body` needs beyond the token's scopes, if it needs more. */
  function stepUp(auth: AuthInfo, body: unknown): Response | undefined {
    for (const message of Array.isArray(body) ? body : [body]) {
      const m = message as { method?: unknown; params?: { name?: unknown } } | null;
      if (m?.method !== "tools/call" || typeof m.params?.name !== "string") continue;
      const needed = scopeOf(m.params.name);
      if (needed === undefined || auth.scopes.includes(needed)) continue;
      return bearerAuthChallengeResponse(
        new OAuthError(
          OAuthErrorCode.InsufficientScope,
          `The tool ${m.params.name} needs the scope ${needed}`,
        ),
        {
          requiredScopes: [...new Set([...auth.scopes, needed])],
          ...(options.resourceMetadataUrl ? { resourceMetadataUrl: options.resourceMetadataUrl } : {}),
        },
      );
    }
    return undefined;
  }

  async function fetch(request: Request, info: HttpRequestInfo = {}): Promise<Response> {
    const onPath = new URL(request.url).pathname === path;
    if (!onPath && !options.routes) return new Response("Not found", { status: 404 });
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
    if (!onPath) return (await options.routes?.(request, info)) ?? new Response("Not found", { status: 404 });
    let auth: AuthInfo | undefined;
    if (gate) {
      const verdict = await gate(request);
      if (verdict instanceof Response) return verdict;
      auth = verdict;
    }
    let parsedBody: unknown;
    if (request.method === "POST") {
      // The SDK's bound (4 MiB), which its Node adapter applies before this too
      const text = await readBodyText(request);
      if (text === undefined) return jsonError(413, -32000, BODY_TOO_LARGE);
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
      if (auth && options.scopeChallenge) {
        const refused = stepUp(auth, parsedBody);
        if (refused) return refused;
      }
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

/** The scope each tool needs, by name, read from tools/list once per name (a tool's scope never changes). */
function toolScopes(kit: AnyKit): (name: string) => string | undefined {
  const known = new Map<string, string | undefined>();
  return (name) => {
    if (!known.has(name)) {
      const tool = kit.listTools().find((t) => t.name === name);
      if (!tool) return undefined;
      const scope = tool._meta?.[SCOPE_META_KEY];
      known.set(name, typeof scope === "string" ? scope : undefined);
    }
    return known.get(name);
  };
}
