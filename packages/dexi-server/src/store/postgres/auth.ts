import type { ClientRow, CodeRow, GrantRow, GrantTerms, TokenKind, TokenRow } from "../auth.js";
import type { AuthPort, Transact } from "../port.js";
import { holdsNul, type Pg } from "./db.js";

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

/** Passwords, OAuth clients, codes, grants and tokens in PostgreSQL: the SQLite AuthStore's operations. */
export class PgAuth implements AuthPort {
  constructor(
    private readonly db: Pg,
    readonly tx: Transact,
  ) {}

  async password(userId: number): Promise<string | undefined> {
    return (
      await this.db.get<{ hash: string }>("SELECT hash FROM auth_passwords WHERE user_id = ?", [userId])
    )?.hash;
  }

  async setPassword(userId: number, hash: string, nowMs: number): Promise<void> {
    await this.db.run(
      `INSERT INTO auth_passwords (user_id, hash, updated_ms) VALUES (?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, updated_ms = excluded.updated_ms`,
      [userId, hash, nowMs],
    );
  }

  async addClient(c: ClientRow): Promise<void> {
    await this.db.run("INSERT INTO oauth_clients (id, name, redirect_uris, created_ms) VALUES (?, ?, ?, ?)", [
      c.id,
      c.name,
      JSON.stringify(c.redirectUris),
      c.createdMs,
    ]);
  }

  async client(id: string): Promise<ClientRow | undefined> {
    if (holdsNul(id)) return undefined;
    const r = await this.db.get<{ id: string; name: string; redirect_uris: string; created_ms: number }>(
      "SELECT * FROM oauth_clients WHERE id = ?",
      [id],
    );
    return (
      r && { id: r.id, name: r.name, redirectUris: JSON.parse(r.redirect_uris), createdMs: r.created_ms }
    );
  }

  async addCode(c: Omit<CodeRow, "usedMs" | "grantId">): Promise<void> {
    await this.db.run(
      `INSERT INTO oauth_codes (hash, user_id, client_id, client_name, redirect_uri, challenge, scopes,
         folder, tag, resource, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
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
      ],
    );
  }

  /** Marks a code used and returns it as it was before; the row lock makes a racing second use see it used. */
  useCode(hash: string, nowMs: number): Promise<CodeRow | undefined> {
    return this.tx(async () => {
      const r = await this.db.get<
        Omit<RawGrant, "id" | "created_ms" | "last_used_ms" | "revoked_ms"> & {
          hash: string;
          challenge: string;
          expires_ms: number;
          used_ms: number | null;
          grant_id: number | null;
        }
      >("SELECT * FROM oauth_codes WHERE hash = ? FOR UPDATE", [hash]);
      if (!r) return undefined;
      if (r.used_ms === null)
        await this.db.run("UPDATE oauth_codes SET used_ms = ? WHERE hash = ?", [nowMs, hash]);
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

  async linkCode(hash: string, grantId: number): Promise<void> {
    await this.db.run("UPDATE oauth_codes SET grant_id = ? WHERE hash = ?", [grantId, hash]);
  }

  async addGrant(t: GrantTerms, nowMs: number): Promise<number> {
    const row = await this.db.get<{ id: number }>(
      `INSERT INTO oauth_grants (user_id, client_id, client_name, redirect_uri, scopes, folder, tag, resource,
         created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [
        t.userId,
        t.clientId,
        t.clientName,
        t.redirectUri,
        JSON.stringify(t.scopes),
        t.folder,
        t.tag,
        t.resource,
        nowMs,
      ],
    );
    return row!.id;
  }

  async grant(id: number): Promise<GrantRow | undefined> {
    const r = await this.db.get<RawGrant>("SELECT * FROM oauth_grants WHERE id = ?", [id]);
    return r && grantOf(r);
  }

  async liveGrants(userId: number): Promise<GrantRow[]> {
    const rows = await this.db.all<RawGrant>(
      "SELECT * FROM oauth_grants WHERE user_id = ? AND revoked_ms IS NULL ORDER BY created_ms DESC, id DESC",
      [userId],
    );
    return rows.map(grantOf);
  }

  async setGrantTerms(id: number, t: Pick<GrantTerms, "scopes" | "folder" | "tag">): Promise<void> {
    await this.db.run("UPDATE oauth_grants SET scopes = ?, folder = ?, tag = ? WHERE id = ?", [
      JSON.stringify(t.scopes),
      t.folder,
      t.tag,
      id,
    ]);
  }

  async touchGrant(id: number, nowMs: number): Promise<void> {
    await this.db.run("UPDATE oauth_grants SET last_used_ms = ? WHERE id = ?", [nowMs, id]);
  }

  revokeGrant(id: number, nowMs: number): Promise<void> {
    return this.tx(async () => {
      await this.db.run("UPDATE oauth_grants SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL", [
        nowMs,
        id,
      ]);
      await this.db.run("DELETE FROM oauth_tokens WHERE grant_id = ?", [id]);
    });
  }

  async addToken(t: Omit<TokenRow, "usedMs">): Promise<void> {
    await this.db.run(
      "INSERT INTO oauth_tokens (hash, grant_id, kind, scopes, expires_ms) VALUES (?, ?, ?, ?, ?)",
      [t.hash, t.grantId, t.kind, JSON.stringify(t.scopes), t.expiresMs],
    );
  }

  async token(hash: string): Promise<TokenRow | undefined> {
    const r = await this.db.get<{
      hash: string;
      grant_id: number;
      kind: TokenKind;
      scopes: string;
      expires_ms: number;
      used_ms: number | null;
    }>("SELECT hash, grant_id, kind, scopes, expires_ms, used_ms FROM oauth_tokens WHERE hash = ?", [hash]);
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

  async useToken(hash: string, nowMs: number): Promise<boolean> {
    return (
      (await this.db.run("UPDATE oauth_tokens SET used_ms = ? WHERE hash = ? AND used_ms IS NULL", [
        nowMs,
        hash,
      ])) === 1
    );
  }

  async deleteToken(hash: string): Promise<void> {
    await this.db.run("DELETE FROM oauth_tokens WHERE hash = ?", [hash]);
  }

  async purge(cutoffMs: number): Promise<void> {
    await this.db.run("DELETE FROM oauth_tokens WHERE expires_ms < ?", [cutoffMs]);
    await this.db.run("DELETE FROM oauth_codes WHERE expires_ms < ?", [cutoffMs]);
  }
}
