import type Database from "better-sqlite3";

/** The source records behind bookmark, email and feed notes, and feed subscriptions. */
export class Records {
  constructor(private readonly db: Database.Database) {}

  addBookmark(noteId: number, url: string, addedMs: number | null): void {
    this.db
      .prepare("INSERT INTO bookmarks (note_id, url, added_ms) VALUES (?, ?, ?)")
      .run(noteId, url, addedMs);
  }

  addEmail(
    noteId: number,
    e: { messageId: string | null; from: string | null; to: string | null; sentMs: number | null },
  ): void {
    this.db
      .prepare("INSERT INTO emails (note_id, message_id, from_addr, to_addr, sent_ms) VALUES (?, ?, ?, ?, ?)")
      .run(noteId, e.messageId, e.from, e.to, e.sentMs);
  }

  addFeedArticle(
    noteId: number,
    a: { feedId: number | null; guid: string; url: string | null; publishedMs: number | null },
  ): void {
    this.db
      .prepare("INSERT INTO feed_articles (note_id, feed_id, guid, url, published_ms) VALUES (?, ?, ?, ?, ?)")
      .run(noteId, a.feedId, a.guid, a.url, a.publishedMs);
  }

  /** How many records of each kind point at a note (for tests and `dexi` diagnostics). */
  countFor(noteId: number): { bookmarks: number; emails: number; feed_articles: number } {
    const c = (table: string) =>
      (this.db.prepare(`SELECT count(*) AS c FROM ${table} WHERE note_id = ?`).get(noteId) as { c: number })
        .c;
    return { bookmarks: c("bookmarks"), emails: c("emails"), feed_articles: c("feed_articles") };
  }

  addFeed(userId: number, url: string, nowMs: number): { id: number; created: boolean } {
    const found = this.db.prepare("SELECT id FROM feeds WHERE user_id = ? AND url = ?").get(userId, url) as
      | { id: number }
      | undefined;
    if (found) return { id: found.id, created: false };
    const info = this.db
      .prepare("INSERT INTO feeds (user_id, url, last_polled_ms) VALUES (?, ?, NULL)")
      .run(userId, url);
    void nowMs;
    return { id: Number(info.lastInsertRowid), created: true };
  }

  feeds(
    userId?: number,
  ): { id: number; user_id: number; url: string; title: string | null; last_polled_ms: number | null }[] {
    const sql = `SELECT id, user_id, url, title, last_polled_ms FROM feeds ${userId === undefined ? "" : "WHERE user_id = ?"} ORDER BY id`;
    return this.db.prepare(sql).all(...(userId === undefined ? [] : [userId])) as {
      id: number;
      user_id: number;
      url: string;
      title: string | null;
      last_polled_ms: number | null;
    }[];
  }

  markPolled(feedId: number, title: string | null, nowMs: number): void {
    this.db
      .prepare("UPDATE feeds SET title = coalesce(?, title), last_polled_ms = ? WHERE id = ?")
      .run(title, nowMs, feedId);
  }
}
