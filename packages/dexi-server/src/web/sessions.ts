import type { AuthRequest } from "../auth/service.js";
import { hashSecret, newSecret } from "../auth/secrets.js";

/** A browser's visit: anonymous until signed in; its CSRF token and the authorizations it waits on. */
export interface BrowserSession {
  key: string;
  userId?: number;
  userName?: string;
  csrf: string;
  expiresMs: number;
  pending: Map<string, AuthRequest>;
}

export const COOKIE = "dexi_session";
const TTL_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 10_000;
const MAX_PENDING = 20;

/**
 * Browser sessions, kept in memory (a restart signs everyone out, which costs a sign-in and nothing
 * else: grants and tokens live in the database). Keyed by the cookie value's hash.
 */
export class BrowserSessions {
  private readonly byKey = new Map<string, BrowserSession>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The session a request's cookie names, if it is live. */
  find(request: Request): BrowserSession | undefined {
    const raw = cookie(request, COOKIE);
    if (!raw) return undefined;
    const s = this.byKey.get(hashSecret(raw));
    if (!s) return undefined;
    if (s.expiresMs <= this.now()) {
      this.byKey.delete(s.key);
      return undefined;
    }
    return s;
  }

  /** A new session and the Set-Cookie value that hands it to the browser. */
  create(secure: boolean, from?: BrowserSession): { session: BrowserSession; setCookie: string } {
    const raw = newSecret("dxs");
    const session: BrowserSession = {
      key: hashSecret(raw),
      csrf: newSecret("csrf"),
      expiresMs: this.now() + TTL_MS,
      pending: from?.pending ?? new Map(),
    };
    if (from) this.byKey.delete(from.key);
    this.byKey.set(session.key, session);
    while (this.byKey.size > MAX_SESSIONS) this.byKey.delete(this.byKey.keys().next().value as string);
    const attrs = `Path=/; HttpOnly; SameSite=Lax; Max-Age=${TTL_MS / 1000}${secure ? "; Secure" : ""}`;
    return { session, setCookie: `${COOKIE}=${raw}; ${attrs}` };
  }

  /** Signing in replaces the session (a fixated anonymous id is worth nothing afterwards). */
  signIn(
    old: BrowserSession,
    userId: number,
    userName: string,
    secure: boolean,
  ): { session: BrowserSession; setCookie: string } {
    const next = this.create(secure, old);
    next.session.userId = userId;
    next.session.userName = userName;
    return next;
  }

  end(session: BrowserSession): void {
    this.byKey.delete(session.key);
  }

  /** Keeps an authorization request for the consent page; returns its id. */
  hold(session: BrowserSession, req: AuthRequest): string {
    const rid = newSecret("rid");
    session.pending.set(rid, req);
    while (session.pending.size > MAX_PENDING)
      session.pending.delete(session.pending.keys().next().value as string);
    return rid;
  }
}

export function cookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}
