import { randomUUID } from "node:crypto";
import {
  type AuthInfo,
  isInitializeRequest,
  isJSONRPCRequest,
  type RequestId,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { NO_BATCHES_SINCE } from "../jsonrpc.js";
import { onBodyEnd } from "./body.js";
import type { LegacySessionOptions } from "./options.js";

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** Who opened it (`ownerOf`): a session id is no key to another client's or user's session. */
  owner: string | undefined;
  /** When it was last used, by the injected clock (idleness). */
  lastSeen: number;
  /** The order of last use, for choosing the least recently used (the clock may tick coarsely). */
  lastUse: number;
  /**
   * Requests being handled or answered (an answer streams after `handleRequest` returns, so until
   * its body ends). A busy session is never closed for idleness, nor to make room for its user.
   */
  busy: number;
  /**
   * The ids of the requests being answered. The transport routes each answer to its stream by id:
   * a second request under an id in flight took the first one's answer, and the first was never
   * answered (its stream stayed open for good).
   */
  inFlight: Set<RequestId>;
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
export const DEFAULT_MAX_SESSIONS = 1_000;
export const DEFAULT_MAX_SESSIONS_PER_USER = 32;

function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: RequestId | null = null,
) {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** The ids of the JSON-RPC requests in a POST's body (one message or a batch). */
function requestIds(body: unknown): RequestId[] {
  return (Array.isArray(body) ? body : [body]).filter(isJSONRPCRequest).map((m) => m.id);
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
 * number alive is capped (503 past it), so memory stays flat whatever clients do. One user holds at
 * most `maxSessionsPerUser` of them, so one user (or one leaked token) cannot take the endpoint's
 * sessions from everyone else: past it the user's least recently used idle session closes, as the
 * idle time would close it (a vanished client of theirs should not lock them out for half an hour);
 * when every one is answering a request, 429.
 */
export class LegacySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly maxPerUser: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;
  private uses = 0;
  private toldOfSubject = false;

  constructor(
    private readonly build: (auth: AuthInfo | undefined) => Server,
    options: LegacySessionOptions = {},
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.maxPerUser = options.maxSessionsPerUser ?? DEFAULT_MAX_SESSIONS_PER_USER;
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
      return this.refusal(session, request, parsedBody) ?? this.serve(session, request, auth, parsedBody);
    }
    if (request.method !== "POST" || !isInitializeRequest(parsedBody)) {
      return jsonRpcError(400, -32000, "Bad request: Mcp-Session-Id header required (send initialize first)");
    }
    await this.sweep();
    const full = await this.makeRoomFor(ownerOf(auth));
    if (full) return full;
    if (this.sessions.size >= this.maxSessions) {
      return jsonRpcError(503, -32000, `Too many sessions (${this.maxSessions}): try again later`, {
        "retry-after": "60",
      });
    }
    this.tellOfSubject(auth);
    return this.open(request, auth, parsedBody);
  }

  /**
   * What a session refuses before its transport sees it: a batch on a revision without batches
   * (the SDK's transport takes one on any), and a request whose id is still being answered.
   */
  private refusal(session: Session, request: Request, body: unknown): Response | undefined {
    if (Array.isArray(body)) {
      // The header names the revision of this request; the session's is the one negotiated.
      const version = [
        request.headers.get("mcp-protocol-version"),
        session.server.getNegotiatedProtocolVersion(),
      ].find((v) => v != null && v >= NO_BATCHES_SINCE);
      if (version)
        return jsonRpcError(
          400,
          -32600,
          `Invalid request: MCP ${version} has no JSON-RPC batches (revision ${NO_BATCHES_SINCE} removed them): send each message in its own POST`,
        );
    }
    if (request.method !== "POST") return undefined;
    const taken = requestIds(body).find((rid) => session.inFlight.has(rid));
    if (taken === undefined) return undefined;
    return jsonRpcError(
      400,
      -32600,
      `Invalid request: a request with id ${JSON.stringify(taken)} is still being answered in this session: give each request its own id`,
      {},
      taken,
    );
  }

  /**
   * Makes room for one more session of `owner` by closing its least recently used idle sessions
   * past the cap; a 429 when every one of them is answering a request. Other users' sessions are
   * never touched. An endpoint without a verifier has no users: the cap is not applied there.
   */
  private async makeRoomFor(owner: string | undefined): Promise<Response | undefined> {
    // Without a token verifier there are no users to keep apart (every client is the same nobody):
    // one client's new session must not close another's, so only the endpoint's cap applies.
    if (owner === undefined) return undefined;
    const mine = [...this.sessions.entries()].filter(([, s]) => s.owner === owner);
    const over = mine.length - this.maxPerUser + 1;
    if (over <= 0) return undefined;
    const idle = mine.filter(([, s]) => s.busy === 0).sort(([, a], [, b]) => a.lastUse - b.lastUse);
    if (idle.length < over) {
      return jsonRpcError(
        429,
        -32000,
        `Too many sessions for this user (${this.maxPerUser}), each answering a request: end one (DELETE) or try again later`,
        { "retry-after": "60" },
      );
    }
    for (const [sid, s] of idle.slice(0, over)) await this.end(sid, s);
    return undefined;
  }

  /**
   * Says once, when a session opens, that the verifier names no user: the session then belongs to
   * all of `extra`, and a refreshed token whose `extra` differs (a token id, an issue time) gets 404
   * on it, from which the SDK's clients do not recover.
   */
  private tellOfSubject(auth: AuthInfo | undefined): void {
    const extra = auth?.extra;
    if (this.toldOfSubject || !extra || Object.keys(extra).length === 0) return;
    if (typeof extra["subject"] === "string") return;
    this.toldOfSubject = true;
    this.log(
      "http: the token verifier returns extra without extra.subject, so a 2025-era session belongs to all of that extra and ends when a refreshed token's extra differs; set extra.subject to the user",
    );
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
    session = {
      transport,
      server,
      owner: ownerOf(auth),
      lastSeen: this.now(),
      lastUse: ++this.uses,
      busy: 0,
      inFlight: new Set(),
    };
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
    const ids = request.method === "POST" ? requestIds(parsedBody) : [];
    const touch = () => {
      session.lastSeen = this.now();
      session.lastUse = ++this.uses;
    };
    const settle = () => {
      session.busy--;
      for (const rid of ids) session.inFlight.delete(rid);
      touch();
    };
    session.busy++;
    for (const rid of ids) session.inFlight.add(rid);
    touch();
    let response: Response;
    try {
      response = await session.transport.handleRequest(request, {
        ...(auth ? { authInfo: auth } : {}),
        ...(parsedBody !== undefined ? { parsedBody } : {}),
      });
    } catch (err) {
      settle();
      throw err;
    }
    // The answers to requests stream after handleRequest returns: the session is busy until then.
    if (ids.length > 0) return onBodyEnd(response, settle);
    settle();
    return response;
  }

  /**
   * Closes every session that has sent nothing for the idle time. Its client, if it comes back,
   * gets 404 and opens a new session, as the transport prescribes.
   */
  async sweep(): Promise<void> {
    const cutoff = this.now() - this.idleMs;
    const idle = [...this.sessions.entries()].filter(([, s]) => s.busy === 0 && s.lastSeen < cutoff);
    for (const [sid, s] of idle) await this.end(sid, s);
  }

  private async end(sid: string, session: Session): Promise<void> {
    this.sessions.delete(sid);
    await session.server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(() => undefined)));
  }
}
