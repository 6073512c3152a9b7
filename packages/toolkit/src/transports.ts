import type { OAuthTokenVerifier } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Caller } from "./define.js";
import type { KitServer } from "./server.js";

export type TokenVerifier = OAuthTokenVerifier;

// biome-ignore lint/suspicious/noExplicitAny: KitServer's context and state types do not matter to a transport
type AnyKit = KitServer<any, any>;

export async function serveStdio(kit: AnyKit, caller: Caller): Promise<void> {
  await kit.connect(new StdioServerTransport(), caller);
}

export interface HttpOptions {
  /** Default 127.0.0.1. Loopback hosts keep DNS-rebinding protection on. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  verifier: TokenVerifier;
  /** Scopes a token needs to connect at all (403 insufficient_scope otherwise). */
  requiredScopes?: string[];
  /** Extra Host header values to accept besides the bound host. */
  allowedHosts?: string[];
  /** The path the MCP endpoint answers on; default /mcp. */
  path?: string;
}

export interface HttpHandle {
  url: string;
  close(): Promise<void>;
}

/**
 * Streamable HTTP, one SDK session per client, behind a bearer token. The HTTP stack (express and
 * the SDK's HTTP transport) loads only when this is called, so stdio servers start without it.
 */
export async function serveHttp(kit: AnyKit, options: HttpOptions): Promise<HttpHandle> {
  const { serveHttpNow } = await import("./http.js");
  return serveHttpNow(kit, options);
}

/** A verifier that accepts one static token and grants it fixed scopes (for local single-user HTTP). */
export function staticTokenVerifier(
  token: string,
  scopes: readonly string[],
  clientId = "local",
): TokenVerifier {
  return {
    async verifyAccessToken(presented) {
      if (presented !== token) {
        const { InvalidTokenError } = await import("@modelcontextprotocol/sdk/server/auth/errors.js");
        throw new InvalidTokenError("Unknown token");
      }
      return { token, clientId, scopes: [...scopes], expiresAt: Math.floor(Date.now() / 1000) + 365 * 86400 };
    },
  };
}
