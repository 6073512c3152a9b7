import { type FolderRow, folderKey, type UserRow, type UserSettings } from "../accounts.js";
import type { AccountsPort, RecordsPort, TombstonesPort } from "../port.js";
import { holdsNul, type Pg } from "./db.js";

/** Users, teams, folders, settings and config in PostgreSQL: the SQLite Accounts' operations. */
export class PgAccounts implements AccountsPort {
  constructor(private readonly db: Pg) {}

  async userByName(name: string): Promise<UserRow | undefined> {
    if (holdsNul(name)) return undefined;
    return this.db.get("SELECT * FROM users WHERE dexi_nocase(name) = dexi_nocase(?)", [name]);
  }

  userById(id: number): Promise<UserRow | undefined> {
    return this.db.get("SELECT * FROM users WHERE id = ?", [id]);
  }

  listUsers(): Promise<(UserRow & { team: string | null; notes: number })[]> {
    return this.db.all(
      `SELECT u.*, t.name AS team, (SELECT count(*) FROM notes n WHERE n.user_id = u.id) AS notes
       FROM users u LEFT JOIN teams t ON t.id = u.team_id ORDER BY dexi_nocase(u.name), u.name`,
    );
  }

  async createUser(name: string, nowMs: number): Promise<UserRow> {
    return (await this.db.get<UserRow>("INSERT INTO users (name, created_ms) VALUES (?, ?) RETURNING *", [
      name,
      nowMs,
    ]))!;
  }

  /** The named user, created on first use; instances creating the same user at once make one. */
  async ensureUser(name: string, nowMs: number): Promise<UserRow> {
    await this.db.run(
      "INSERT INTO users (name, created_ms) VALUES (?, ?) ON CONFLICT (dexi_nocase(name)) DO NOTHING",
      [name, nowMs],
    );
    return (await this.userByName(name))!;
  }

  async settings(userId: number): Promise<UserSettings> {
    const u = await this.userById(userId);
    if (!u) throw new Error(`no user ${userId}`);
    return {
      timeZone: u.time_zone,
      reviewTags: JSON.parse(u.review_tags) as string[],
      plan: u.plan,
      noteCap: u.note_cap,
    };
  }

  async updateSettings(userId: number, patch: Partial<UserSettings>): Promise<void> {
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
    await this.db.run(`UPDATE users SET ${sets.join(", ")} WHERE id = ?`, [...params, userId]);
  }

  async teamByName(name: string): Promise<{ id: number; name: string } | undefined> {
    if (holdsNul(name)) return undefined;
    return this.db.get("SELECT id, name FROM teams WHERE dexi_nocase(name) = dexi_nocase(?)", [name]);
  }

  async createTeam(name: string, nowMs: number): Promise<{ id: number; name: string }> {
    return (await this.db.get<{ id: number; name: string }>(
      "INSERT INTO teams (name, created_ms) VALUES (?, ?) RETURNING id, name",
      [name, nowMs],
    ))!;
  }

  /** Teams by name, each with its members by name: NOCASE, as the SQLite store orders them. */
  listTeams(): Promise<{ name: string; members: string }[]> {
    return this.db.all(
      `SELECT t.name, coalesce(string_agg(u.name, ', ' ORDER BY dexi_nocase(u.name), u.name), '') AS members
       FROM teams t LEFT JOIN users u ON u.team_id = t.id GROUP BY t.id, t.name ORDER BY dexi_nocase(t.name), t.name`,
    );
  }

  async setTeam(userId: number, teamId: number | null): Promise<void> {
    await this.db.run("UPDATE users SET team_id = ? WHERE id = ?", [teamId, userId]);
  }

  async teammates(userId: number): Promise<number[]> {
    const rows = await this.db.all<{ id: number }>(
      `SELECT m.id FROM users me JOIN users m ON m.team_id = me.team_id
       WHERE me.id = ? AND me.team_id IS NOT NULL AND m.id <> me.id ORDER BY m.id`,
      [userId],
    );
    return rows.map((r) => r.id);
  }

  async folderByName(userId: number, name: string): Promise<FolderRow | undefined> {
    if (holdsNul(name)) return undefined;
    return this.db.get("SELECT id, user_id, name FROM folders WHERE user_id = ? AND name_key = ?", [
      userId,
      folderKey(name),
    ]);
  }

  async ensureFolder(userId: number, name: string): Promise<FolderRow> {
    await this.db.run(
      "INSERT INTO folders (user_id, name, name_key) VALUES (?, ?, ?) ON CONFLICT (user_id, name_key) DO NOTHING",
      [userId, name.trim(), folderKey(name)],
    );
    return (await this.folderByName(userId, name))!;
  }

  folders(userId: number): Promise<FolderRow[]> {
    return this.db.all("SELECT id, user_id, name FROM folders WHERE user_id = ? ORDER BY name_key", [userId]);
  }

  async config(key: string): Promise<string | undefined> {
    return (await this.db.get<{ value: string }>("SELECT value FROM config WHERE key = ?", [key]))?.value;
  }

  async setConfig(key: string, value: string | null): Promise<void> {
    if (value === null) await this.db.run("DELETE FROM config WHERE key = ?", [key]);
    else
      await this.db.run(
        "INSERT INTO config (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value],
      );
  }
}

/** Bookmark, email and feed-article records and feed subscriptions in PostgreSQL. */
export class PgRecords implements RecordsPort {
  constructor(private readonly db: Pg) {}

  async addBookmark(noteId: number, url: string, addedMs: number | null): Promise<void> {
    await this.db.run("INSERT INTO bookmarks (note_id, url, added_ms) VALUES (?, ?, ?)", [
      noteId,
      url,
      addedMs,
    ]);
  }

  async addEmail(
    noteId: number,
    e: { messageId: string | null; from: string | null; to: string | null; sentMs: number | null },
  ): Promise<void> {
    await this.db.run(
      "INSERT INTO emails (note_id, message_id, from_addr, to_addr, sent_ms) VALUES (?, ?, ?, ?, ?)",
      [noteId, e.messageId, e.from, e.to, e.sentMs],
    );
  }

  async addFeedArticle(
    noteId: number,
    a: { feedId: number | null; guid: string; url: string | null; publishedMs: number | null },
  ): Promise<void> {
    await this.db.run(
      "INSERT INTO feed_articles (note_id, feed_id, guid, url, published_ms) VALUES (?, ?, ?, ?, ?)",
      [noteId, a.feedId, a.guid, a.url, a.publishedMs],
    );
  }

  async countFor(noteId: number): Promise<{ bookmarks: number; emails: number; feed_articles: number }> {
    return (await this.db.get(
      `SELECT (SELECT count(*) FROM bookmarks WHERE note_id = ?) AS bookmarks,
              (SELECT count(*) FROM emails WHERE note_id = ?) AS emails,
              (SELECT count(*) FROM feed_articles WHERE note_id = ?) AS feed_articles`,
      [noteId, noteId, noteId],
    ))!;
  }

  async addFeed(userId: number, url: string, _nowMs: number): Promise<{ id: number; created: boolean }> {
    const made = await this.db.get<{ id: number }>(
      "INSERT INTO feeds (user_id, url) VALUES (?, ?) ON CONFLICT (user_id, url) DO NOTHING RETURNING id",
      [userId, url],
    );
    if (made) return { id: made.id, created: true };
    const found = await this.db.get<{ id: number }>("SELECT id FROM feeds WHERE user_id = ? AND url = ?", [
      userId,
      url,
    ]);
    return { id: found!.id, created: false };
  }

  feeds(
    userId?: number,
  ): Promise<
    { id: number; user_id: number; url: string; title: string | null; last_polled_ms: number | null }[]
  > {
    return this.db.all(
      `SELECT id, user_id, url, title, last_polled_ms FROM feeds ${userId === undefined ? "" : "WHERE user_id = ?"} ORDER BY id`,
      userId === undefined ? [] : [userId],
    );
  }

  async markPolled(feedId: number, title: string | null, nowMs: number): Promise<void> {
    await this.db.run("UPDATE feeds SET title = coalesce(?, title), last_polled_ms = ? WHERE id = ?", [
      title,
      nowMs,
      feedId,
    ]);
  }
}

/** Deleted imported notes' keys in PostgreSQL (see the SQLite Tombstones). */
export class PgTombstones implements TombstonesPort {
  constructor(private readonly db: Pg) {}

  async remember(userId: number, key: string, nowMs: number): Promise<void> {
    await this.db.run(
      `INSERT INTO import_tombstones (user_id, content_key, deleted_ms) VALUES (?, ?, ?)
       ON CONFLICT (user_id, content_key) DO UPDATE SET deleted_ms = excluded.deleted_ms`,
      [userId, key, nowMs],
    );
  }

  async has(userId: number, key: string, sinceMs: number): Promise<boolean> {
    return (
      (await this.db.get(
        "SELECT 1 FROM import_tombstones WHERE user_id = ? AND content_key = ? AND deleted_ms >= ?",
        [userId, key, sinceMs],
      )) !== undefined
    );
  }

  async forget(userId: number, key: string): Promise<void> {
    await this.db.run("DELETE FROM import_tombstones WHERE user_id = ? AND content_key = ?", [userId, key]);
  }

  expire(beforeMs: number): Promise<number> {
    return this.db.run("DELETE FROM import_tombstones WHERE deleted_ms < ?", [beforeMs]);
  }
}
