/**
 * Which notes a reader may see, as data. The domain decides the boundary (domain/access.ts); this module
 * only turns it into SQL, so every query that reads notes filters them the same way.
 */
export interface Scope {
  userId: number;
  /** Team-mates whose team-shared notes are visible (always empty under a restriction). */
  teammates: readonly number[];
  /** undefined: no folder boundary; a number: only that folder; null: the boundary folder does not exist. */
  folderId?: number | null;
  /** Only notes carrying this tag (lower-case, with its sign). */
  tag?: string;
}

export interface Fragment {
  sql: string;
  params: unknown[];
}

/** The WHERE fragment selecting visible notes from `notes` aliased as `alias`. */
export function scopeSql(scope: Scope, alias = "n"): Fragment {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (scope.teammates.length > 0) {
    parts.push(
      `(${alias}.user_id = ? OR (${alias}.shared = 1 AND ${alias}.user_id IN (${scope.teammates.map(() => "?").join(",")})))`,
    );
    params.push(scope.userId, ...scope.teammates);
  } else {
    parts.push(`${alias}.user_id = ?`);
    params.push(scope.userId);
  }
  // A comparison rather than a bare 0, so the fragment is valid in PostgreSQL too.
  if (scope.folderId === null) parts.push("1 = 0");
  else if (scope.folderId !== undefined) {
    parts.push(`${alias}.folder_id = ?`);
    params.push(scope.folderId);
  }
  if (scope.tag !== undefined) {
    parts.push(`EXISTS (SELECT 1 FROM note_tags st WHERE st.note_id = ${alias}.id AND st.tag = ?)`);
    params.push(scope.tag);
  }
  return { sql: parts.join(" AND "), params };
}

export function isRestricted(scope: Scope): boolean {
  return scope.folderId !== undefined || scope.tag !== undefined;
}
