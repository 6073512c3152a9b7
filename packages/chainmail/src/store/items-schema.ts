/**
 * state.db's work item tables, one migration step (appended to state.ts's list). It also lets the
 * audit log record the decision `duplicate` (a keyed create_item retry): SQLite cannot change a
 * CHECK constraint in place, so the audit table is rebuilt with its rows and indexes.
 */
import { ADMIN_ITEMS } from "../items/model.js";

const admins = ADMIN_ITEMS.map(
  (a, i) =>
    `INSERT INTO items (id, seq, type, title, area, priority, state, ongoing, created_at, updated_at, revision)
     VALUES ('${a.id}', ${i + 1}, '${a.type}', '${a.title}', '${a.area}', NULL, 'in-progress', 1,
             strftime('%Y-%m-%dT%H:%M:%fZ','now'), strftime('%Y-%m-%dT%H:%M:%fZ','now'), 1);`,
).join("\n");

export const ITEMS_MIGRATION = `
  CREATE TABLE audit_v2 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    client TEXT NOT NULL CHECK (client IN ('cli','mcp')),
    action TEXT NOT NULL,
    account TEXT,
    decision TEXT NOT NULL CHECK (decision IN ('allowed','denied','error','duplicate')),
    summary TEXT NOT NULL
  );
  INSERT INTO audit_v2 (id, time, client, action, account, decision, summary)
    SELECT id, time, client, action, account, decision, summary FROM audit;
  DROP TABLE audit;
  ALTER TABLE audit_v2 RENAME TO audit;
  CREATE INDEX audit_action_time ON audit(action, time);
  CREATE INDEX audit_time ON audit(time);

  CREATE TABLE item_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
  INSERT INTO item_revision (id, revision) VALUES (1, 1);
  CREATE TABLE items (
    id TEXT PRIMARY KEY,
    -- creation order: siblings are listed in it
    seq INTEGER NOT NULL UNIQUE,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT,
    parent_id TEXT REFERENCES items(id),
    area TEXT CHECK (area IN ('work','personal')),
    priority TEXT CHECK (priority IN ('p0','p1','p2','p3')),
    state TEXT NOT NULL CHECK (state IN ('backlog','in-progress','in-review','done')),
    start_date TEXT,
    due_date TEXT,
    estimate REAL,
    ongoing INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    revision INTEGER NOT NULL,
    deleted_at TEXT,
    -- the revision of the delete that removed it, so a restore brings back exactly that delete's items
    deleted_by INTEGER
  );
  CREATE INDEX items_parent ON items(parent_id);
  CREATE INDEX items_revision ON items(revision, seq);
  CREATE TABLE item_criteria (
    id TEXT PRIMARY KEY,
    item_id TEXT NOT NULL REFERENCES items(id),
    position INTEGER NOT NULL,
    text TEXT NOT NULL,
    ticked INTEGER NOT NULL DEFAULT 0,
    evidence TEXT,
    ticked_at TEXT
  );
  CREATE INDEX item_criteria_item ON item_criteria(item_id, position);
  CREATE TABLE item_blockers (
    item_id TEXT NOT NULL REFERENCES items(id),
    blocked_by_id TEXT NOT NULL REFERENCES items(id),
    PRIMARY KEY (item_id, blocked_by_id)
  );
  CREATE INDEX item_blockers_by ON item_blockers(blocked_by_id);
  CREATE TABLE item_links (
    item_id TEXT NOT NULL REFERENCES items(id),
    account TEXT NOT NULL,
    thread_key TEXT NOT NULL,
    anchor_message_id TEXT NOT NULL,
    note TEXT,
    linked_at TEXT NOT NULL,
    PRIMARY KEY (item_id, account, thread_key)
  );
  CREATE INDEX item_links_thread ON item_links(account, thread_key);
  CREATE TABLE item_keys (
    key TEXT PRIMARY KEY,
    input_hash TEXT NOT NULL,
    item_id TEXT NOT NULL REFERENCES items(id)
  );
  ${admins}
`;
