/** The work item tables of state.db (SQL only; the rules are in src/items/). */
import type Database from "better-sqlite3";
import type { ItemArea, ItemPriority, ItemState, ItemType, ThreadLink } from "../items/model.js";

export interface ItemRow {
  id: string;
  seq: number;
  type: ItemType;
  title: string;
  description: string | null;
  parent_id: string | null;
  area: ItemArea | null;
  priority: ItemPriority | null;
  state: ItemState;
  start_date: string | null;
  due_date: string | null;
  estimate: number | null;
  ongoing: number;
  created_at: string;
  updated_at: string;
  revision: number;
  deleted_at: string | null;
  deleted_by: number | null;
}

export interface CriterionRow {
  id: string;
  item_id: string;
  position: number;
  text: string;
  ticked: number;
  evidence: string | null;
  ticked_at: string | null;
}

/** Every item, read once per revision: the tree walks (order, inheritance, subtrees) run in memory. */
export interface ItemTree {
  revision: number;
  byId: Map<string, ItemRow>;
  /** Children of each id ("" for the roots), in creation order. */
  children: Map<string, ItemRow[]>;
}

/** Rows by id and children by parent: the whole tree in memory, or straight from the table. */
export interface ItemView {
  byId: { get(id: string): ItemRow | undefined };
  children: { get(id: string): ItemRow[] | undefined };
}

const ITEM_COLS =
  "id, seq, type, title, description, parent_id, area, priority, state, start_date, due_date, estimate, ongoing, created_at, updated_at, revision, deleted_at, deleted_by";

export class ItemsStore {
  private tree: ItemTree | undefined;

  constructor(readonly db: Database.Database) {}

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  revision(): number {
    return (this.db.prepare("SELECT revision FROM item_revision WHERE id = 1").get() as { revision: number })
      .revision;
  }

  /** The next revision; called inside the change's transaction. */
  bump(): number {
    return (
      this.db
        .prepare("UPDATE item_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision")
        .get() as {
        revision: number;
      }
    ).revision;
  }

  /** Every item, cached until the revision moves (each change bumps it in its own transaction). */
  all(): ItemTree {
    const revision = this.revision();
    if (this.tree?.revision === revision) return this.tree;
    const rows = this.db.prepare(`SELECT ${ITEM_COLS} FROM items ORDER BY seq`).all() as ItemRow[];
    const byId = new Map<string, ItemRow>();
    const children = new Map<string, ItemRow[]>();
    for (const r of rows) {
      byId.set(r.id, r);
      const key = r.parent_id ?? "";
      const list = children.get(key);
      if (list) list.push(r);
      else children.set(key, [r]);
    }
    this.tree = { revision, byId, children };
    return this.tree;
  }

  /** Look-ups straight from the table, for a call that needs a few rows, not the whole tree. */
  view(): ItemView {
    return {
      byId: { get: (id) => this.get(id) },
      children: {
        get: (id) =>
          this.db
            .prepare(`SELECT ${ITEM_COLS} FROM items WHERE parent_id = ? ORDER BY seq`)
            .all(id) as ItemRow[],
      },
    };
  }

  get(id: string): ItemRow | undefined {
    return this.db.prepare(`SELECT ${ITEM_COLS} FROM items WHERE id = ?`).get(id) as ItemRow | undefined;
  }

  nextSeq(): number {
    return (this.db.prepare("SELECT coalesce(max(seq), 0) + 1 AS n FROM items").get() as { n: number }).n;
  }

  insert(row: ItemRow): void {
    this.db
      .prepare(
        `INSERT INTO items (${ITEM_COLS}) VALUES (@id, @seq, @type, @title, @description, @parent_id, @area, @priority, @state, @start_date, @due_date, @estimate, @ongoing, @created_at, @updated_at, @revision, @deleted_at, @deleted_by)`,
      )
      .run(row);
  }

  /** Writes the item's changeable columns back. */
  save(row: ItemRow): void {
    this.db
      .prepare(
        `UPDATE items SET type = @type, title = @title, description = @description, parent_id = @parent_id, area = @area,
           priority = @priority, state = @state, start_date = @start_date, due_date = @due_date, estimate = @estimate,
           updated_at = @updated_at, revision = @revision, deleted_at = @deleted_at, deleted_by = @deleted_by
         WHERE id = @id`,
      )
      .run(row);
  }

  /** Marks an item changed at `revision` (a criterion, blocker or link of it changed). */
  touch(id: string, revision: number, now: string): void {
    this.db.prepare("UPDATE items SET revision = ?, updated_at = ? WHERE id = ?").run(revision, now, id);
  }

  criteria(itemId: string): CriterionRow[] {
    return this.db
      .prepare("SELECT * FROM item_criteria WHERE item_id = ? ORDER BY position")
      .all(itemId) as CriterionRow[];
  }

  insertCriterion(c: CriterionRow): void {
    this.db
      .prepare(
        "INSERT INTO item_criteria (id, item_id, position, text, ticked, evidence, ticked_at) VALUES (@id, @item_id, @position, @text, @ticked, @evidence, @ticked_at)",
      )
      .run(c);
  }

  saveCriterion(c: CriterionRow): void {
    this.db
      .prepare(
        "UPDATE item_criteria SET position = @position, text = @text, ticked = @ticked, evidence = @evidence, ticked_at = @ticked_at WHERE id = @id",
      )
      .run(c);
  }

  deleteCriterion(id: string): void {
    this.db.prepare("DELETE FROM item_criteria WHERE id = ?").run(id);
  }

  /** Ids the item waits on (blocked_by) or that wait on it (blocks). */
  blockers(id: string, direction: "blocked_by" | "blocks"): string[] {
    const sql =
      direction === "blocked_by"
        ? "SELECT blocked_by_id AS id FROM item_blockers WHERE item_id = ? ORDER BY blocked_by_id"
        : "SELECT item_id AS id FROM item_blockers WHERE blocked_by_id = ? ORDER BY item_id";
    return (this.db.prepare(sql).all(id) as Array<{ id: string }>).map((r) => r.id);
  }

  setBlocker(itemId: string, blockedById: string, linked: boolean): boolean {
    const r = linked
      ? this.db
          .prepare("INSERT OR IGNORE INTO item_blockers (item_id, blocked_by_id) VALUES (?, ?)")
          .run(itemId, blockedById)
      : this.db
          .prepare("DELETE FROM item_blockers WHERE item_id = ? AND blocked_by_id = ?")
          .run(itemId, blockedById);
    return r.changes > 0;
  }

  links(itemId: string): ThreadLink[] {
    return this.db
      .prepare(
        "SELECT account, thread_key, anchor_message_id, note, linked_at FROM item_links WHERE item_id = ? ORDER BY linked_at DESC, account, thread_key",
      )
      .all(itemId) as ThreadLink[];
  }

  link(itemId: string, account: string, threadKey: string): ThreadLink | undefined {
    return this.db
      .prepare(
        "SELECT account, thread_key, anchor_message_id, note, linked_at FROM item_links WHERE item_id = ? AND account = ? AND thread_key = ?",
      )
      .get(itemId, account, threadKey) as ThreadLink | undefined;
  }

  putLink(itemId: string, l: ThreadLink): void {
    this.db
      .prepare(
        `INSERT INTO item_links (item_id, account, thread_key, anchor_message_id, note, linked_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (item_id, account, thread_key) DO UPDATE SET anchor_message_id = excluded.anchor_message_id, note = excluded.note`,
      )
      .run(itemId, l.account, l.thread_key, l.anchor_message_id, l.note, l.linked_at);
  }

  deleteLink(itemId: string, account: string, threadKey: string): boolean {
    return (
      this.db
        .prepare("DELETE FROM item_links WHERE item_id = ? AND account = ? AND thread_key = ?")
        .run(itemId, account, threadKey).changes > 0
    );
  }

  /** The items a thread is linked to, deleted ones included (callers filter). */
  linkedItemIds(account: string, threadKey: string): string[] {
    return (
      this.db
        .prepare("SELECT item_id FROM item_links WHERE account = ? AND thread_key = ? ORDER BY item_id")
        .all(account, threadKey) as Array<{ item_id: string }>
    ).map((r) => r.item_id);
  }

  /** The threads linked to any of `itemIds`. */
  threadsOf(itemIds: string[]): Array<{ account: string; thread_key: string }> {
    if (itemIds.length === 0) return [];
    return this.db
      .prepare(
        "SELECT DISTINCT l.account, l.thread_key FROM item_links l JOIN json_each(?) j ON j.value = l.item_id ORDER BY l.account, l.thread_key",
      )
      .all(JSON.stringify(itemIds)) as Array<{ account: string; thread_key: string }>;
  }

  idempotencyKey(key: string): { input_hash: string; item_id: string } | undefined {
    return this.db.prepare("SELECT input_hash, item_id FROM item_keys WHERE key = ?").get(key) as
      | { input_hash: string; item_id: string }
      | undefined;
  }

  putIdempotencyKey(key: string, inputHash: string, itemId: string): void {
    this.db
      .prepare("INSERT INTO item_keys (key, input_hash, item_id) VALUES (?, ?, ?)")
      .run(key, inputHash, itemId);
  }
}
