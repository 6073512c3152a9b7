import type Database from "better-sqlite3";

export interface UserRow {
  id: number;
  name: string;
  team_id: number | null;
  /** null until the user sets one: periods then use the server's zone. */
  time_zone: string | null;
  review_tags: string;
  plan: string;
  note_cap: number | null;
  created_ms: number;
}

export interface UserSettings {
  /** The user's own time zone, or null: none set, so the server's zone applies. */
  timeZone: string | null;
  reviewTags: string[];
  plan: string;
  noteCap: number | null;
}

export interface FolderRow {
  id: number;
  user_id: number;
  name: string;
}

/**
 * Folder names are trimmed and compare case-insensitively (Unicode-aware), so the key is the trimmed,
 * lower-cased, NFC name: " Work" and "work" are the folder "Work".
 */
export function folderKey(name: string): string {
  return name.trim().normalize("NFC").toLowerCase();
}

/** Users, teams, folders, per-user settings and global config. */
export class Accounts {
  constructor(private readonly db: Database.Database) {}

  userByName(name: string): UserRow | undefined {
    return this.db.prepare("SELECT * FROM users WHERE name = ?").get(name) as UserRow | undefined;
  }

  userById(id: number): UserRow | undefined {
    return this.db.prepare("SELECT * FROM users WHERE id = ?").get(id) as UserRow | undefined;
  }

  listUsers(): (UserRow & { team: string | null; notes: number })[] {
    return this.db
      .prepare(
        `SELECT u.*, t.name AS team, (SELECT count(*) FROM notes n WHERE n.user_id = u.id) AS notes
         FROM users u LEFT JOIN teams t ON t.id = u.team_id ORDER BY u.name`,
      )
      .all() as (UserRow & { team: string | null; notes: number })[];
  }

  createUser(name: string, nowMs: number): UserRow {
    this.db.prepare("INSERT INTO users (name, created_ms) VALUES (?, ?)").run(name, nowMs);
    return this.userByName(name)!;
  }

  /** The named user, created on first use. */
  ensureUser(name: string, nowMs: number): UserRow {
    return this.db.transaction(() => this.userByName(name) ?? this.createUser(name, nowMs)).immediate();
  }

  settings(userId: number): UserSettings {
    const u = this.userById(userId);
    if (!u) throw new Error(`no user ${userId}`);
    return {
      timeZone: u.time_zone,
      reviewTags: JSON.parse(u.review_tags) as string[],
      plan: u.plan,
      noteCap: u.note_cap,
    };
  }

  updateSettings(userId: number, patch: Partial<UserSettings>): void {
    const sets: string[] = [];
    const params: unknown[] = [];
    if (patch.timeZone !== undefined) {
      sets.push("time_zone = ?");
      params.push(patch.timeZone);
    }
    if (patch.reviewTags !== undefined) {
      sets.push("review_tags = ?");
      params.push(JSON.stringify(patch.reviewTags));
    }
    if (patch.plan !== undefined) {
      sets.push("plan = ?");
      params.push(patch.plan);
    }
    if (patch.noteCap !== undefined) {
      sets.push("note_cap = ?");
      params.push(patch.noteCap);
    }
    if (sets.length === 0) return;
    this.db.prepare(`UPDATE users SET ${sets.join(", ")} WHERE id = ?`).run(...params, userId);
  }

  teamByName(name: string): { id: number; name: string } | undefined {
    return this.db.prepare("SELECT id, name FROM teams WHERE name = ?").get(name) as
      | { id: number; name: string }
      | undefined;
  }

  createTeam(name: string, nowMs: number): { id: number; name: string } {
    this.db.prepare("INSERT INTO teams (name, created_ms) VALUES (?, ?)").run(name, nowMs);
    return this.teamByName(name)!;
  }

  /** Teams by name, each with its members by name (NOCASE, the column's collation). */
  listTeams(): { name: string; members: string }[] {
    return this.db
      .prepare(
        `SELECT t.name, coalesce(group_concat(u.name, ', ' ORDER BY u.name), '') AS members
         FROM teams t LEFT JOIN users u ON u.team_id = t.id GROUP BY t.id ORDER BY t.name`,
      )
      .all() as { name: string; members: string }[];
  }

  setTeam(userId: number, teamId: number | null): void {
    this.db.prepare("UPDATE users SET team_id = ? WHERE id = ?").run(teamId, userId);
  }

  /** The other members of a user's team. */
  teammates(userId: number): number[] {
    const rows = this.db
      .prepare(
        `SELECT m.id FROM users me JOIN users m ON m.team_id = me.team_id
         WHERE me.id = ? AND me.team_id IS NOT NULL AND m.id != me.id`,
      )
      .all(userId) as { id: number }[];
    return rows.map((r) => r.id);
  }

  folderByName(userId: number, name: string): FolderRow | undefined {
    return this.db
      .prepare("SELECT id, user_id, name FROM folders WHERE user_id = ? AND name_key = ?")
      .get(userId, folderKey(name)) as FolderRow | undefined;
  }

  ensureFolder(userId: number, name: string): FolderRow {
    const found = this.folderByName(userId, name);
    if (found) return found;
    this.db
      .prepare("INSERT INTO folders (user_id, name, name_key) VALUES (?, ?, ?)")
      .run(userId, name.trim(), folderKey(name));
    return this.folderByName(userId, name)!;
  }

  folders(userId: number): FolderRow[] {
    return this.db
      .prepare("SELECT id, user_id, name FROM folders WHERE user_id = ? ORDER BY name_key")
      .all(userId) as FolderRow[];
  }

  config(key: string): string | undefined {
    const row = this.db.prepare("SELECT value FROM config WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setConfig(key: string, value: string | null): void {
    if (value === null) this.db.prepare("DELETE FROM config WHERE key = ?").run(key);
    else
      this.db
        .prepare(
          "INSERT INTO config (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .run(key, value);
  }
}
