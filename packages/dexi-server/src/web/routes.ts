/**
 * Everything Dexi serves over HTTP beside the MCP endpoint: the OAuth endpoints and the sign-in,
 * consent and connected-apps pages. Forms carry the session's CSRF token; pages work without script.
 */
import type { HttpRequestInfo, HttpRoutes } from "@mcpforge/toolkit";
import { OAuthFailure, UnsafeAuthorizationRequest } from "../auth/errors.js";
import { type SignInLimiter, WindowCounter } from "../auth/limiter.js";
import { sameText } from "../auth/secrets.js";
import type { AuthRequest, AuthService } from "../auth/service.js";
import type { Passwords } from "../auth/users.js";
import { checkRestriction, InvalidRestriction } from "../domain/access.js";
import { MAX_TAG_LIST } from "../domain/limits.js";
import type { NotesService } from "../domain/notes.js";
import { endpoint, PATHS } from "./endpoints.js";
import { html, json, localPath, readForm, seeOther } from "./http.js";
import { appsPage, consentPage, hostOf, messagePage, STYLESHEET, signInPage } from "./pages.js";
import { type BrowserSession, BrowserSessions } from "./sessions.js";

export interface WebOptions {
  auth: AuthService;
  passwords: Passwords;
  notes: NotesService;
  limiter: SignInLimiter;
  /** Whether client ids may be metadata-document URLs (advertised in the metadata). */
  documents: boolean;
  /** Take the client address from the last X-Forwarded-For entry (only behind a proxy that sets it). */
  trustProxy?: boolean;
  now?: () => number;
}

const CONSENT = "/authorize/consent";
export const REGISTRATIONS_PER_HOUR = 30;

export function createWebRoutes(o: WebOptions): HttpRoutes {
  const sessions = new BrowserSessions(o.now);
  // Registration needs no account, so each address may register only so many clients an hour.
  const registrations = new WindowCounter(REGISTRATIONS_PER_HOUR, 60 * 60_000, o.now);
  const secure = o.auth.issuer.startsWith("https:");

  /** The request's session, or a new anonymous one (its cookie added to the answer). */
  function visit(request: Request): { s: BrowserSession; cookie: Record<string, string> } {
    const found = sessions.find(request);
    if (found) return { s: found, cookie: {} };
    const made = sessions.create(secure);
    return { s: made.session, cookie: { "set-cookie": made.setCookie } };
  }

  const address = (request: Request, info: HttpRequestInfo) => {
    const forwarded = o.trustProxy
      ? request.headers.get("x-forwarded-for")?.split(",").pop()?.trim()
      : undefined;
    return forwarded || info.remoteAddress || "unknown";
  };

  const choicesOf = async (userId: number) => {
    const viewer = { userId, scopes: [] };
    const folders = (await o.notes.folders(viewer)).folders.map((f) => f.name);
    const tags = [
      ...(await o.notes.tags(viewer, "hashtag", MAX_TAG_LIST)).tags,
      ...(await o.notes.tags(viewer, "mention", MAX_TAG_LIST)).tags,
    ].map((t) => t.tag);
    return { folders, tags };
  };

  function signIn(s: BrowserSession, cookie: Record<string, string>, next: string, extra: object = {}) {
    return html(200, signInPage({ csrf: s.csrf, next, ...extra }), cookie);
  }

  async function consent(
    s: BrowserSession,
    rid: string,
    req: AuthRequest,
    status = 200,
    error?: string,
  ): Promise<Response> {
    const target = new URL(req.redirectUri);
    // Chrome applies form-action to the redirect after the POST too, so the client's origin is allowed.
    const formTarget =
      target.protocol === "http:" || target.protocol === "https:" ? target.origin : target.protocol;
    const page = consentPage({
      user: s.userName ?? "",
      csrf: s.csrf,
      rid,
      clientName: req.client.name,
      redirectHost: hostOf(req.redirectUri),
      scopes: req.scopes,
      choices: await choicesOf(s.userId!),
      ...(error ? { error } : {}),
    });
    return html(status, page, {}, [formTarget]);
  }

  async function authorize(request: Request, url: URL): Promise<Response> {
    const { s, cookie } = visit(request);
    let req: AuthRequest;
    try {
      req = await o.auth.checkRequest(url.searchParams);
    } catch (err) {
      if (err instanceof UnsafeAuthorizationRequest)
        return html(400, messagePage("Cannot connect", err.message), cookie);
      const back = (err as { redirect?: { redirectUri: string; state?: string } }).redirect;
      if (err instanceof OAuthFailure && back)
        return seeOther(
          o.auth.redirectWith(back.redirectUri, {
            error: err.error,
            error_description: err.description,
            state: back.state,
          }),
        );
      throw err;
    }
    const rid = sessions.hold(s, req);
    const next = `${CONSENT}?rid=${encodeURIComponent(rid)}`;
    if (s.userId === undefined)
      return signIn(s, cookie, next, { note: `Sign in to connect ${req.client.name}.` });
    return seeOther(next, cookie);
  }

  /** The session of a form post whose CSRF token matches; a Response refusing it otherwise. */
  function posted(request: Request, form: URLSearchParams | undefined): BrowserSession | Response {
    const s = sessions.find(request);
    const token = form?.get("csrf") ?? "";
    if (!s || !form || !sameText(token, s.csrf))
      return html(
        403,
        messagePage(
          "Form expired",
          "This form is stale or was not sent from Dexi. Go back, reload and try again.",
        ),
      );
    return s;
  }

  async function signInPost(request: Request, info: HttpRequestInfo): Promise<Response> {
    const form = await readForm(request);
    const s = posted(request, form);
    if (s instanceof Response) return s;
    const name = (form!.get("name") ?? "").trim();
    const next = localPath(form!.get("next"), "/apps");
    const from = address(request, info);
    const wait = o.limiter.wait(name, from);
    if (wait > 0) {
      const minutes = Math.ceil(wait / 60_000);
      return html(
        429,
        signInPage({
          csrf: s.csrf,
          next,
          name,
          error: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
        }),
        {
          "retry-after": String(Math.ceil(wait / 1000)),
        },
      );
    }
    const userId = await o.passwords.check(name, form!.get("password") ?? "");
    if (userId === undefined) {
      o.limiter.failed(name, from);
      return html(401, signInPage({ csrf: s.csrf, next, name, error: "Wrong user name or password." }));
    }
    o.limiter.succeeded(name);
    const signed = sessions.signIn(s, userId, name, secure);
    return seeOther(next, { "set-cookie": signed.setCookie });
  }

  async function consentPost(request: Request): Promise<Response> {
    const form = await readForm(request);
    const s = posted(request, form);
    if (s instanceof Response) return s;
    const rid = form!.get("rid") ?? "";
    const req = s.pending.get(rid);
    if (s.userId === undefined || !req)
      return html(
        400,
        messagePage("Cannot connect", "This request expired. Start connecting again from the app."),
      );
    if (form!.get("decision") !== "allow") {
      s.pending.delete(rid);
      return seeOther(o.auth.redirectWith(req.redirectUri, { error: "access_denied", state: req.state }));
    }
    const folder = form!.get("folder") || undefined;
    const tag = form!.get("tag") || undefined;
    try {
      // The parser's rules first, so a malformed tag is refused in their words; then ownership.
      const r = checkRestriction({ ...(folder ? { folder } : {}), ...(tag ? { tag } : {}) });
      const own = await choicesOf(s.userId);
      if ((r.folder && !own.folders.includes(r.folder)) || (r.tag && !own.tags.includes(r.tag)))
        throw new InvalidRestriction("Pick a folder and tag from your own notes");
      const location = await o.auth.consent(req, s.userId, {
        scopes: form!.getAll("scope"),
        ...(r.folder ? { folder: r.folder } : {}),
        ...(r.tag ? { tag: r.tag } : {}),
      });
      s.pending.delete(rid);
      return seeOther(location);
    } catch (err) {
      if (err instanceof InvalidRestriction) return consent(s, rid, req, 400, err.message);
      throw err;
    }
  }

  async function apps(s: BrowserSession, status = 200, error?: string): Promise<Response> {
    const page = appsPage({
      user: s.userName ?? "",
      csrf: s.csrf,
      grants: await o.auth.grants(s.userId!),
      choices: await choicesOf(s.userId!),
      ...(error ? { error } : {}),
    });
    return html(status, page);
  }

  async function appsPost(request: Request, action: "restrict" | "revoke"): Promise<Response> {
    const form = await readForm(request);
    const s = posted(request, form);
    if (s instanceof Response) return s;
    if (s.userId === undefined) return seeOther("/signin?next=/apps");
    const grant = Number(form!.get("grant"));
    try {
      if (action === "revoke") await o.auth.revokeGrant(s.userId, grant);
      else {
        const folder = form!.get("folder") || undefined;
        const tag = form!.get("tag") || undefined;
        await o.auth.restrict(s.userId, grant, {
          scopes: form!.getAll("scope"),
          ...(folder ? { folder } : {}),
          ...(tag ? { tag } : {}),
        });
      }
    } catch (err) {
      if (err instanceof InvalidRestriction) return apps(s, 400, err.message);
      throw err;
    }
    return seeOther("/apps");
  }

  return async (request, info) => {
    const url = new URL(request.url);
    const path = url.pathname;
    if (request.method === "POST" && path === PATHS.register && !registrations.take(address(request, info)))
      return json(
        429,
        {
          error: "slow_down",
          error_description: "Too many client registrations from this address; try again later",
        },
        { "retry-after": "3600" },
      );
    const machine = await endpoint(request, path, o.auth, o.documents);
    if (machine) return machine;
    const get = request.method === "GET" || request.method === "HEAD";
    if (get && path === "/assets/dexi.css")
      return new Response(STYLESHEET, {
        headers: {
          "content-type": "text/css",
          "cache-control": "max-age=3600",
          "x-content-type-options": "nosniff",
        },
      });
    if (get && path === PATHS.authorize) return authorize(request, url);
    if (request.method === "POST") {
      if (path === "/signin") return signInPost(request, info);
      if (path === CONSENT) return consentPost(request);
      if (path === "/apps/restrict") return appsPost(request, "restrict");
      if (path === "/apps/revoke") return appsPost(request, "revoke");
      if (path === "/signout") {
        const form = await readForm(request);
        const s = posted(request, form);
        if (s instanceof Response) return s;
        sessions.end(s);
        return seeOther("/signin");
      }
      return undefined;
    }
    if (!get) return undefined;
    const { s, cookie } = visit(request);
    if (path === "/") return seeOther("/apps", cookie);
    if (path === "/signin") return signIn(s, cookie, localPath(url.searchParams.get("next"), "/apps"));
    if (path !== CONSENT && path !== "/apps") return undefined;
    if (s.userId === undefined) return signIn(s, cookie, `${path}${url.search}`);
    if (path === "/apps") return apps(s);
    const rid = url.searchParams.get("rid") ?? "";
    const req = s.pending.get(rid);
    if (!req)
      return html(
        400,
        messagePage("Cannot connect", "This request expired. Start connecting again from the app."),
      );
    return consent(s, rid, req);
  };
}
