/**
 * Dexi's OAuth 2.1 authorization server and token checks, knowing nothing of HTTP pages or MCP:
 * public clients only, the authorization code with PKCE S256, exact redirect URIs, single-use codes,
 * rotating refresh tokens (a replayed one revokes its grant), tokens bound to one resource.
 */
import { randomBytes } from "node:crypto";
import { checkRestriction, InvalidRestriction, type Restriction } from "../domain/access.js";
import { NOTES_SCOPES } from "../domain/limits.js";
import type { AuthPort, GrantRow } from "../store/index.js";
import { type ClientMetadata, readClientMetadata } from "./clients.js";
import type { ClientDocuments } from "./documents.js";
import { OAuthFailure, UnsafeAuthorizationRequest } from "./errors.js";
import { hashSecret, newSecret, s256, sameText, VERIFIER_RE } from "./secrets.js";

export const CODE_TTL_MS = 60_000;
export const ACCESS_TTL_MS = 60 * 60_000;
export const REFRESH_TTL_MS = 30 * 24 * 60 * 60_000;
/** A grant's "last used" is written at most this often, so verifying a token rarely writes. */
const TOUCH_EVERY_MS = 60_000;

export interface AuthConfig {
  /** The authorization server's issuer URL, e.g. `https://notes.example.org` (no trailing slash). */
  issuer: string;
  /** The MCP endpoint every token is bound to (its audience), e.g. `https://notes.example.org/mcp`. */
  resource: string;
  now?: () => number;
  documents?: ClientDocuments;
}

export interface Client extends ClientMetadata {
  id: string;
}

/** An authorization request checked, waiting for the person's consent. */
export interface AuthRequest {
  client: Client;
  redirectUri: string;
  state: string | undefined;
  challenge: string;
  /** The scopes asked for (known ones only; all of them when none was named). */
  scopes: string[];
}

/** What a person allowed on the consent page. */
export interface Consent {
  scopes: string[];
  folder?: string;
  tag?: string;
}

/** The caller a valid access token stands for. */
export interface TokenCaller {
  userId: number;
  clientId: string;
  grantId: number;
  scopes: string[];
  restriction: Restriction;
  /** Seconds since the epoch. */
  expiresAt: number;
  resource: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const KNOWN_SCOPES: readonly string[] = NOTES_SCOPES;

export class AuthService {
  readonly issuer: string;
  readonly resource: string;
  private readonly now: () => number;

  constructor(
    private readonly store: AuthPort,
    private readonly config: AuthConfig,
  ) {
    this.issuer = config.issuer;
    this.resource = config.resource;
    this.now = config.now ?? Date.now;
  }

  /** Dynamic client registration (RFC 7591): a public client gets an id, never a secret. */
  async register(body: unknown): Promise<Record<string, unknown>> {
    const meta = readClientMetadata(body);
    const id = `dexi-${randomBytes(16).toString("base64url")}`;
    const createdMs = this.now();
    await this.store.addClient({ id, name: meta.name, redirectUris: meta.redirectUris, createdMs });
    return {
      client_id: id,
      client_id_issued_at: Math.floor(createdMs / 1000),
      client_name: meta.name,
      redirect_uris: meta.redirectUris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  /** A registered client, or the one a client ID metadata document describes. */
  async client(id: string): Promise<Client | undefined> {
    const row = await this.store.client(id);
    if (row) return { id, name: row.name, redirectUris: row.redirectUris };
    if (this.config.documents?.isDocumentId(id)) return { id, ...(await this.config.documents.get(id)) };
    return undefined;
  }

  /**
   * Checks an authorization request. A bad client or redirect URI throws UnsafeAuthorizationRequest
   * (shown, never redirected); any other fault throws OAuthFailure to send back to the redirect URI.
   * `fault.redirect` on the second kind is where it goes.
   */
  async checkRequest(q: URLSearchParams): Promise<AuthRequest> {
    const clientId = q.get("client_id");
    if (!clientId) throw new UnsafeAuthorizationRequest("The request names no client (client_id)");
    let client: Client | undefined;
    try {
      client = await this.client(clientId);
    } catch (err) {
      throw new UnsafeAuthorizationRequest((err as Error).message);
    }
    if (!client) throw new UnsafeAuthorizationRequest("This app is not registered with Dexi");
    const redirectUri = q.get("redirect_uri");
    // Exact string comparison: no normalising, so `/cb/` or `//cb` is another URI.
    if (!redirectUri || !client.redirectUris.includes(redirectUri))
      throw new UnsafeAuthorizationRequest("The redirect URI is not one this app registered");
    const state = q.get("state") ?? undefined;
    const fail = (error: string, description: string) =>
      Object.assign(new OAuthFailure(error, description), { redirect: { redirectUri, state } });
    if (q.get("response_type") !== "code")
      throw fail("unsupported_response_type", "Only the authorization code flow (response_type=code)");
    const challenge = q.get("code_challenge");
    const method = q.get("code_challenge_method");
    if (!challenge) throw fail("invalid_request", "PKCE is required: send code_challenge with method S256");
    if (method !== "S256")
      throw fail("invalid_request", "Only the S256 PKCE method is accepted, never plain");
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge))
      throw fail("invalid_request", "code_challenge is not an S256 value");
    const resources = q.getAll("resource");
    if (resources.some((r) => !this.isOurResource(r)))
      throw fail("invalid_target", `This server issues tokens only for ${this.resource}`);
    const asked = (q.get("scope") ?? "").split(" ").filter((s) => KNOWN_SCOPES.includes(s));
    return {
      client,
      redirectUri,
      state,
      challenge,
      scopes: asked.length ? [...new Set(asked)] : [...KNOWN_SCOPES],
    };
  }

  /**
   * Records a consent: the restriction checked by Dexi's rules, the scopes a subset of those asked.
   * Returns the URL to send the browser to, carrying a fresh single-use code.
   */
  async consent(req: AuthRequest, userId: number, given: Consent): Promise<string> {
    const scopes = given.scopes.filter((s) => req.scopes.includes(s));
    if (scopes.length === 0) throw new InvalidRestriction("Allow at least one of the scopes, or deny");
    const r = checkRestriction({
      ...(given.folder ? { folder: given.folder } : {}),
      ...(given.tag ? { tag: given.tag } : {}),
    });
    const code = newSecret("dxc");
    await this.store.addCode({
      hash: hashSecret(code),
      userId,
      clientId: req.client.id,
      clientName: req.client.name,
      redirectUri: req.redirectUri,
      challenge: req.challenge,
      scopes,
      folder: r.folder ?? null,
      tag: r.tag ?? null,
      resource: this.resource,
      expiresMs: this.now() + CODE_TTL_MS,
    });
    return this.redirectWith(req.redirectUri, { code, state: req.state });
  }

  /** The redirect that tells the client the person said no (or that the request failed). */
  redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
    const url = new URL(redirectUri);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
    url.searchParams.set("iss", this.issuer);
    return url.toString();
  }

  /** The token endpoint: `authorization_code` and `refresh_token` grants. */
  async token(form: URLSearchParams): Promise<TokenResponse> {
    const clientId = form.get("client_id");
    if (!clientId) throw new OAuthFailure("invalid_client", "client_id is required (public clients)", 401);
    const resource = form.get("resource");
    if (resource !== null && !this.isOurResource(resource))
      throw new OAuthFailure("invalid_target", `This server issues tokens only for ${this.resource}`);
    const type = form.get("grant_type");
    if (type === "authorization_code") return this.redeem(form, clientId);
    if (type === "refresh_token") return this.refresh(form, clientId);
    throw new OAuthFailure(
      "unsupported_grant_type",
      "grant_type must be authorization_code or refresh_token",
    );
  }

  private async redeem(form: URLSearchParams, clientId: string): Promise<TokenResponse> {
    const code = form.get("code") ?? "";
    const verifier = form.get("code_verifier");
    const now = this.now();
    const hash = hashSecret(code);
    const row = await this.store.useCode(hash, now);
    const bad = (why: string) => new OAuthFailure("invalid_grant", why);
    if (!row) throw bad("Unknown authorization code");
    if (row.usedMs !== null) {
      // A code seen twice was stolen or replayed: whatever it was redeemed into dies too.
      if (row.grantId !== null) await this.store.revokeGrant(row.grantId, now);
      throw bad("This authorization code was already used");
    }
    if (row.expiresMs <= now) throw bad("This authorization code has expired");
    if (row.clientId !== clientId) throw bad("This authorization code was issued to another client");
    if (form.get("redirect_uri") !== row.redirectUri)
      throw bad("redirect_uri differs from the authorization request's");
    if (!verifier || !VERIFIER_RE.test(verifier))
      throw new OAuthFailure("invalid_request", "code_verifier is required (PKCE)");
    if (!sameText(s256(verifier), row.challenge))
      throw bad("code_verifier does not match the code_challenge");
    return this.store.tx(async () => {
      // Consenting again replaces the app's previous connection for this user.
      for (const g of await this.store.liveGrants(row.userId))
        if (g.clientId === row.clientId) await this.store.revokeGrant(g.id, now);
      const grantId = await this.store.addGrant(row, now);
      await this.store.linkCode(hash, grantId);
      return this.issue(grantId, row.scopes, now);
    });
  }

  private async refresh(form: URLSearchParams, clientId: string): Promise<TokenResponse> {
    const presented = form.get("refresh_token") ?? "";
    const now = this.now();
    const hash = hashSecret(presented);
    const bad = (why: string) => new OAuthFailure("invalid_grant", why);
    // The transaction returns its refusal rather than throwing it, so a replay's revocation is kept.
    const out = await this.store.tx(async (): Promise<TokenResponse | OAuthFailure> => {
      const row = await this.store.token(hash);
      if (row?.kind !== "refresh") return bad("Unknown refresh token");
      const grant = await this.store.grant(row.grantId);
      if (!grant || grant.revokedMs !== null) return bad("This connection was revoked");
      if (grant.clientId !== clientId) return bad("This refresh token was issued to another client");
      if (!(await this.store.useToken(hash, now))) {
        // Rotation: a refresh token works once. Seen again, someone holds a copy: end the grant.
        await this.store.revokeGrant(grant.id, now);
        return bad("This refresh token was already used; the connection is revoked");
      }
      if (row.expiresMs <= now) return bad("This refresh token has expired");
      const asked = form.get("scope");
      const live = row.scopes.filter((s) => grant.scopes.includes(s));
      const scopes = asked === null ? live : asked.split(" ").filter((s) => live.includes(s));
      if (asked !== null && scopes.length === 0)
        return new OAuthFailure("invalid_scope", "No scope of this grant asked");
      return this.issue(grant.id, scopes, now);
    });
    if (out instanceof OAuthFailure) throw out;
    return out;
  }

  private async issue(grantId: number, scopes: string[], now: number): Promise<TokenResponse> {
    const access = newSecret("dxa");
    const refresh = newSecret("dxr");
    await this.store.addToken({
      hash: hashSecret(access),
      grantId,
      kind: "access",
      scopes,
      expiresMs: now + ACCESS_TTL_MS,
    });
    await this.store.addToken({
      hash: hashSecret(refresh),
      grantId,
      kind: "refresh",
      scopes,
      expiresMs: now + REFRESH_TTL_MS,
    });
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: ACCESS_TTL_MS / 1000,
      refresh_token: refresh,
      scope: scopes.join(" "),
    };
  }

  /**
   * Revocation (RFC 7009): an access token stops alone; a refresh token ends its whole grant. An
   * unknown token, or another client's, is answered the same (success) and changes nothing.
   */
  async revoke(form: URLSearchParams): Promise<void> {
    const hash = hashSecret(form.get("token") ?? "");
    const row = await this.store.token(hash);
    if (!row) return;
    const grant = await this.store.grant(row.grantId);
    if (!grant || grant.clientId !== form.get("client_id")) return;
    if (row.kind === "refresh") await this.store.revokeGrant(grant.id, this.now());
    else await this.store.deleteToken(hash);
  }

  /** The caller an access token stands for, or why it stands for none. */
  async verify(token: string): Promise<TokenCaller | string> {
    const row = await this.store.token(hashSecret(token));
    if (row?.kind !== "access") return "Unknown token";
    const now = this.now();
    if (row.expiresMs <= now) return "Token has expired";
    const grant = await this.store.grant(row.grantId);
    if (!grant || grant.revokedMs !== null) return "This connection was revoked";
    if (grant.resource !== this.resource) return "Token was not issued for this resource";
    if (grant.lastUsedMs === null || now - grant.lastUsedMs >= TOUCH_EVERY_MS)
      await this.store.touchGrant(grant.id, now);
    return {
      userId: grant.userId,
      clientId: grant.clientId,
      grantId: grant.id,
      // A grant restricted further after the token was issued narrows it at once.
      scopes: row.scopes.filter((s) => grant.scopes.includes(s)),
      restriction: {
        ...(grant.folder !== null ? { folder: grant.folder } : {}),
        ...(grant.tag !== null ? { tag: grant.tag } : {}),
      },
      expiresAt: Math.floor(row.expiresMs / 1000),
      resource: grant.resource,
    };
  }

  grants(userId: number): Promise<GrantRow[]> {
    return this.store.liveGrants(userId);
  }

  /**
   * Narrows a grant: scopes can only be dropped, and a folder or tag only added where the grant has
   * none (changing one would open other notes). Its tokens follow at once.
   */
  async restrict(userId: number, grantId: number, change: Consent): Promise<GrantRow> {
    const grant = await this.ownGrant(userId, grantId);
    const scopes = grant.scopes.filter((s) => change.scopes.includes(s));
    if (scopes.length === 0) throw new InvalidRestriction("Keep at least one scope, or revoke the app");
    const r = checkRestriction({
      ...((grant.folder ?? change.folder) ? { folder: grant.folder ?? change.folder } : {}),
      ...((grant.tag ?? change.tag) ? { tag: grant.tag ?? change.tag } : {}),
    });
    await this.store.setGrantTerms(grant.id, { scopes, folder: r.folder ?? null, tag: r.tag ?? null });
    return this.ownGrant(userId, grantId);
  }

  async revokeGrant(userId: number, grantId: number): Promise<void> {
    await this.store.revokeGrant((await this.ownGrant(userId, grantId)).id, this.now());
  }

  /** Drops codes and tokens that expired a day ago (kept that long so a replay is still recognised). */
  async purge(): Promise<void> {
    await this.store.purge(this.now() - 24 * 60 * 60_000);
  }

  private async ownGrant(userId: number, grantId: number): Promise<GrantRow> {
    const g = await this.store.grant(grantId);
    if (!g || g.userId !== userId || g.revokedMs !== null)
      throw new InvalidRestriction("No such connected app");
    return g;
  }

  private isOurResource(r: string): boolean {
    // The metadata's string, or the same URL with a trailing slash some clients add.
    return r === this.resource || r === `${this.resource}/`;
  }
}
