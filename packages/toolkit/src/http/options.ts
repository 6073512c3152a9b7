import type { OAuthTokenVerifier } from "@modelcontextprotocol/server";
import type { Caller } from "../define.js";

/**
 * Verifies a bearer token: the SDK's verifier interface, so an OAuth provider plugs in unchanged.
 * A verifier serving more than one user names the user in `extra.subject` (a string, e.g.
 * `"user:42"`): a 2025-era session belongs to the token's client and that subject, so it survives a
 * refreshed or stepped-up token of the same user. Without `subject` the session belongs to all of
 * `extra`, and a refreshed token whose `extra` differs (a token id, an issue time) gets 404 on it;
 * the endpoint says so in its log once.
 */
export type TokenVerifier = OAuthTokenVerifier;

/** What the HTTP listener knows of a request that the web-standard Request does not carry. */
export interface HttpRequestInfo {
  /** The peer's address as the socket reports it (a reverse proxy's, behind one). */
  remoteAddress?: string;
}

/**
 * Serves a request for any path but the MCP endpoint (sign-in pages, OAuth endpoints, metadata),
 * after the Host and Origin checks; `undefined` answers 404.
 */
export type HttpRoutes = (
  request: Request,
  info: HttpRequestInfo,
) => Response | undefined | Promise<Response | undefined>;

/** How the 2025-era sessions of an HTTP endpoint live and die. */
export interface LegacySessionOptions {
  /** A session unused this long is closed. Default 30 minutes. */
  idleMs?: number;
  /** At most this many live sessions; a new `initialize` past it gets 503. Default 1,000. */
  maxSessions?: number;
  /**
   * At most this many live sessions of one user (the token's client and `extra.subject`, see
   * `TokenVerifier`). A new `initialize` past it closes that user's least recently used session
   * with no request being answered, or gets 429 when every one is answering. Default 32.
   */
  maxSessionsPerUser?: number;
  /** The clock idleness is measured by (tests inject one). */
  now?: () => number;
}

export interface HttpHandlerOptions {
  /** Verifies each request's bearer token; without one every request is `caller` (in-process tests). */
  verifier?: TokenVerifier;
  /** Who calls when there is no verifier. Default: no scopes. */
  caller?: Caller;
  /** Scopes a token needs to reach the server at all (403 insufficient_scope otherwise). */
  requiredScopes?: string[];
  /** Advertised in WWW-Authenticate on 401 and 403 so clients find the authorization server. */
  resourceMetadataUrl?: string;
  /** Host header names (no port) accepted; DNS-rebinding protection refuses every other. */
  allowedHosts: string[];
  /** The path the MCP endpoint answers on; default /mcp. */
  path?: string;
  legacySessions?: LegacySessionOptions;
  /** Extra routes beside the MCP endpoint, behind the same DNS-rebinding checks. */
  routes?: HttpRoutes;
  /**
   * Answer a tools/call for a tool whose scope the token lacks with HTTP 403 `insufficient_scope`
   * naming the scopes needed (the token's plus the tool's), so an OAuth client can step up through
   * a second consent. Default false: the call gets the kit's INSUFFICIENT_SCOPE tool error.
   */
  scopeChallenge?: boolean;
  /** Where diagnostics go; default stderr. */
  log?: (line: string) => void;
}

export interface HttpOptions extends Omit<HttpHandlerOptions, "allowedHosts" | "verifier"> {
  verifier: TokenVerifier;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** Extra Host header values to accept besides the bound host and the loopback names. */
  allowedHosts?: string[];
}

export interface HttpHandle {
  url: string;
  /** How many 2025-era sessions are live (for tests and the benchmark). */
  liveSessions(): number;
  close(): Promise<void>;
}
