/**
 * Ordered schema migrations of the PostgreSQL store, numbered on their own (table
 * notes_status_schema): migration i (1-based) moves the version from i-1 to i; never edit a released
 * one, append a new one. Version 1 is the SQLite store's schema as it stands after its own migrations,
 * in PostgreSQL's words.
 *
 * Times stay ISO 8601 UTC text, exactly as the domain writes them, so both stores compare and return
 * the same strings. Every text column that is compared or sorted uses the "C" collation: byte order,
 * as SQLite sorts, whatever locale the database was created with.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE notes (
    id TEXT COLLATE "C" PRIMARY KEY,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT COLLATE "C" NOT NULL
      CHECK (status IN ('draft', 'ready', 'scheduled', 'published', 'evergreen', 'failed')),
    scheduled_at TEXT COLLATE "C",
    auto_restack_after_hours DOUBLE PRECISION,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL,
    published_at TEXT COLLATE "C",
    restack_due_at TEXT COLLATE "C",
    restacked_at TEXT COLLATE "C",
    source_note_id TEXT COLLATE "C" REFERENCES notes(id) ON DELETE SET NULL,
    last_recycled_at TEXT COLLATE "C",
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    last_attempt_at TEXT COLLATE "C",
    claimed_until TEXT COLLATE "C",
    failed_runs INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX notes_by_created ON notes(created_at DESC, id DESC);
  CREATE INDEX notes_by_status ON notes(status, created_at DESC, id DESC);
  CREATE INDEX notes_scheduled ON notes(scheduled_at, created_at, id) WHERE status = 'scheduled';
  CREATE INDEX notes_restack_due ON notes(restack_due_at)
    WHERE status = 'published' AND restack_due_at IS NOT NULL AND restacked_at IS NULL;
  CREATE INDEX notes_by_source ON notes(source_note_id, scheduled_at) WHERE source_note_id IS NOT NULL;

  CREATE TABLE note_tags (
    note_id TEXT COLLATE "C" NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    tag TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (note_id, tag)
  );
  CREATE INDEX note_tags_by_tag ON note_tags(tag, created_at DESC, note_id DESC);
  CREATE INDEX note_tags_by_tag_status ON note_tags(tag, status, created_at DESC, note_id DESC);

  CREATE TABLE settings (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE queue_slots (
    weekday INTEGER NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    time TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (weekday, time)
  );

  -- Counts kept by triggers, as in the SQLite store: tag '' means every tag, status '' every status.
  CREATE TABLE note_counts (
    tag TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (tag, status)
  );

  CREATE FUNCTION notes_count_bump(t TEXT, s TEXT, d INTEGER) RETURNS void LANGUAGE sql AS $$
    INSERT INTO note_counts (tag, status, n) VALUES (t, s, d)
      ON CONFLICT (tag, status) DO UPDATE SET n = note_counts.n + d;
  $$;
  CREATE FUNCTION notes_count() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      PERFORM notes_count_bump('', '', 1);
      PERFORM notes_count_bump('', NEW.status, 1);
    ELSIF TG_OP = 'DELETE' THEN
      PERFORM notes_count_bump('', '', -1);
      PERFORM notes_count_bump('', OLD.status, -1);
    ELSIF OLD.status <> NEW.status THEN
      PERFORM notes_count_bump('', OLD.status, -1);
      PERFORM notes_count_bump('', NEW.status, 1);
    END IF;
    RETURN NULL;
  END $$;
  CREATE FUNCTION note_tags_count() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      PERFORM notes_count_bump(NEW.tag, '', 1);
      PERFORM notes_count_bump(NEW.tag, NEW.status, 1);
    ELSE
      PERFORM notes_count_bump(OLD.tag, '', -1);
      PERFORM notes_count_bump(OLD.tag, OLD.status, -1);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER notes_count AFTER INSERT OR DELETE OR UPDATE OF status ON notes
    FOR EACH ROW EXECUTE FUNCTION notes_count();
  CREATE TRIGGER note_tags_count AFTER INSERT OR DELETE ON note_tags
    FOR EACH ROW EXECUTE FUNCTION note_tags_count();
  `,
  // 2: a failed note's back-off in a column of its own, apart from the publishing lease (see the
  // SQLite migration 5).
  `
  ALTER TABLE notes ADD COLUMN retry_after TEXT COLLATE "C";
  `,
  // 3: back to the specification's five statuses (see the SQLite migration 6): a 'failed' note is a
  // draft, off the queue, with attempts, last_error and failed_runs kept. The notes trigger moves the
  // status counts; note_tags' status is updated by hand (its trigger counts inserts and deletes only),
  // so its counts are moved here too.
  `
  UPDATE notes SET status = 'draft', scheduled_at = NULL WHERE status = 'failed';
  INSERT INTO note_counts (tag, status, n)
    SELECT tag, 'draft', count(*) FROM note_tags WHERE status = 'failed' GROUP BY tag
    ON CONFLICT (tag, status) DO UPDATE SET n = note_counts.n + excluded.n;
  UPDATE note_tags SET status = 'draft' WHERE status = 'failed';
  DELETE FROM note_counts WHERE status = 'failed';
  DO $$
  DECLARE c TEXT;
  BEGIN
    SELECT conname INTO c FROM pg_constraint
      WHERE conrelid = 'notes'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%evergreen%';
    IF c IS NOT NULL THEN EXECUTE format('ALTER TABLE notes DROP CONSTRAINT %I', c); END IF;
  END $$;
  ALTER TABLE notes ADD CONSTRAINT notes_status_check
    CHECK (status IN ('draft', 'ready', 'scheduled', 'published', 'evergreen'));
  `,
  // 4: the delivery mark, set by the claim and cleared with the record of the answer (see the SQLite
  // migration 7).
  `
  ALTER TABLE notes ADD COLUMN delivering TEXT COLLATE "C" CHECK (delivering IN ('post', 'restack'));
  CREATE INDEX notes_delivering ON notes(claimed_until) WHERE delivering IS NOT NULL;
  `,
  // 5: a restack is owed whatever the note's status has become since (see the SQLite migration 8).
  `
  DROP INDEX notes_restack_due;
  CREATE INDEX notes_restack_due ON notes(restack_due_at) WHERE restack_due_at IS NOT NULL AND restacked_at IS NULL;
  `,
];
