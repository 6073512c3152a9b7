import type Database from "better-sqlite3";
import type { Fragment } from "./scope.js";

/** The tokenizer of `notes_fts` (migration 1): query terms must be cut and stemmed exactly like it. */
export const FTS_TOKENIZER = "porter unicode61 remove_diacritics 2";

/**
 * How full-text matches are ranked: each note on its own, from its own text only. No corpus
 * statistics (no document frequency, no collection size, no average length), so the order a caller
 * sees never depends on notes it cannot see: other users' notes, notes outside its boundary, or notes
 * written to probe for words.
 *
 *   score = sum over query terms t of  TITLE_WEIGHT * sat(tf(t, title), len(title), TITLE_CHARS)
 *                                    +                sat(tf(t, body),  len(body),  BODY_CHARS)
 *   sat(tf, len, L) = tf * (K1 + 1) / (tf + K1 * (1 - B + B * len / L))
 *
 * This is BM25's term-frequency saturation and length normalisation with fixed reference lengths in
 * place of the collection's average, and no IDF. `tf` counts a term's occurrences as FTS5 indexes them
 * (stemmed, diacritics folded), `len` is the field's length in characters. Ties: newest note first.
 * Every part is per row, so the same rule can be written in any SQL engine.
 */
export const RANKING = { K1: 1.2, B: 0.75, TITLE_WEIGHT: 10, TITLE_CHARS: 40, BODY_CHARS: 1000 } as const;

const sat = (tf: string, len: string, ref: number) =>
  `(${tf} * ${RANKING.K1 + 1} / (${tf} + ${RANKING.K1} * (${1 - RANKING.B} + ${RANKING.B} * ${len} / ${ref}.0)))`;
const SCORE = `sum(CASE t.col WHEN 'title'
  THEN ${RANKING.TITLE_WEIGHT}.0 * ${sat("t.tf", "length(s.title)", RANKING.TITLE_CHARS)}
  ELSE ${sat("t.tf", "length(s.body)", RANKING.BODY_CHARS)} END)`;

export interface Ranked {
  id: number;
  score: number;
}

/**
 * Ranks FTS5 matches by RANKING. Term frequencies come from an fts5vocab "instance" view of the index
 * (positions, no re-reading of text); the query's terms from a private temp FTS5 table with the same
 * tokenizer, so they are the index's own terms. Both live in this connection's temp schema.
 */
export class Ranker {
  private ready = false;

  constructor(private readonly db: Database.Database) {}

  /** The distinct index terms of an FTS5 query made of quoted words (see ftsQuery). */
  terms(match: string): string[] {
    this.prepareTemp();
    this.db.prepare("INSERT INTO temp.dexi_query (rowid, q) VALUES (1, ?)").run(match);
    try {
      const terms = this.db
        .prepare("SELECT term FROM temp.dexi_query_terms ORDER BY offset")
        .pluck()
        .all() as string[];
      return [...new Set(terms)];
    } finally {
      this.db.prepare("DELETE FROM temp.dexi_query").run();
    }
  }

  /**
   * One page of the visible matches, best first. `visible` selects the matching notes the caller may
   * see from `notes_fts` joined as `n` (null: every match is visible, no join needed).
   */
  rank(match: string, visible: Fragment | null, limit: number, offset: number): Ranked[] {
    const terms = this.terms(match);
    if (terms.length === 0) return [];
    const hits = visible
      ? `SELECT n.id FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH ? AND ${visible.sql}`
      : "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?";
    return this.db
      .prepare(
        `WITH hits AS (${hits}),
         t AS (
           SELECT doc, term, col, count(*) AS tf FROM temp.dexi_note_terms
           WHERE term IN (${terms.map(() => "?").join(",")}) AND doc IN hits
           GROUP BY doc, term, col
         )
         SELECT s.id AS id, ${SCORE} AS score FROM t JOIN notes s ON s.id = t.doc
         GROUP BY s.id ORDER BY score DESC, s.id DESC LIMIT ? OFFSET ?`,
      )
      .all(match, ...(visible?.params ?? []), ...terms, limit, offset) as Ranked[];
  }

  private prepareTemp(): void {
    if (this.ready) return;
    this.db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.dexi_query USING fts5(q, tokenize = '${FTS_TOKENIZER}');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.dexi_query_terms USING fts5vocab(temp, dexi_query, instance);
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.dexi_note_terms USING fts5vocab(main, notes_fts, instance);
    `);
    this.ready = true;
  }
}
