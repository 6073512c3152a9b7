/**
 * Ordered schema migrations. Migration i (1-based) moves PRAGMA user_version from i-1 to i; never edit
 * a released one, append a new one.
 *
 * Why the shape: list_notes filtered by status or by tag must stay fast at 100k notes, so
 * - notes(status, created_at, id) serves the status filter and its count from the index alone;
 * - note_tags repeats the note's status and created_at, so a tag filter (with or without a status)
 *   is one index range scan with no join until the page of ids is known.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE notes (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL CHECK (status IN ('draft', 'ready', 'scheduled', 'published', 'evergreen')),
    scheduled_at TEXT,
    auto_restack_after_hours REAL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    published_at TEXT,
    restack_due_at TEXT,
    restacked_at TEXT,
    source_note_id TEXT REFERENCES notes(id) ON DELETE SET NULL,
    last_recycled_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    last_attempt_at TEXT,
    claimed_until TEXT
  );
  CREATE INDEX notes_by_created ON notes(created_at DESC, id DESC);
  CREATE INDEX notes_by_status ON notes(status, created_at DESC, id DESC);
  CREATE INDEX notes_scheduled ON notes(scheduled_at) WHERE status = 'scheduled';
  CREATE INDEX notes_restack_due ON notes(restack_due_at)
    WHERE status = 'published' AND restack_due_at IS NOT NULL AND restacked_at IS NULL;
  CREATE INDEX notes_by_source ON notes(source_note_id, scheduled_at) WHERE source_note_id IS NOT NULL;

  CREATE TABLE note_tags (
    note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (note_id, tag)
  ) WITHOUT ROWID;
  CREATE INDEX note_tags_by_tag ON note_tags(tag, created_at DESC, note_id DESC);
  CREATE INDEX note_tags_by_tag_status ON note_tags(tag, status, created_at DESC, note_id DESC);

  CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE queue_slots (
    weekday INTEGER NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    time TEXT NOT NULL,
    PRIMARY KEY (weekday, time)
  ) WITHOUT ROWID;
  `,
  // 2: counts kept by triggers, so list_notes' total and list_tags never scan 40k index entries.
  // tag '' means every tag, status '' every status: ('', '') is all notes, (t, s) is tag t with status s.
  `
  CREATE TABLE note_counts (
    tag TEXT NOT NULL,
    status TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (tag, status)
  ) WITHOUT ROWID;
  INSERT INTO note_counts (tag, status, n) SELECT '', '', count(*) FROM notes;
  INSERT INTO note_counts (tag, status, n) SELECT '', status, count(*) FROM notes GROUP BY status;
  INSERT INTO note_counts (tag, status, n) SELECT tag, '', count(*) FROM note_tags GROUP BY tag;
  INSERT INTO note_counts (tag, status, n) SELECT tag, status, count(*) FROM note_tags GROUP BY tag, status;

  CREATE TRIGGER notes_count_insert AFTER INSERT ON notes BEGIN
    INSERT INTO note_counts VALUES ('', '', 1) ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO note_counts VALUES ('', NEW.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER notes_count_delete AFTER DELETE ON notes BEGIN
    UPDATE note_counts SET n = n - 1 WHERE tag = '' AND status IN ('', OLD.status);
  END;
  CREATE TRIGGER notes_count_status AFTER UPDATE OF status ON notes WHEN OLD.status <> NEW.status BEGIN
    UPDATE note_counts SET n = n - 1 WHERE tag = '' AND status = OLD.status;
    INSERT INTO note_counts VALUES ('', NEW.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER note_tags_count_insert AFTER INSERT ON note_tags BEGIN
    INSERT INTO note_counts VALUES (NEW.tag, '', 1) ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO note_counts VALUES (NEW.tag, NEW.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER note_tags_count_delete AFTER DELETE ON note_tags BEGIN
    UPDATE note_counts SET n = n - 1 WHERE tag = OLD.tag AND status IN ('', OLD.status);
  END;
  `,
  // 3: get_queue reads scheduled notes in (scheduled_at, created_at, id) order; the index now gives that
  // order, so a month of the queue is an index range scan without a sort.
  `
  DROP INDEX notes_scheduled;
  CREATE INDEX notes_scheduled ON notes(scheduled_at, created_at, id) WHERE status = 'scheduled';
  `,
  // 4: status 'failed' (publishing gave up) and failed_runs, the scheduler runs in a row whose publish
  // failed. A CHECK cannot be altered in place, so notes is rebuilt (SQLite's documented procedure;
  // migrate() runs it with foreign keys off, so dropping the old table cascades nothing into note_tags).
  // Rows keep their status, so note_counts stays right; its triggers and the indexes are recreated.
  // Notes that were failing before the upgrade start counting runs from 0.
  `
  CREATE TABLE notes_v4 (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL
      CHECK (status IN ('draft', 'ready', 'scheduled', 'published', 'evergreen', 'failed')),
    scheduled_at TEXT,
    auto_restack_after_hours REAL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    published_at TEXT,
    restack_due_at TEXT,
    restacked_at TEXT,
    source_note_id TEXT REFERENCES notes(id) ON DELETE SET NULL,
    last_recycled_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    last_attempt_at TEXT,
    claimed_until TEXT,
    failed_runs INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO notes_v4 (id, content, tags, status, scheduled_at, auto_restack_after_hours, created_at,
      updated_at, published_at, restack_due_at, restacked_at, source_note_id, last_recycled_at, attempts,
      last_error, last_attempt_at, claimed_until)
    SELECT id, content, tags, status, scheduled_at, auto_restack_after_hours, created_at, updated_at,
      published_at, restack_due_at, restacked_at, source_note_id, last_recycled_at, attempts, last_error,
      last_attempt_at, claimed_until
    FROM notes;
  DROP TABLE notes;
  ALTER TABLE notes_v4 RENAME TO notes;

  CREATE INDEX notes_by_created ON notes(created_at DESC, id DESC);
  CREATE INDEX notes_by_status ON notes(status, created_at DESC, id DESC);
  CREATE INDEX notes_scheduled ON notes(scheduled_at, created_at, id) WHERE status = 'scheduled';
  CREATE INDEX notes_restack_due ON notes(restack_due_at)
    WHERE status = 'published' AND restack_due_at IS NOT NULL AND restacked_at IS NULL;
  CREATE INDEX notes_by_source ON notes(source_note_id, scheduled_at) WHERE source_note_id IS NOT NULL;

  CREATE TRIGGER notes_count_insert AFTER INSERT ON notes BEGIN
    INSERT INTO note_counts VALUES ('', '', 1) ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO note_counts VALUES ('', NEW.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER notes_count_delete AFTER DELETE ON notes BEGIN
    UPDATE note_counts SET n = n - 1 WHERE tag = '' AND status IN ('', OLD.status);
  END;
  CREATE TRIGGER notes_count_status AFTER UPDATE OF status ON notes WHEN OLD.status <> NEW.status BEGIN
    UPDATE note_counts SET n = n - 1 WHERE tag = '' AND status = OLD.status;
    INSERT INTO note_counts VALUES ('', NEW.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  `,
  // 5: a failed note's back-off gets a column of its own (retry_after). It shared claimed_until with
  // the publishing lease, so rescheduling a failing note could not end its back-off (clearing the
  // column could have freed a lease in flight): the note went out up to an hour after its new time.
  // A back-off already written stays in claimed_until and runs out within the hour.
  `
  ALTER TABLE notes ADD COLUMN retry_after TEXT;
  `,
  // 6: back to the specification's five statuses. A note the scheduler gave up on was 'failed'; it is
  // now a draft, off the queue, with attempts, last_error and failed_runs kept. notes is rebuilt for
  // its CHECK as in migration 4; the rows that change status also change in note_tags (which repeats
  // it), so note_counts is counted again from the rows rather than patched.
  `
  CREATE TABLE notes_v6 (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL CHECK (status IN ('draft', 'ready', 'scheduled', 'published', 'evergreen')),
    scheduled_at TEXT,
    auto_restack_after_hours REAL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    published_at TEXT,
    restack_due_at TEXT,
    restacked_at TEXT,
    source_note_id TEXT REFERENCES notes(id) ON DELETE SET NULL,
    last_recycled_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    last_attempt_at TEXT,
    claimed_until TEXT,
    failed_runs INTEGER NOT NULL DEFAULT 0,
    retry_after TEXT
  );
  INSERT INTO notes_v6 (id, content, tags, status, scheduled_at, auto_restack_after_hours, created_at,
      updated_at, published_at, restack_due_at, restacked_at, source_note_id, last_recycled_at, attempts,
      last_error, last_attempt_at, claimed_until, failed_runs, retry_after)
    SELECT id, content, tags, CASE status WHEN 'failed' THEN 'draft' ELSE status END,
      CASE status WHEN 'failed' THEN NULL ELSE scheduled_at END, auto_restack_after_hours, created_at,
      updated_at, published_at, restack_due_at, restacked_at, source_note_id, last_recycled_at, attempts,
      last_error, last_attempt_at, claimed_until, failed_runs, retry_after
    FROM notes;
  DROP TABLE notes;
  ALTER TABLE notes_v6 RENAME TO notes;
  UPDATE note_tags SET status = 'draft' WHERE status = 'failed';

  CREATE INDEX notes_by_created ON notes(created_at DESC, id DESC);
  CREATE INDEX notes_by_status ON notes(status, created_at DESC, id DESC);
  CREATE INDEX notes_scheduled ON notes(scheduled_at, created_at, id) WHERE status = 'scheduled';
  CREATE INDEX notes_restack_due ON notes(restack_due_at)
    WHERE status = 'published' AND restack_due_at IS NOT NULL AND restacked_at IS NULL;
  CREATE INDEX notes_by_source ON notes(source_note_id, scheduled_at) WHERE source_note_id IS NOT NULL;

  DELETE FROM note_counts;
  INSERT INTO note_counts (tag, status, n) SELECT '', '', count(*) FROM notes;
  INSERT INTO note_counts (tag, status, n) SELECT '', status, count(*) FROM notes GROUP BY status;
  INSERT INTO note_counts (tag, status, n) SELECT tag, '', count(*) FROM note_tags GROUP BY tag;
  INSERT INTO note_counts (tag, status, n) SELECT tag, status, count(*) FROM note_tags GROUP BY tag, status;

  CREATE TRIGGER notes_count_insert AFTER INSERT ON notes BEGIN
    INSERT INTO note_counts VALUES ('', '', 1) ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO note_counts VALUES ('', NEW.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER notes_count_delete AFTER DELETE ON notes BEGIN
    UPDATE note_counts SET n = n - 1 WHERE tag = '' AND status IN ('', OLD.status);
  END;
  CREATE TRIGGER notes_count_status AFTER UPDATE OF status ON notes WHEN OLD.status <> NEW.status BEGIN
    UPDATE note_counts SET n = n - 1 WHERE tag = '' AND status = OLD.status;
    INSERT INTO note_counts VALUES ('', NEW.status, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  `,
  // 7: the delivery mark (delivering: 'post' or 'restack'), set by the claim before the publisher sees
  // the note and cleared only with the record of its answer. The lease alone let a run whose record
  // failed, or a process killed after the publisher's answer, leave a note that the next run sent again.
  `
  ALTER TABLE notes ADD COLUMN delivering TEXT CHECK (delivering IN ('post', 'restack'));
  CREATE INDEX notes_delivering ON notes(claimed_until) WHERE delivering IS NOT NULL;
  `,
  // 8: a restack is owed whatever the note's status has become since it was published (made evergreen,
  // and back): the due-restack index no longer names the status.
  `
  DROP INDEX notes_restack_due;
  CREATE INDEX notes_restack_due ON notes(restack_due_at) WHERE restack_due_at IS NOT NULL AND restacked_at IS NULL;
  `,
];
