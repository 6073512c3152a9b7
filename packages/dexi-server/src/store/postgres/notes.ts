import { RANKING } from "../ranking.js";
import type { Card, ImportedNote, ListFilter, NewNote, NoteRow } from "../notes.js";
import { SNIPPET_CHARS } from "../notes.js";
import type { NotesPort } from "../port.js";
import { type Fragment, type Scope, scopeSql } from "../scope.js";
import { holdsNul, type Pg } from "./db.js";

const MAX_OFFSET = 1e12;

const cols = (body: "full" | "snippet") =>
  `n.id, n.uuid, n.user_id, n.folder_id, n.title, ${
    body === "full" ? "n.body" : `substr(n.body, 1, ${SNIPPET_CHARS + 1}) AS body`
  }, n.source, n.source_url, n.shared, n.created_ms, n.updated_ms, f.name AS folder_name, u.name AS owner_name`;
const joins = "LEFT JOIN folders f ON f.id = n.folder_id JOIN users u ON u.id = n.user_id";
/** A row's tags in order (NoteRow.tags), read with a page of rows instead of by a query of its own. */
const TAGS = `coalesce((SELECT array_agg(nt.tag ORDER BY nt.pos) FROM note_tags nt WHERE nt.note_id = n.id), '{}') AS tags`;

/** The words of an escaped FTS5 query (`"w1" "w2"`, see ftsQuery): letters, digits and marks only. */
function words(match: string): string {
  return [...match.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join(" ");
}

/** A number as a float8 literal: the score is computed in float8 throughout, as SQLite computes it. */
const f8 = (x: number) => `float8 '${x}'`;
const sat = (tf: string, len: string, ref: number) =>
  `(${tf} * ${f8(RANKING.K1 + 1)} / (${tf} + ${f8(RANKING.K1)} * (${f8(1 - RANKING.B)} + ${f8(RANKING.B)} * ${len} / ${f8(ref)})))`;
/**
 * A term's occurrences in one field of a hit `n`, read from the field's tsvector without unnesting it:
 * ts_rank_cd with every weight 1 and no normalisation scores a one-lexeme query as one cover per
 * position the vector keeps for that lexeme, i.e. exactly that lexeme's number of positions (what
 * `array_length(positions, 1)` of its unnest row gives), as a float4 (exact for those small counts).
 */
const tf = (field: string) => `ts_rank_cd('{1,1,1,1}'::float4[], n.${field}, ?::tsquery)::float8`;
/**
 * RANKING (store/ranking.ts) in PostgreSQL for a hit `c` whose term counts are the columns `t<i>`
 * (title) and `b<i>` (body): each note from its own terms, no corpus statistics; summed term by term
 * in the order of the terms, as SQL's sum() over them would.
 */
const score = (terms: number) =>
  Array.from(
    { length: terms },
    (_, i) =>
      `(${f8(RANKING.TITLE_WEIGHT)} * ${sat(`c.t${i}`, "c.tl", RANKING.TITLE_CHARS)} + ${sat(`c.b${i}`, "c.bl", RANKING.BODY_CHARS)})`,
  ).join(" + ");

/**
 * A lexeme as tsquery input: one quoted operand (a quote doubled, a backslash escaped), so no
 * character of it is read as tsquery syntax and it is not stemmed again.
 */
export function lexemeQuery(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** Query texts whose lexemes are remembered (per store; the text search configuration never changes). */
const LEXEME_CACHE = 1000;

/** Notes, tags, folders' counts and review cards in PostgreSQL: the SQLite NoteStore's operations. */
export class PgNotes implements NotesPort {
  constructor(private readonly db: Pg) {}

  /** Query text -> its distinct lexemes in byte order (oldest entry dropped first when full). */
  private readonly lexemeCache = new Map<string, string[]>();

  /** The distinct lexemes of a query text, as the index holds them (stemmed, diacritics folded). */
  private async lexemes(text: string): Promise<string[]> {
    const known = this.lexemeCache.get(text);
    if (known) return known;
    const row = await this.db.get<{ l: string[] | null }>(
      `SELECT array_agg(x.lexeme ORDER BY x.lexeme COLLATE "C") AS l
       FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('dexi', ?))) x`,
      [text],
    );
    const found = row?.l ?? [];
    if (this.lexemeCache.size >= LEXEME_CACHE) this.lexemeCache.delete(this.lexemeCache.keys().next().value!);
    this.lexemeCache.set(text, found);
    return found;
  }

  async insert(note: NewNote): Promise<number> {
    const row = await this.db.get<{ id: number }>(
      `INSERT INTO notes (uuid, user_id, folder_id, title, body, source, source_url, content_key, import_hash, created_ms, updated_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [
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
      ],
    );
    await this.setTags(row!.id, note.tags);
    return row!.id;
  }

  async update(
    id: number,
    patch: { title: string; body: string; updatedMs: number; tags: readonly { tag: string; kind: string }[] },
  ): Promise<void> {
    await this.db.run("UPDATE notes SET title = ?, body = ?, updated_ms = ? WHERE id = ?", [
      patch.title,
      patch.body,
      patch.updatedMs,
      id,
    ]);
    await this.setTags(id, patch.tags);
  }

  async setShared(id: number, shared: boolean): Promise<void> {
    await this.db.run("UPDATE notes SET shared = ? WHERE id = ?", [shared ? 1 : 0, id]);
  }

  unshareAll(userId: number): Promise<number> {
    return this.db.run("UPDATE notes SET shared = 0 WHERE user_id = ? AND shared = 1", [userId]);
  }

  async setFolder(id: number, folderId: number | null): Promise<void> {
    await this.db.run("UPDATE notes SET folder_id = ? WHERE id = ?", [folderId, id]);
  }

  async delete(id: number): Promise<void> {
    await this.db.run("DELETE FROM notes WHERE id = ?", [id]);
  }

  private async setTags(id: number, tags: readonly { tag: string; kind: string }[]): Promise<void> {
    await this.db.run("DELETE FROM note_tags WHERE note_id = ?", [id]);
    if (tags.length === 0) return;
    await this.db.run(
      `INSERT INTO note_tags (note_id, tag, kind, pos)
       SELECT ?, t.tag, t.kind, t.pos - 1 FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS t(tag, kind, pos)`,
      [id, tags.map((t) => t.tag), tags.map((t) => t.kind)],
    );
  }

  byUuid(uuid: string): Promise<NoteRow | undefined> {
    return this.db.get(`SELECT ${cols("full")} FROM notes n ${joins} WHERE n.uuid = ?`, [uuid]);
  }

  byId(id: number): Promise<NoteRow | undefined> {
    return this.db.get(`SELECT ${cols("full")} FROM notes n ${joins} WHERE n.id = ?`, [id]);
  }

  visibleByUuid(scope: Scope, uuid: string): Promise<NoteRow | undefined> {
    const s = scopeSql(scope);
    return this.db.get(`SELECT ${cols("full")} FROM notes n ${joins} WHERE n.uuid = ? AND ${s.sql}`, [
      uuid,
      ...s.params,
    ]);
  }

  byContentKey(userId: number, key: string): Promise<ImportedNote | undefined> {
    return this.db.get(
      `SELECT id, uuid, title, body, import_hash AS "importHash" FROM notes WHERE user_id = ? AND content_key = ?`,
      [userId, key],
    );
  }

  importedUnder(userId: number, prefix: string): Promise<(ImportedNote & { key: string })[]> {
    return this.db.all(
      `SELECT id, uuid, title, body, import_hash AS "importHash", content_key AS key FROM notes
       WHERE user_id = ? AND substr(content_key, 1, length(?::text)) = ?`,
      [userId, prefix, prefix],
    );
  }

  async contentKeyOf(id: number): Promise<string | null> {
    const row = await this.db.get<{ content_key: string | null }>(
      "SELECT content_key FROM notes WHERE id = ?",
      [id],
    );
    return row?.content_key ?? null;
  }

  async setContentKey(id: number, key: string): Promise<void> {
    await this.db.run("UPDATE notes SET content_key = ? WHERE id = ?", [key, id]);
  }

  async setImportHash(id: number, hash: string): Promise<void> {
    await this.db.run("UPDATE notes SET import_hash = ? WHERE id = ?", [hash, id]);
  }

  async countOwn(userId: number): Promise<number> {
    return (await this.db.get<{ c: number }>(
      "SELECT coalesce(sum(n), 0)::bigint AS c FROM note_counts WHERE user_id = ?",
      [userId],
    ))!.c;
  }

  async tagsOf(ids: readonly number[]): Promise<Map<number, string[]>> {
    const out = new Map<number, string[]>();
    if (ids.length === 0) return out;
    const rows = await this.db.all<{ note_id: number; tag: string }>(
      "SELECT note_id, tag FROM note_tags WHERE note_id = ANY(?::bigint[]) ORDER BY note_id, pos",
      [ids],
    );
    for (const r of rows) {
      const list = out.get(r.note_id);
      if (list) list.push(r.tag);
      else out.set(r.note_id, [r.tag]);
    }
    return out;
  }

  async list(
    scope: Scope,
    filter: ListFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: NoteRow[]; total: number }> {
    const where = listWhere(scope, filter);
    const col = filter.sort === "updated" ? "n.updated_ms" : "n.created_ms";
    const page = <R>(extra: Fragment) =>
      this.db.all<NoteRow & R>(
        `SELECT ${cols("snippet")}, ${TAGS}${extra.sql} FROM notes n ${joins} WHERE ${where.sql} ORDER BY ${col} DESC, n.id DESC LIMIT ? OFFSET ?`,
        [...extra.params, ...where.params, limit, Math.min(offset, MAX_OFFSET)],
      );
    const kept = counterWhere(scope, filter);
    if (kept) {
      // The total from the counters (migration 5), riding on the page: one query, one round trip.
      const total = `SELECT coalesce(sum(c.n), 0)::bigint AS c FROM note_counts c WHERE ${kept.sql}`;
      const rows = await page<{ total: number }>({ sql: `, (${total}) AS total`, params: kept.params });
      return {
        rows: rows.map(({ total: _, ...row }) => row),
        // A page past the end has no row to carry it.
        total: rows[0]?.total ?? (await this.db.get<{ c: number }>(total, kept.params))!.c,
      };
    }
    // A tag or a time range: counted, at the same time as the page on a second pooled connection
    // (inside a transaction both queue on its one connection, as before).
    const [rows, counted] = await Promise.all([
      page<object>({ sql: "", params: [] }),
      this.db.get<{ c: number }>(`SELECT count(*) AS c FROM notes n WHERE ${where.sql}`, where.params),
    ]);
    return { rows, total: counted!.c };
  }

  /** Full-text search over the visible notes, ranked by RANKING; `match` is an escaped FTS5 query. */
  async search(
    scope: Scope,
    match: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: (NoteRow & { score: number })[]; total: number }> {
    const text = words(match);
    const terms = await this.lexemes(text);
    if (terms.length === 0) return { rows: [], total: 0 }; // nothing to match, as plainto_tsquery says
    const s = scopeSql(scope);
    // One round trip: each hit's term counts and lengths (behind OFFSET 0, so each is computed once
    // per hit, not once per use in the score), then the score, the ranked page joined to its rows,
    // and the total riding on it (a window over the ranked hits, sparing a second pass over them).
    const counts = terms.map((_, i) => `${tf("title_tsv")} AS t${i}, ${tf("body_tsv")} AS b${i}`).join(", ");
    const rows = await this.db.all<NoteRow & { score: number; total: number }>(
      `WITH c AS (SELECT n.id, ${counts}, length(n.title) AS tl, length(n.body) AS bl FROM notes n
             WHERE n.fts @@ plainto_tsquery('dexi', ?) AND ${s.sql} OFFSET 0),
       r AS (SELECT c.id, ${score(terms.length)} AS score, count(*) OVER () AS total FROM c
             ORDER BY score DESC, c.id DESC LIMIT ? OFFSET ?)
       SELECT ${cols("snippet")}, ${TAGS}, r.score, r.total FROM r JOIN notes n ON n.id = r.id ${joins}
       ORDER BY r.score DESC, r.id DESC`,
      [
        ...terms.flatMap((t) => [lexemeQuery(t), lexemeQuery(t)]),
        text,
        ...s.params,
        limit,
        Math.min(offset, MAX_OFFSET),
      ],
    );
    // A page past the end has no row to carry the total: counted on its own then.
    const total =
      rows[0]?.total ??
      (await this.db.get<{ c: number }>(
        `SELECT count(*) AS c FROM notes n WHERE n.fts @@ plainto_tsquery('dexi', ?) AND ${s.sql}`,
        [text, ...s.params],
      ))!.c;
    return { rows: rows.map(({ total: _, ...row }) => row), total };
  }

  async seesEverything(scope: Scope): Promise<boolean> {
    if (scope.teammates.length > 0 || scope.folderId !== undefined || scope.tag !== undefined) return false;
    return (await this.db.get("SELECT 1 FROM users WHERE id <> ? LIMIT 1", [scope.userId])) === undefined;
  }

  async rowsByIds(ids: readonly number[]): Promise<NoteRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.all<NoteRow>(
      `SELECT ${cols("snippet")} FROM notes n ${joins} WHERE n.id = ANY(?::bigint[])`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)).filter((r): r is NoteRow => r !== undefined);
  }

  async visibleAmong(scope: Scope, ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const s = scopeSql(scope);
    const rows = await this.db.all<{ id: number }>(
      `SELECT n.id FROM notes n WHERE n.id = ANY(?::bigint[]) AND ${s.sql}`,
      [ids, ...s.params],
    );
    return new Set(rows.map((r) => r.id));
  }

  async visibleIds(scope: Scope): Promise<number[]> {
    const s = scopeSql(scope);
    return (await this.db.all<{ id: number }>(`SELECT n.id FROM notes n WHERE ${s.sql}`, s.params)).map(
      (r) => r.id,
    );
  }

  tagCounts(
    scope: Scope,
    kind: "hashtag" | "mention",
    limit: number,
  ): Promise<{ tag: string; count: number }[]> {
    const s = scopeSql(scope);
    return this.db.all(
      `SELECT t.tag AS tag, count(*) AS count FROM note_tags t JOIN notes n ON n.id = t.note_id
       WHERE t.kind = ? AND ${s.sql} GROUP BY t.tag ORDER BY count DESC, t.tag ASC LIMIT ?`,
      [kind, ...s.params, limit],
    );
  }

  async folderCounts(
    scope: Scope,
  ): Promise<{ folders: { id: number; name: string; note_count: number }[]; unfiled: number }> {
    const s = scopeSql(scope);
    const folders = await this.db.all<{ id: number; name: string; note_count: number }>(
      `SELECT f.id, f.name, (SELECT count(*) FROM notes n WHERE n.folder_id = f.id AND n.user_id = f.user_id AND ${s.sql}) AS note_count
       FROM folders f WHERE f.user_id = ? ORDER BY f.name_key`,
      [...s.params, scope.userId],
    );
    const unfiled = (await this.db.get<{ c: number }>(
      `SELECT count(*) AS c FROM notes n WHERE n.folder_id IS NULL AND n.user_id = ? AND ${s.sql}`,
      [scope.userId, ...s.params],
    ))!.c;
    return { folders, unfiled };
  }

  card(noteId: number): Promise<Card | undefined> {
    return this.db.get("SELECT * FROM review_cards WHERE note_id = ?", [noteId]);
  }

  async enrol(noteId: number, dueMs: number): Promise<void> {
    await this.db.run(
      "INSERT INTO review_cards (note_id, due_ms) VALUES (?, ?) ON CONFLICT (note_id) DO NOTHING",
      [noteId, dueMs],
    );
  }

  async unenrol(noteId: number): Promise<void> {
    await this.db.run("DELETE FROM review_cards WHERE note_id = ?", [noteId]);
  }

  async saveCard(card: Card): Promise<void> {
    await this.db.run(
      "UPDATE review_cards SET due_ms = ?, interval_days = ?, ease = ?, repetitions = ?, reviews = ? WHERE note_id = ?",
      [card.due_ms, card.interval_days, card.ease, card.repetitions, card.reviews, card.note_id],
    );
  }

  async dueCards(
    scope: Scope,
    nowMs: number,
    limit: number,
  ): Promise<{ rows: (NoteRow & Card)[]; total: number }> {
    const s = scopeSql({ ...scope, teammates: [] });
    const rows = await this.db.all<NoteRow & Card>(
      `SELECT ${cols("full")}, c.* FROM review_cards c JOIN notes n ON n.id = c.note_id ${joins}
       WHERE c.due_ms <= ? AND ${s.sql} ORDER BY c.due_ms ASC, n.id ASC LIMIT ?`,
      [nowMs, ...s.params, limit],
    );
    const total = (await this.db.get<{ c: number }>(
      `SELECT count(*) AS c FROM review_cards c JOIN notes n ON n.id = c.note_id WHERE c.due_ms <= ? AND ${s.sql}`,
      [nowMs, ...s.params],
    ))!.c;
    return { rows, total };
  }

  async ownIdsWithTags(userId: number, tags: readonly string[]): Promise<number[]> {
    if (tags.length === 0) return [];
    const rows = await this.db.all<{ id: number }>(
      `SELECT DISTINCT n.id FROM notes n JOIN note_tags t ON t.note_id = n.id
       WHERE n.user_id = ? AND t.tag = ANY(?::text[])`,
      [userId, tags],
    );
    return rows.map((r) => r.id);
  }

  async ownCardIds(userId: number): Promise<number[]> {
    const rows = await this.db.all<{ id: number }>(
      "SELECT c.note_id AS id FROM review_cards c JOIN notes n ON n.id = c.note_id WHERE n.user_id = ?",
      [userId],
    );
    return rows.map((r) => r.id);
  }
}

function listWhere(scope: Scope, filter: ListFilter): Fragment {
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
    parts.push("EXISTS (SELECT 1 FROM note_tags ft WHERE ft.note_id = n.id AND ft.tag = ANY(?::text[]))");
    // A tag holding U+0000 matches nothing (see holdsNul), as on SQLite.
    params.push(filter.tags.filter((t) => !holdsNul(t)));
  }
  return { sql: parts.join(" AND "), params };
}

/**
 * The counters (`note_counts`, folder_key 0 for no folder) selecting what `listWhere` selects, or
 * undefined when the listing filters on something they do not keep: a tag (the filter's, or a
 * restriction's) or a time range.
 */
function counterWhere(scope: Scope, filter: ListFilter): Fragment | undefined {
  // Every field of ListFilter is looked at below: a new one fails to compile here until it is.
  const { source, tags, folder, sort: _sort, from, to, ...unknown } = filter;
  const none: Record<string, never> = unknown;
  void none;
  if (scope.tag !== undefined || from !== undefined || to !== undefined) return undefined;
  if (tags && tags.length > 0) return undefined;
  const parts: string[] = [];
  const params: unknown[] = [];
  if (scope.teammates.length > 0) {
    parts.push(
      `(c.user_id = ? OR (c.shared = 1 AND c.user_id IN (${scope.teammates.map(() => "?").join(",")})))`,
    );
    params.push(scope.userId, ...scope.teammates);
  } else {
    parts.push("c.user_id = ?");
    params.push(scope.userId);
  }
  if (scope.folderId === null) parts.push("1 = 0");
  else if (scope.folderId !== undefined) {
    parts.push("c.folder_key = ?");
    params.push(scope.folderId);
  }
  if (source) {
    parts.push("c.source = ?");
    params.push(source);
  }
  if (folder === "unfiled") {
    parts.push("c.folder_key = 0 AND c.user_id = ?");
    params.push(scope.userId);
  } else if (folder !== undefined) {
    parts.push("c.folder_key = ? AND c.user_id = ?");
    params.push(folder, scope.userId);
  }
  return { sql: parts.join(" AND "), params };
}
