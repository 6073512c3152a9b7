import { randomUUID } from "node:crypto";
import {
  type AuthInfo,
  isInitializeRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { LegacySessionOptions } from "./options.js";

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** Who opened it (`ownerOf`): a session id is no key to another client's or user's session. */
  owner: string | undefined;
  lastSeen: number;
  /** Requests still being answered; a busy session is never closed for idleness. */
  busy: number;
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
export const DEFAULT_MAX_SESSIONS = 1_000;

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * Whose a session is: the token's client and its user. The client alone is not enough: every user
 * of one client application (a client ID metadata document's URL) shares its client ID, and a
 * session id in another user's hands answered that user's questions and ended their session. The
 * user is `extra.subject` when the verifier names one (a string), else all of `extra`: a verifier
 * whose `extra` changes for one user (a narrowed restriction, a new grant on step-up) names the user
 * in `subject`, or the session ends with the change. Scopes are left out, so a token stepped up to
 * more scopes keeps its session.
 */
export function ownerOf(auth: AuthInfo | undefined): string | undefined {
  if (!auth) return undefined;
  const subject = auth.extra?.["subject"];
  return JSON.stringify([auth.clientId, typeof subject === "string" ? { subject } : (auth.extra ?? null)]);
}

/**
 * The 2025-era Streamable HTTP sessions of one endpoint, as the 2025-11-25 transport describes them:
 * `initialize` opens one (its id in `Mcp-Session-Id`), a request without an id gets 400, an unknown
 * id 404, DELETE ends it. Sessions left by clients that vanished close after an idle time, and the
 * number alive is capped (503 past it), so memory stays flat whatever clients do.
 */
export class LegacySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(
    private readonly build: (auth: AuthInfo | undefined) => Server,
    options: LegacySessionOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.sweeper = setInterval(() => void this.sweep(), Math.max(1_000, Math.min(this.idleMs / 2, 60_000)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: Request, auth: AuthInfo | undefined, parsedBody: unknown): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    if (id !== null) {
      const session = this.sessions.get(id);
      if (!session || session.owner !== ownerOf(auth)) {
        return jsonRpcError(404, -32001, "Session not found: start a new session with initialize");
      }
      return this.serve(session, request, auth, parsedBody);
    }
    if (request.method !== "POST" || !isInitializeRequest(parsedBody)) {
      return jsonRpcError(400, -32000, "Bad request: Mcp-Session-Id header required (send initialize first)");
    }
    await this.sweep();
    if (this.sessions.size >= this.maxSessions) {
      return jsonRpcError(503, -32000, `Too many sessions (${this.maxSessions}): try again later`, {
        "retry-after": "60",
      });
    }
    return this.open(request, auth, parsedBody);
  }

  private async open(request: Request, auth: AuthInfo | undefined, parsedBody: unknown): Promise<Response> {
    const server = this.build(auth);
    let session: Session | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        if (session) this.sessions.set(sid, session);
      },
      onsessionclosed: (sid) => {
        this.sessions.delete(sid);
      },
    });
    session = { transport, server, owner: ownerOf(auth), lastSeen: this.now(), busy: 0 };
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = await this.serve(session, request, auth, parsedBody);
    // An initialize the transport refused leaves no session behind.
    if (!transport.sessionId || !this.sessions.has(transport.sessionId)) await server.close();
    return response;
  }

  private async serve(
    session: Session,
    request: Request,
    auth: AuthInfo | undefined,
    parsedBody: unknown,
  ): Promise<Response> {
    session.busy++;
    session.lastSeen = this.now();
    try {
      return await session.transport.handleRequest(request, {
        ...(auth ? { authInfo: auth } : {}),
        ...(parsedBody !== undefined ? { parsedBody } : {}),
      });
    } finally {
      session.busy--;
      session.lastSeen = this.now();
    }
  }

  /**
   * Closes every session that has sent nothing for the idle time. Its client, if it comes back,
   * gets 404 and opens a new session, as the transport prescribes.
   */
  async sweep(): Promise<void> {
    const cutoff = this.now() - this.idleMs;
    const idle = [...this.sessions.entries()].filter(([, s]) => s.busy === 0 && s.lastSeen < cutoff);
    for (const [sid, s] of idle) {
      this.sessions.delete(sid);
      await s.server.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(() => undefined)));
  }
}
