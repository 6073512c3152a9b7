import type Database from "better-sqlite3";

/** A registered OAuth client (dynamic registration). */
export interface ClientRow {
  id: string;
  name: string;
  redirectUris: string[];
  createdMs: number;
}

/** What one consent allowed: the user, the client, scopes and an optional folder/tag boundary. */
export interface GrantTerms {
  userId: number;
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  folder: string | null;
  tag: string | null;
  resource: string;
}

export interface GrantRow extends GrantTerms {
  id: number;
  createdMs: number;
  lastUsedMs: number | null;
  revokedMs: number | null;
}

export interface CodeRow extends GrantTerms {
  hash: string;
  challenge: string;
  expiresMs: number;
  usedMs: number | null;
  grantId: number | null;
}

export type TokenKind = "access" | "refresh";

export interface TokenRow {
  hash: string;
  grantId: number;
  kind: TokenKind;
  scopes: string[];
  expiresMs: number;
  usedMs: number | null;
}

/**
 * The narrow storage face of sign-in and OAuth: passwords, clients, codes, grants, tokens. Codes and
 * tokens arrive here already hashed; nothing in it knows what they are for.
 */
export interface AuthStore {
  password(userId: number): string | undefined;
  setPassword(userId: number, hash: string, nowMs: number): void;
  addClient(client: ClientRow): void;
  client(id: string): ClientRow | undefined;
  addCode(code: Omit<CodeRow, "usedMs" | "grantId">): void;
  /** Marks a code used and returns it as it was before (so a second use is seen as one). */
  useCode(hash: string, nowMs: number): CodeRow | undefined;
  /** Records the grant a code was redeemed into (revoked if the code comes back). */
  linkCode(hash: string, grantId: number): void;
  addGrant(terms: GrantTerms, nowMs: number): number;
  grant(id: number): GrantRow | undefined;
  liveGrants(userId: number): GrantRow[];
  setGrantTerms(id: number, terms: Pick<GrantTerms, "scopes" | "folder" | "tag">): void;
  touchGrant(id: number, nowMs: number): void;
  revokeGrant(id: number, nowMs: number): void;
  addToken(token: Omit<TokenRow, "usedMs">): void;
  token(hash: string): TokenRow | undefined;
  /** Marks a refresh token used; false when it already was (a replay). */
  useToken(hash: string, nowMs: number): boolean;
  deleteToken(hash: string): void;
  /** Drops codes and tokens expired before `cutoffMs`. */
  purge(cutoffMs: number): void;
  tx<T>(fn: () => T): T;
}

interface RawGrant {
  id: number;
  user_id: number;
  client_id: string;
  client_name: string;
  redirect_uri: string;
  scopes: string;
  folder: string | null;
  tag: string | null;
  resource: string;
  created_ms: number;
  last_used_ms: number | null;
  revoked_ms: number | null;
}

const grantOf = (r: RawGrant): GrantRow => ({
  id: r.id,
  userId: r.user_id,
  clientId: r.client_id,
  clientName: r.client_name,
  redirectUri: r.redirect_uri,
  scopes: JSON.parse(r.scopes) as string[],
  folder: r.folder,
  tag: r.tag,
  resource: r.resource,
  createdMs: r.created_ms,
  lastUsedMs: r.last_used_ms,
  revokedMs: r.revoked_ms,
});

/** The SQLite implementation of AuthStore. */
export class SqliteAuthStore implements AuthStore {
  private readonly tokenStmt: Database.Statement;
  private readonly grantStmt: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.tokenStmt = db.prepare(
      "SELECT hash, grant_id, kind, scopes, expires_ms, used_ms FROM oauth_tokens WHERE hash = ?",
    );
    this.grantStmt = db.prepare("SELECT * FROM oauth_grants WHERE id = ?");
  }

  password(userId: number): string | undefined {
    const row = this.db.prepare("SELECT hash FROM auth_passwords WHERE user_id = ?").get(userId) as
      | { hash: string }
      | undefined;
    return row?.hash;
  }

  setPassword(userId: number, hash: string, nowMs: number): void {
    this.db
      .prepare(
        `INSERT INTO auth_passwords (user_id, hash, updated_ms) VALUES (?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, updated_ms = excluded.updated_ms`,
      )
      .run(userId, hash, nowMs);
  }

  addClient(c: ClientRow): void {
    this.db
      .prepare("INSERT INTO oauth_clients (id, name, redirect_uris, created_ms) VALUES (?, ?, ?, ?)")
      .run(c.id, c.name, JSON.stringify(c.redirectUris), c.createdMs);
  }

  client(id: string): ClientRow | undefined {
    const r = this.db.prepare("SELECT * FROM oauth_clients WHERE id = ?").get(id) as
      | { id: string; name: string; redirect_uris: string; created_ms: number }
      | undefined;
    return (
      r && { id: r.id, name: r.name, redirectUris: JSON.parse(r.redirect_uris), createdMs: r.created_ms }
    );
  }

  addCode(c: Omit<CodeRow, "usedMs" | "grantId">): void {
    this.db
      .prepare(
        `INSERT INTO oauth_codes (hash, user_id, client_id, client_name, redirect_uri, challenge, scopes,
           folder, tag, resource, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        c.hash,
        c.userId,
        c.clientId,
        c.clientName,
        c.redirectUri,
        c.challenge,
        JSON.stringify(c.scopes),
        c.folder,
        c.tag,
        c.resource,
        c.expiresMs,
      );
  }

  useCode(hash: string, nowMs: number): CodeRow | undefined {
    return this.tx(() => {
      const r = this.db.prepare("SELECT * FROM oauth_codes WHERE hash = ?").get(hash) as
        | (Omit<RawGrant, "id" | "created_ms" | "last_used_ms" | "revoked_ms"> & {
            hash: string;
            challenge: string;
            expires_ms: number;
            used_ms: number | null;
            grant_id: number | null;
          })
        | undefined;
      if (!r) return undefined;
      if (r.used_ms === null)
        this.db.prepare("UPDATE oauth_codes SET used_ms = ? WHERE hash = ?").run(nowMs, hash);
      return {
        hash: r.hash,
        userId: r.user_id,
        clientId: r.client_id,
        clientName: r.client_name,
        redirectUri: r.redirect_uri,
        challenge: r.challenge,
        scopes: JSON.parse(r.scopes) as string[],
        folder: r.folder,
        tag: r.tag,
        resource: r.resource,
        expiresMs: r.expires_ms,
        usedMs: r.used_ms,
        grantId: r.grant_id,
      };
    });
  }

  linkCode(hash: string, grantId: number): void {
    this.db.prepare("UPDATE oauth_codes SET grant_id = ? WHERE hash = ?").run(grantId, hash);
  }

  addGrant(t: GrantTerms, nowMs: number): number {
    const info = this.db
      .prepare(
        `INSERT INTO oauth_grants (user_id, client_id, client_name, redirect_uri, scopes, folder, tag, resource,
           created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        t.userId,
        t.clientId,
        t.clientName,
        t.redirectUri,
        JSON.stringify(t.scopes),
        t.folder,
        t.tag,
        t.resource,
        nowMs,
      );
    return Number(info.lastInsertRowid);
  }

  grant(id: number): GrantRow | undefined {
    const r = this.grantStmt.get(id) as RawGrant | undefined;
    return r && grantOf(r);
  }

  liveGrants(userId: number): GrantRow[] {
    const rows = this.db
      .prepare(
        "SELECT * FROM oauth_grants WHERE user_id = ? AND revoked_ms IS NULL ORDER BY created_ms DESC, id DESC",
      )
      .all(userId) as RawGrant[];
    return rows.map(grantOf);
  }

  setGrantTerms(id: number, t: Pick<GrantTerms, "scopes" | "folder" | "tag">): void {
    this.db
      .prepare("UPDATE oauth_grants SET scopes = ?, folder = ?, tag = ? WHERE id = ?")
      .run(JSON.stringify(t.scopes), t.folder, t.tag, id);
  }

  touchGrant(id: number, nowMs: number): void {
    this.db.prepare("UPDATE oauth_grants SET last_used_ms = ? WHERE id = ?").run(nowMs, id);
  }

  revokeGrant(id: number, nowMs: number): void {
    this.tx(() => {
      this.db
        .prepare("UPDATE oauth_grants SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL")
        .run(nowMs, id);
      this.db.prepare("DELETE FROM oauth_tokens WHERE grant_id = ?").run(id);
    });
  }

  addToken(t: Omit<TokenRow, "usedMs">): void {
    this.db
      .prepare("INSERT INTO oauth_tokens (hash, grant_id, kind, scopes, expires_ms) VALUES (?, ?, ?, ?, ?)")
      .run(t.hash, t.grantId, t.kind, JSON.stringify(t.scopes), t.expiresMs);
  }

  token(hash: string): TokenRow | undefined {
    const r = this.tokenStmt.get(hash) as
      | {
          hash: string;
          grant_id: number;
          kind: TokenKind;
          scopes: string;
          expires_ms: number;
          used_ms: number | null;
        }
      | undefined;
    return (
      r && {
        hash: r.hash,
        grantId: r.grant_id,
        kind: r.kind,
        scopes: JSON.parse(r.scopes) as string[],
        expiresMs: r.expires_ms,
        usedMs: r.used_ms,
      }
    );
  }

  useToken(hash: string, nowMs: number): boolean {
    const info = this.db
      .prepare("UPDATE oauth_tokens SET used_ms = ? WHERE hash = ? AND used_ms IS NULL")
      .run(nowMs, hash);
    return info.changes === 1;
  }

  deleteToken(hash: string): void {
    this.db.prepare("DELETE FROM oauth_tokens WHERE hash = ?").run(hash);
  }

  purge(cutoffMs: number): void {
    this.db.prepare("DELETE FROM oauth_tokens WHERE expires_ms < ?").run(cutoffMs);
    this.db.prepare("DELETE FROM oauth_codes WHERE expires_ms < ?").run(cutoffMs);
  }

  tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }
}
