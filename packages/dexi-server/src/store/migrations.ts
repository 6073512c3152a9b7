import type Database from "better-sqlite3";

/**
 * Ordered schema migrations. The database's `PRAGMA user_version` is the number of migrations
 * applied; each runs in its own transaction, so a crash leaves the schema at a whole version.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: the whole first schema.
  `
  CREATE TABLE teams (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    created_ms INTEGER NOT NULL
  );
  CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    team_id INTEGER REFERENCES teams(id) ON DELETE SET NULL,
    time_zone TEXT NOT NULL DEFAULT 'UTC',
    review_tags TEXT NOT NULL DEFAULT '["#review"]',
    plan TEXT NOT NULL DEFAULT 'unlimited',
    note_cap INTEGER,
    created_ms INTEGER NOT NULL
  );
  CREATE TABLE folders (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    UNIQUE (user_id, name_key)
  );
  CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    folder_id INTEGER REFERENCES folders(id) ON DELETE SET NULL,
    title TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL CHECK (source IN ('note', 'bookmark', 'email', 'feed')),
    source_url TEXT,
    shared INTEGER NOT NULL DEFAULT 0,
    content_key TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
  );
  CREATE INDEX notes_user_created ON notes (user_id, created_ms, id);
  CREATE INDEX notes_user_updated ON notes (user_id, updated_ms, id);
  CREATE INDEX notes_user_folder ON notes (user_id, folder_id, created_ms);
  CREATE INDEX notes_user_source ON notes (user_id, source, created_ms);
  CREATE UNIQUE INDEX notes_content_key ON notes (user_id, content_key) WHERE content_key IS NOT NULL;

  CREATE TABLE note_tags (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('hashtag', 'mention')),
    pos INTEGER NOT NULL,
    PRIMARY KEY (note_id, tag)
  ) WITHOUT ROWID;
  CREATE INDEX note_tags_tag ON note_tags (tag, note_id);

  CREATE TABLE bookmarks (
    note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    added_ms INTEGER
  );
  CREATE TABLE emails (
    note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    message_id TEXT,
    from_addr TEXT,
    to_addr TEXT,
    sent_ms INTEGER
  );
  CREATE TABLE feeds (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    title TEXT,
    last_polled_ms INTEGER,
    UNIQUE (user_id, url)
  );
  CREATE TABLE feed_articles (
    note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    feed_id INTEGER REFERENCES feeds(id) ON DELETE SET NULL,
    guid TEXT NOT NULL,
    url TEXT,
    published_ms INTEGER
  );

  CREATE TABLE review_cards (
    note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    due_ms INTEGER NOT NULL,
    interval_days REAL NOT NULL DEFAULT 0,
    ease REAL NOT NULL DEFAULT 2.5,
    repetitions INTEGER NOT NULL DEFAULT 0,
    reviews INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX review_cards_due ON review_cards (due_ms);

  -- One Float32 BLOB per note with the id of the model that made it. The 16 KiB page size (set
  -- before this schema is created) packs seven 2 KiB vectors a page instead of one per 4 KiB page.
  CREATE TABLE embeddings (
    note_id INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vec BLOB NOT NULL
  );

  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  INSERT INTO meta (key, value) VALUES ('vectors_version', '0');
  -- Bumped on every vector change, so another process's in-memory vector cache knows to reload.
  CREATE TRIGGER embeddings_ai AFTER INSERT ON embeddings BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_version';
  END;
  CREATE TRIGGER embeddings_au AFTER UPDATE ON embeddings BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_version';
  END;
  CREATE TRIGGER embeddings_ad AFTER DELETE ON embeddings BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_version';
  END;

  -- Full-text index over titles and bodies, kept in step with notes by triggers (external content).
  CREATE VIRTUAL TABLE notes_fts USING fts5(
    title, body, content = 'notes', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
    INSERT INTO notes_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
  END;
  CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
  END;
  CREATE TRIGGER notes_au AFTER UPDATE OF title, body ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
    INSERT INTO notes_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
  END;

  CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  // 2: what an import last wrote into each imported note, so a re-import can tell a source edit from a dexi edit.
  `
  ALTER TABLE notes ADD COLUMN import_hash TEXT;
  `,
  // 3: a user's time zone is NULL until they set one (then periods use the server's zone, by default the
  // machine's). 'UTC' was the old column default, so it is read as "never set". Folder names are
  // trimmed: a name that differs from another only by surrounding spaces stays as it is.
  `
  ALTER TABLE users ADD COLUMN zone TEXT;
  UPDATE users SET zone = time_zone WHERE time_zone <> 'UTC';
  ALTER TABLE users DROP COLUMN time_zone;
  ALTER TABLE users RENAME COLUMN zone TO time_zone;
  UPDATE folders SET name = trim(name, char(32, 9, 10, 13)), name_key = trim(name_key, char(32, 9, 10, 13))
  WHERE name_key <> trim(name_key, char(32, 9, 10, 13))
    AND NOT EXISTS (
      SELECT 1 FROM folders g
      WHERE g.user_id = folders.user_id AND g.name_key = trim(folders.name_key, char(32, 9, 10, 13))
    )
    AND id = (
      SELECT min(h.id) FROM folders h
      WHERE h.user_id = folders.user_id
        AND trim(h.name_key, char(32, 9, 10, 13)) = trim(folders.name_key, char(32, 9, 10, 13))
    );
  `,
  // 4: imported items deleted in dexi, remembered so the next import or feed poll skips them (purged
  // after a while, see TOMBSTONE_DAYS). Feed articles from a subscription are keyed per feed, not per
  // user: two feeds reusing a guid such as "1" are two articles. Articles imported from files keep
  // their old key until their file is imported again (see importing.ts).
  `
  CREATE TABLE import_tombstones (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    content_key TEXT NOT NULL,
    deleted_ms INTEGER NOT NULL,
    PRIMARY KEY (user_id, content_key)
  ) WITHOUT ROWID;
  CREATE INDEX import_tombstones_deleted ON import_tombstones (deleted_ms);
  UPDATE notes SET content_key = (
    SELECT 'feed#' || fa.feed_id || ':' || fa.guid FROM feed_articles fa WHERE fa.note_id = notes.id
  )
  WHERE source = 'feed' AND content_key IS NOT NULL
    AND EXISTS (SELECT 1 FROM feed_articles fa WHERE fa.note_id = notes.id AND fa.feed_id IS NOT NULL);
  `,
  // 5: sign-in and OAuth. Passwords hold scrypt hashes; codes and tokens are kept only as SHA-256
  // hashes of their values. A grant is one consent (its scopes and restriction); its tokens die with it.
  `
  CREATE TABLE auth_passwords (
    user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
  );
  CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    created_ms INTEGER NOT NULL
  );
  CREATE TABLE oauth_grants (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    client_id TEXT NOT NULL,
    client_name TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scopes TEXT NOT NULL,
    folder TEXT,
    tag TEXT,
    resource TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    last_used_ms INTEGER,
    revoked_ms INTEGER
  );
  CREATE INDEX oauth_grants_user ON oauth_grants (user_id, revoked_ms);
  CREATE TABLE oauth_codes (
    hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    client_id TEXT NOT NULL,
    client_name TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    challenge TEXT NOT NULL,
    scopes TEXT NOT NULL,
    folder TEXT,
    tag TEXT,
    resource TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    used_ms INTEGER,
    grant_id INTEGER REFERENCES oauth_grants(id) ON DELETE CASCADE
  );
  CREATE TABLE oauth_tokens (
    hash TEXT PRIMARY KEY,
    grant_id INTEGER NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    scopes TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    used_ms INTEGER
  );
  CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
  `,
];

/** Brings a database up to the newest schema; refuses one written by a newer version. */
export function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `This database has schema version ${current}, newer than this dexi (${MIGRATIONS.length}); upgrade dexi`,
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
