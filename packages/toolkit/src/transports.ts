import type { HttpHandle, HttpOptions, TokenVerifier } from "./http/options.js";
import type { AnyKit } from "./server.js";

export type {
  HttpHandle,
  HttpHandlerOptions,
  HttpOptions,
  HttpRequestInfo,
  HttpRoutes,
  LegacySessionOptions,
  TokenVerifier,
} from "./http/options.js";

/**
 * Streamable HTTP in both protocol eras, behind a bearer token. The HTTP modules load only when this
 * is called, so a stdio server starts without them.
 */
export async function serveHttp(kit: AnyKit, options: HttpOptions): Promise<HttpHandle> {
  const { listenHttp } = await import("./http/listen.js");
  return listenHttp(kit, options);
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
        const { OAuthError, OAuthErrorCode } = await import("@modelcontextprotocol/server");
        throw new OAuthError(OAuthErrorCode.InvalidToken, "Unknown token");
      }
      return { token, clientId, scopes: [...scopes], expiresAt: Math.floor(Date.now() / 1000) + 365 * 86400 };
    },
  };
}
