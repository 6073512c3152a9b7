/**
 * The event log's tables in state.db and every SQL statement over them. Ids come from AUTOINCREMENT,
 * so SQLite never hands out an id again, also after the rows are pruned; cache.db plays no part, so
 * a cache rebuild cannot move them back.
 */
import type Database from "better-sqlite3";
import type { EventKind } from "../events/limits.js";

export const EVENTS_MIGRATION = `
  CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('new','flags','expunged','status','gap','item','item_mail')),
    account TEXT NOT NULL DEFAULT '',
    folder TEXT NOT NULL DEFAULT '',
    folder_norm TEXT NOT NULL DEFAULT '',
    -- lowercase Gmail labels, each between two newlines, for the in filter
    labels_norm TEXT NOT NULL DEFAULT '',
    uidvalidity TEXT NOT NULL DEFAULT '',
    uid INTEGER NOT NULL DEFAULT 0,
    change TEXT NOT NULL DEFAULT '',
    item_id TEXT,
    data TEXT NOT NULL DEFAULT '{}',
    UNIQUE (account, folder, uidvalidity, uid, kind, change)
  );
  CREATE INDEX events_time ON events(time);
  CREATE TABLE event_groups (
    name TEXT PRIMARY KEY,
    acked INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
  );
  CREATE TABLE event_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);`;

/**
 * Where each item and item_mail event happened, for read_events' \`item\`: the event's item and its
 * ancestors when it was recorded (a move: before and after), each between two newlines. Events from
 * before this step get the place their item has in the tree at migration time (its parent chain,
 * deleted items included), the closest record there is of where they happened.
 */
export const EVENTS_ITEM_PATH_MIGRATION = `
  ALTER TABLE events ADD COLUMN item_path TEXT NOT NULL DEFAULT '';
  UPDATE events SET item_path = (
    WITH RECURSIVE up(id, depth) AS (
      SELECT events.item_id, 0
      UNION ALL
      SELECT i.parent_id, up.depth + 1 FROM up JOIN items i ON i.id = up.id
      -- the parent rule keeps the chain short and acyclic; the bound only guards a broken table
      WHERE i.parent_id IS NOT NULL AND up.depth < 100
    )
    SELECT char(10) || group_concat(id, char(10)) || char(10) FROM (SELECT id FROM up ORDER BY depth)
  ) WHERE item_id IS NOT NULL;`;

export interface EventInput {
  kind: EventKind;
  account: string;
  folder?: string;
  labels?: readonly string[];
  uidValidity?: string;
  uid?: number;
  /** What tells two events of the same message and kind apart (flags: the change; status: the time). */
  change?: string;
  itemId?: string | null;
  /** item and item_mail: the item and its ancestors now (a move: also those it had before). */
  itemPath?: readonly string[];
  data?: Record<string, unknown>;
  time?: string;
}

export interface EventRow {
  id: number;
  time: string;
  kind: EventKind;
  account: string;
  folder: string;
  item_id: string | null;
  data: string;
}

export interface EventFilter {
  after: number;
  accounts: string[];
  kinds: EventKind[];
  /** Lowercase folder names and labels an event's folder or labels must include one of. */
  inNames: string[];
  /** With `item`: item and item_mail events that happened in this item's subtree only. */
  item: string | null;
  limit: number;
}

export interface GroupRow {
  name: string;
  acked: number;
  created: string;
  updated: string;
}

/** Names each between two newlines, so `instr` finds a whole one (see labels_norm, item_path). */
const lines = (xs: readonly string[] | undefined) => (xs?.length ? `\n${xs.join("\n")}\n` : "");
const labelsNorm = (labels: readonly string[] | undefined) => lines(labels?.map((l) => l.toLowerCase()));

export class EventStore {
  constructor(private readonly db: Database.Database) {}

  /** The new event's id, or null when the same event (its natural key) is already recorded. */
  insert(e: EventInput): number | null {
    const r = this.db
      .prepare(
        `INSERT OR IGNORE INTO events (time, kind, account, folder, folder_norm, labels_norm, uidvalidity, uid, change, item_id, item_path, data)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        e.time ?? new Date().toISOString(),
        e.kind,
        e.account,
        e.folder ?? "",
        (e.folder ?? "").toLowerCase(),
        labelsNorm(e.labels),
        e.uidValidity ?? "",
        e.uid ?? 0,
        e.change ?? "",
        e.itemId ?? null,
        lines(e.itemPath ?? (e.itemId ? [e.itemId] : undefined)),
        JSON.stringify(e.data ?? {}),
      );
    return r.changes > 0 ? Number(r.lastInsertRowid) : null;
  }

  /** The highest id ever handed out (0 before the first event), whether or not it is still kept. */
  lastId(): number {
    const r = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").get() as
      | { seq: number }
      | undefined;
    return r?.seq ?? 0;
  }

  stats(): { count: number; oldest: number | null; oldestTime: string | null } {
    const r = this.db.prepare("SELECT count(*) AS n, min(id) AS lo FROM events").get() as {
      n: number;
      lo: number | null;
    };
    const t =
      r.lo === null
        ? null
        : (this.db.prepare("SELECT time FROM events WHERE id = ?").pluck().get(r.lo) as string);
    return { count: r.n, oldest: r.lo, oldestTime: t };
  }

  /** The highest id retention deleted (0 when none was). */
  prunedThrough(): number {
    return (this.db.prepare("SELECT value FROM event_meta WHERE key = 'pruned_through'").pluck().get() ??
      0) as number;
  }

  /** Deletes events older than `before` (RFC 3339); returns how many. */
  prune(before: string): number {
    return this.db.transaction(() => {
      const hi = this.db.prepare("SELECT max(id) FROM events WHERE time < ?").pluck().get(before) as
        | number
        | null;
      if (hi === null) return 0;
      const n = this.db.prepare("DELETE FROM events WHERE id <= ?").run(hi).changes;
      this.db
        .prepare(
          "INSERT INTO event_meta (key, value) VALUES ('pruned_through', ?) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
        )
        .run(hi);
      return n;
    })();
  }

  read(f: EventFilter): EventRow[] {
    const where = ["id > ?"];
    const args: unknown[] = [f.after];
    const list = (xs: readonly unknown[]) => xs.map(() => "?").join(", ");
    if (f.accounts.length) {
      // Events of no account (work items, a gap of the whole log) concern every account.
      where.push(`(account = '' OR account IN (${list(f.accounts)}))`);
      args.push(...f.accounts);
    }
    where.push(`kind IN (${list(f.kinds)})`);
    args.push(...f.kinds);
    if (f.inNames.length) {
      // Account-wide events (status, and a gap of no folder) concern every folder.
      const one = "(folder_norm = ? OR instr(labels_norm, char(10) || ? || char(10)) > 0)";
      where.push(`(folder = '' OR ${f.inNames.map(() => one).join(" OR ")})`);
      for (const n of f.inNames) args.push(n, n);
    }
    if (f.item !== null) {
      // Where the event happened, not where its item is now: see EVENTS_ITEM_PATH_MIGRATION.
      where.push("(kind NOT IN ('item', 'item_mail') OR instr(item_path, char(10) || ? || char(10)) > 0)");
      args.push(f.item);
    }
    return this.db
      .prepare(
        `SELECT id, time, kind, account, folder, item_id, data FROM events WHERE ${where.join(" AND ")} ORDER BY id LIMIT ?`,
      )
      .all(...args, f.limit) as EventRow[];
  }

  /** The latest status event's data of an account, for telling a real change from a repeat. */
  lastStatus(account: string): string | null {
    return (
      (this.db
        .prepare("SELECT data FROM events WHERE kind = 'status' AND account = ? ORDER BY id DESC LIMIT 1")
        .pluck()
        .get(account) as string | undefined) ?? null
    );
  }

  group(name: string): GroupRow | undefined {
    return this.db.prepare("SELECT * FROM event_groups WHERE name = ?").get(name) as GroupRow | undefined;
  }

  /**
   * Moves a group's position forward to `id` (never back, unless `reset`: a position past the log's
   * end starts over), creating the group when new.
   */
  ack(name: string, id: number, reset = false): void {
    const now = new Date().toISOString();
    const acked = reset ? "excluded.acked" : "max(acked, excluded.acked)";
    this.db
      .prepare(
        `INSERT INTO event_groups (name, acked, created, updated) VALUES (?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET acked = ${acked}, updated = excluded.updated`,
      )
      .run(name, id, now, now);
  }

  groups(): (GroupRow & { pending: number })[] {
    return this.db
      .prepare(
        "SELECT g.*, (SELECT count(*) FROM events e WHERE e.id > g.acked) AS pending FROM event_groups g ORDER BY g.name",
      )
      .all() as (GroupRow & { pending: number })[];
  }

  deleteGroup(name: string): boolean {
    return this.db.prepare("DELETE FROM event_groups WHERE name = ?").run(name).changes > 0;
  }
}
