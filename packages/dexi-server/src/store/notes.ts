import type Database from "better-sqlite3";
import type { Sort, Source } from "../domain/limits.js";
import { Ranker } from "./ranking.js";
import { type Fragment, type Scope, scopeSql } from "./scope.js";

export type { Source };

/** A note as read for output: owner and folder names joined in. `body` may be cut to a snippet's length. */
export interface NoteRow {
  id: number;
  uuid: string;
  user_id: number;
  folder_id: number | null;
  title: string;
  body: string;
  source: Source;
  source_url: string | null;
  shared: number;
  created_ms: number;
  updated_ms: number;
  folder_name: string | null;
  owner_name: string;
  /**
   * The note's tags in order, when the store read them with the row (PostgreSQL's listings and
   * searches, sparing a round trip); otherwise absent and read by `tagsOf`.
   */
  tags?: string[];
}

export interface NewNote {
  uuid: string;
  userId: number;
  folderId: number | null;
  title: string;
  body: string;
  source: Source;
  sourceUrl: string | null;
  contentKey: string | null;
  /** For imported notes: the hash of the title and body as imported (see `importHash`). */
  importHash?: string | null;
  createdMs: number;
  updatedMs: number;
  tags: readonly { tag: string; kind: string }[];
}

/** An imported note as a re-import needs it. */
export interface ImportedNote {
  id: number;
  uuid: string;
  title: string;
  body: string;
  importHash: string | null;
}

export interface ListFilter {
  source?: Source;
  /** Any of these tags. */
  tags?: readonly string[];
  /** A folder id (own notes in it) or "unfiled" (own notes in none). */
  folder?: number | "unfiled";
  sort: Sort;
  from?: number;
  to?: number;
}

export interface Card {
  note_id: number;
  due_ms: number;
  interval_days: number;
  ease: number;
  repetitions: number;
  reviews: number;
}

/** Characters of body a snippet needs: one more than shown, to know whether it was cut. */
export const SNIPPET_CHARS = 300;
/** Pages past any real data still bind as an integer. */
const MAX_OFFSET = 1e12;

const cols = (body: "full" | "snippet") =>
  `n.id, n.uuid, n.user_id, n.folder_id, n.title, ${
    body === "full" ? "n.body" : `substr(n.body, 1, ${SNIPPET_CHARS + 1}) AS body`
  }, n.source, n.source_url, n.shared, n.created_ms, n.updated_ms, f.name AS folder_name, u.name AS owner_name`;
const joins = "LEFT JOIN folders f ON f.id = n.folder_id JOIN users u ON u.id = n.user_id";

export class NoteStore {
  private readonly ranker: Ranker;

  constructor(private readonly db: Database.Database) {
    this.ranker = new Ranker(db);
  }

  insert(note: NewNote): number {
    const info = this.db
      .prepare(
        `INSERT INTO notes (uuid, user_id, folder_id, title, body, source, source_url, content_key, import_hash, created_ms, updated_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        note.uuid,
        note.userId,
        note.folderId,
        note.title,
        note.body,
        note.source,
        note.sourceUrl,
        note.contentKey,
        note.importHash ?? null,
        note.createdMs,
        note.updatedMs,
      );
    const id = Number(info.lastInsertRowid);
    this.setTags(id, note.tags);
    return id;
  }

  update(
    id: number,
    patch: { title: string; body: string; updatedMs: number; tags: readonly { tag: string; kind: string }[] },
  ): void {
    this.db
      .prepare("UPDATE notes SET title = ?, body = ?, updated_ms = ? WHERE id = ?")
      .run(patch.title, patch.body, patch.updatedMs, id);
    this.setTags(id, patch.tags);
  }

  setShared(id: number, shared: boolean): void {
    this.db.prepare("UPDATE notes SET shared = ? WHERE id = ?").run(shared ? 1 : 0, id);
  }

  /** Ends every share of a user's notes; how many were shared. */
  unshareAll(userId: number): number {
    return this.db.prepare("UPDATE notes SET shared = 0 WHERE user_id = ? AND shared = 1").run(userId)
      .changes;
  }

  setFolder(id: number, folderId: number | null): void {
    this.db.prepare("UPDATE notes SET folder_id = ? WHERE id = ?").run(folderId, id);
  }

  /** Deletes the note; its tags, card, vector and bookmark/email/feed-article record go by cascade. */
  delete(id: number): void {
    this.db.prepare("DELETE FROM notes WHERE id = ?").run(id);
  }

  private setTags(id: number, tags: readonly { tag: string; kind: string }[]): void {
    this.db.prepare("DELETE FROM note_tags WHERE note_id = ?").run(id);
    const ins = this.db.prepare("INSERT INTO note_tags (note_id, tag, kind, pos) VALUES (?, ?, ?, ?)");
    tags.forEach((t, i) => {
      ins.run(id, t.tag, t.kind, i);
    });
  }

  /** Any note by uuid, ignoring visibility (write checks decide what to do with it). */
  byUuid(uuid: string): NoteRow | undefined {
    return this.db.prepare(`SELECT ${cols("full")} FROM notes n ${joins} WHERE n.uuid = ?`).get(uuid) as
      | NoteRow
      | undefined;
  }

  byId(id: number): NoteRow | undefined {
    return this.db.prepare(`SELECT ${cols("full")} FROM notes n ${joins} WHERE n.id = ?`).get(id) as
      | NoteRow
      | undefined;
  }

  visibleByUuid(scope: Scope, uuid: string): NoteRow | undefined {
    const s = scopeSql(scope);
    return this.db
      .prepare(`SELECT ${cols("full")} FROM notes n ${joins} WHERE n.uuid = ? AND ${s.sql}`)
      .get(uuid, ...s.params) as NoteRow | undefined;
  }

  byContentKey(userId: number, key: string): ImportedNote | undefined {
    return this.db
      .prepare(
        "SELECT id, uuid, title, body, import_hash AS importHash FROM notes WHERE user_id = ? AND content_key = ?",
      )
      .get(userId, key) as ImportedNote | undefined;
  }

  /** Own imported notes whose content key starts with `prefix`, with their keys. */
  importedUnder(userId: number, prefix: string): (ImportedNote & { key: string })[] {
    return this.db
      .prepare(
        `SELECT id, uuid, title, body, import_hash AS importHash, content_key AS key FROM notes
         WHERE user_id = ? AND substr(content_key, 1, length(?)) = ?`,
      )
      .all(userId, prefix, prefix) as (ImportedNote & { key: string })[];
  }

  /** The key an imported note was imported under (null for notes written in dexi). */
  contentKeyOf(id: number): string | null {
    const row = this.db.prepare("SELECT content_key FROM notes WHERE id = ?").get(id) as
      | { content_key: string | null }
      | undefined;
    return row?.content_key ?? null;
  }

  setContentKey(id: number, key: string): void {
    this.db.prepare("UPDATE notes SET content_key = ? WHERE id = ?").run(key, id);
  }

  setImportHash(id: number, hash: string): void {
    this.db.prepare("UPDATE notes SET import_hash = ? WHERE id = ?").run(hash, id);
  }

  countOwn(userId: number): number {
    return (this.db.prepare("SELECT count(*) AS c FROM notes WHERE user_id = ?").get(userId) as { c: number })
      .c;
  }

  tagsOf(ids: readonly number[]): Map<number, string[]> {
    const out = new Map<number, string[]>();
    if (ids.length === 0) return out;
    const rows = this.db
      .prepare(
        `SELECT note_id, tag FROM note_tags WHERE note_id IN (${ids.map(() => "?").join(",")}) ORDER BY note_id, pos`,
      )
      .all(...ids) as { note_id: number; tag: string }[];
    for (const r of rows) {
      const list = out.get(r.note_id);
      if (list) list.push(r.tag);
      else out.set(r.note_id, [r.tag]);
    }
    return out;
  }

  list(scope: Scope, filter: ListFilter, limit: number, offset: number): { rows: NoteRow[]; total: number } {
    const where = this.listWhere(scope, filter);
    const col = filter.sort === "updated" ? "n.updated_ms" : "n.created_ms";
    const rows = this.db
      .prepare(
        `SELECT ${cols("snippet")} FROM notes n ${joins} WHERE ${where.sql} ORDER BY ${col} DESC, n.id DESC LIMIT ? OFFSET ?`,
      )
      .all(...where.params, limit, Math.min(offset, MAX_OFFSET)) as NoteRow[];
    const total = (
      this.db.prepare(`SELECT count(*) AS c FROM notes n WHERE ${where.sql}`).get(...where.params) as {
        c: number;
      }
    ).c;
    return { rows, total };
  }

  private listWhere(scope: Scope, filter: ListFilter): Fragment {
    const s = scopeSql(scope);
    const parts = [s.sql];
    const params = [...s.params];
    if (filter.source) {
      parts.push("n.source = ?");
      params.push(filter.source);
    }
    if (filter.folder === "unfiled") {
      parts.push("n.folder_id IS NULL AND n.user_id = ?");
      params.push(scope.userId);
    } else if (filter.folder !== undefined) {
      parts.push("n.folder_id = ? AND n.user_id = ?");
      params.push(filter.folder, scope.userId);
    }
    const col = filter.sort === "updated" ? "n.updated_ms" : "n.created_ms";
    if (filter.from !== undefined) {
      parts.push(`${col} >= ?`);
      params.push(filter.from);
    }
    if (filter.to !== undefined) {
      parts.push(`${col} < ?`);
      params.push(filter.to);
    }
    if (filter.tags && filter.tags.length > 0) {
      parts.push(
        `EXISTS (SELECT 1 FROM note_tags ft WHERE ft.note_id = n.id AND ft.tag IN (${filter.tags.map(() => "?").join(",")}))`,
      );
      params.push(...filter.tags);
    }
    return { sql: parts.join(" AND "), params };
  }

  /**
   * Full-text search; `match` is an already-escaped FTS5 query. Ranked by RANKING (store/ranking.ts):
   * each note scored from its own text only, so the order never depends on notes outside the scope.
   */
  search(
    scope: Scope,
    match: string,
    limit: number,
    offset: number,
  ): { rows: (NoteRow & { score: number })[]; total: number } {
    const off = Math.min(offset, MAX_OFFSET);
    // One user, no boundary: every note is visible, so finding and counting the matches needs no join.
    const everything = this.seesEverything(scope);
    const s = scopeSql(scope);
    const ranked = this.ranker.rank(match, everything ? null : s, limit, off);
    const total = (
      everything
        ? this.db.prepare("SELECT count(*) AS c FROM notes_fts WHERE notes_fts MATCH ?").get(match)
        : this.db
            .prepare(
              `SELECT count(*) AS c FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH ? AND ${s.sql}`,
            )
            .get(match, ...s.params)
    ) as { c: number };
    const score = new Map(ranked.map((r) => [r.id, r.score]));
    const rows = this.rowsByIds(ranked.map((r) => r.id)).map((r) => ({ ...r, score: score.get(r.id)! }));
    return { rows, total: total.c };
  }

  /** True when the scope is every note in the database: an unrestricted reader who is its only user. */
  seesEverything(scope: Scope): boolean {
    if (scope.teammates.length > 0 || scope.folderId !== undefined || scope.tag !== undefined) return false;
    const other = this.db.prepare("SELECT 1 FROM users WHERE id != ? LIMIT 1").get(scope.userId);
    return other === undefined;
  }

  /** Rows by id in the given order, with snippets. */
  rowsByIds(ids: readonly number[]): NoteRow[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT ${cols("snippet")} FROM notes n ${joins} WHERE n.id IN (${ids.map(() => "?").join(",")})`,
      )
      .all(...ids) as NoteRow[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)).filter((r): r is NoteRow => r !== undefined);
  }

  /** Which of these note ids are visible. */
  visibleAmong(scope: Scope, ids: readonly number[]): Set<number> {
    if (ids.length === 0) return new Set();
    const s = scopeSql(scope);
    const rows = this.db
      .prepare(`SELECT n.id FROM notes n WHERE n.id IN (${ids.map(() => "?").join(",")}) AND ${s.sql}`)
      .all(...ids, ...s.params) as { id: number }[];
    return new Set(rows.map((r) => r.id));
  }

  /** Every visible note id (used for narrow, restricted scopes). */
  visibleIds(scope: Scope): number[] {
    const s = scopeSql(scope);
    return (
      this.db.prepare(`SELECT n.id FROM notes n WHERE ${s.sql}`).all(...s.params) as { id: number }[]
    ).map((r) => r.id);
  }

  tagCounts(scope: Scope, kind: "hashtag" | "mention", limit: number): { tag: string; count: number }[] {
    const s = scopeSql(scope);
    return this.db
      .prepare(
        `SELECT t.tag AS tag, count(*) AS count FROM note_tags t JOIN notes n ON n.id = t.note_id
         WHERE t.kind = ? AND ${s.sql} GROUP BY t.tag ORDER BY count DESC, t.tag ASC LIMIT ?`,
      )
      .all(kind, ...s.params, limit) as { tag: string; count: number }[];
  }

  /** Own folders with their counts of visible notes, and the visible own unfiled notes. */
  folderCounts(scope: Scope): {
    folders: { id: number; name: string; note_count: number }[];
    unfiled: number;
  } {
    const s = scopeSql(scope);
    const folders = this.db
      .prepare(
        `SELECT f.id, f.name, (SELECT count(*) FROM notes n WHERE n.folder_id = f.id AND n.user_id = f.user_id AND ${s.sql}) AS note_count
         FROM folders f WHERE f.user_id = ? ORDER BY f.name_key`,
      )
      .all(...s.params, scope.userId) as { id: number; name: string; note_count: number }[];
    const unfiled = (
      this.db
        .prepare(`SELECT count(*) AS c FROM notes n WHERE n.folder_id IS NULL AND n.user_id = ? AND ${s.sql}`)
        .get(scope.userId, ...s.params) as { c: number }
    ).c;
    return { folders, unfiled };
  }

  // --- review cards ---

  card(noteId: number): Card | undefined {
    return this.db.prepare("SELECT * FROM review_cards WHERE note_id = ?").get(noteId) as Card | undefined;
  }

  /** Enrols a note (due at once) or leaves an existing card as it is. */
  enrol(noteId: number, dueMs: number): void {
    this.db
      .prepare("INSERT INTO review_cards (note_id, due_ms) VALUES (?, ?) ON CONFLICT (note_id) DO NOTHING")
      .run(noteId, dueMs);
  }

  unenrol(noteId: number): void {
    this.db.prepare("DELETE FROM review_cards WHERE note_id = ?").run(noteId);
  }

  saveCard(card: Card): void {
    this.db
      .prepare(
        "UPDATE review_cards SET due_ms = ?, interval_days = ?, ease = ?, repetitions = ?, reviews = ? WHERE note_id = ?",
      )
      .run(card.due_ms, card.interval_days, card.ease, card.repetitions, card.reviews, card.note_id);
  }

  /** Own visible cards due by `nowMs`, most overdue first, and how many there are. */
  dueCards(scope: Scope, nowMs: number, limit: number): { rows: (NoteRow & Card)[]; total: number } {
    const s = scopeSql({ ...scope, teammates: [] });
    const rows = this.db
      .prepare(
        `SELECT ${cols("full")}, c.* FROM review_cards c JOIN notes n ON n.id = c.note_id ${joins}
         WHERE c.due_ms <= ? AND ${s.sql} ORDER BY c.due_ms ASC, n.id ASC LIMIT ?`,
      )
      .all(nowMs, ...s.params, limit) as (NoteRow & Card)[];
    const total = (
      this.db
        .prepare(
          `SELECT count(*) AS c FROM review_cards c JOIN notes n ON n.id = c.note_id WHERE c.due_ms <= ? AND ${s.sql}`,
        )
        .get(nowMs, ...s.params) as { c: number }
    ).c;
    return { rows, total };
  }

  /** Ids of a user's notes carrying any of these tags (for re-enrolling after a deck change). */
  ownIdsWithTags(userId: number, tags: readonly string[]): number[] {
    if (tags.length === 0) return [];
    return (
      this.db
        .prepare(
          `SELECT DISTINCT n.id FROM notes n JOIN note_tags t ON t.note_id = n.id
           WHERE n.user_id = ? AND t.tag IN (${tags.map(() => "?").join(",")})`,
        )
        .all(userId, ...tags) as { id: number }[]
    ).map((r) => r.id);
  }

  ownCardIds(userId: number): number[] {
    return (
      this.db
        .prepare(
          "SELECT c.note_id AS id FROM review_cards c JOIN notes n ON n.id = c.note_id WHERE n.user_id = ?",
        )
        .all(userId) as { id: number }[]
    ).map((r) => r.id);
  }
}
