/**
 * The work item operations over state.db: create, update, delete, restore, get and list. Criteria,
 * blockers and thread links are in ./relations.ts. Every change runs in one transaction that bumps
 * the revision counter; a call that changes nothing leaves the revision where it is.
 */
import crypto from "node:crypto";
import type { CriterionRow, ItemRow, ItemsStore, ItemView } from "../store/items.js";
import {
  checkDate,
  checkDateOrder,
  checkDescription,
  checkEstimate,
  checkTitle,
  conflict,
  invalid,
  notFound,
} from "./checks.js";
import {
  type ClearableField,
  type Criterion,
  GET_ITEM_CHILDREN,
  GET_ITEM_THREADS,
  type Item,
  type ItemArea,
  type ItemChange,
  type ItemDetail,
  type ItemPriority,
  type ItemState,
  type ItemType,
  type LatestMessage,
  parentRuleProblem,
  ROOT_PRIORITY,
  summaryOf,
} from "./model.js";

export interface CreateItemInput {
  type: ItemType;
  title: string;
  description?: string | undefined;
  parent_id?: string | undefined;
  area?: ItemArea | undefined;
  priority?: ItemPriority | undefined;
  state?: ItemState | undefined;
  start_date?: string | undefined;
  due_date?: string | undefined;
  estimate?: number | undefined;
  criteria?: string[] | undefined;
  idempotency_key?: string | undefined;
}

export interface UpdateItemInput {
  id: string;
  type?: ItemType | undefined;
  title?: string | undefined;
  description?: string | undefined;
  parent_id?: string | undefined;
  area?: ItemArea | undefined;
  priority?: ItemPriority | undefined;
  state?: ItemState | undefined;
  start_date?: string | undefined;
  due_date?: string | undefined;
  estimate?: number | undefined;
  clear?: ClearableField[] | undefined;
}

export interface ListItemsInput {
  type?: ItemType | undefined;
  state?: ItemState | undefined;
  area?: ItemArea | undefined;
  under?: string | undefined;
  inbox?: boolean | undefined;
  ongoing?: boolean | undefined;
  include_deleted?: boolean | undefined;
  changed_since?: number | undefined;
  limit: number;
  page_token?: string | undefined;
}

export interface ItemsDeps {
  store: ItemsStore;
  now?: () => Date;
  /** The newest cached message of a linked thread (the cache knows; the items store does not). */
  latestMessage?: (account: string, threadKey: string) => LatestMessage | null;
  /**
   * Told of each item a change touched, inside that change's transaction (the event log records an
   * `item` event there, so the change and its event commit together or not at all), with where it
   * happened: the item and its ancestors, for a move those before it too.
   */
  onChange?: (itemId: string, revision: number, change: ItemChange, place: string[]) => void;
}

const newId = (prefix: string) =>
  `${prefix}_${crypto.randomBytes(8).toString("base64url").replace(/[-_]/g, "x")}`;

export const criterionOf = (c: CriterionRow): Criterion => ({
  id: c.id,
  text: c.text,
  ticked: c.ticked === 1,
  evidence: c.evidence,
  ticked_at: c.ticked_at,
});

export class ItemService {
  readonly store: ItemsStore;
  private readonly clock: () => Date;
  private readonly latest: (account: string, threadKey: string) => LatestMessage | null;
  private readonly onChange: (itemId: string, revision: number, change: ItemChange, place: string[]) => void;

  constructor(deps: ItemsDeps) {
    this.store = deps.store;
    this.clock = deps.now ?? (() => new Date());
    this.latest = deps.latestMessage ?? (() => null);
    this.onChange = deps.onChange ?? (() => {});
  }

  /**
   * Reports the items a change touched; call inside the change's transaction, after its writes, so
   * each item's place is the tree as the change left it. `movedFrom`: a move's place before it.
   */
  changed(ids: readonly string[], revision: number, change: ItemChange, movedFrom: string[] = []): void {
    const tree = this.store.view();
    for (const id of ids) {
      const place = this.pathOf(id, tree) ?? [id];
      this.onChange(id, revision, change, [...new Set([...place, ...movedFrom])]);
    }
  }

  /** An item and its ancestors, nearest first (deleted ones too), or null when there is no such item. */
  pathOf(id: string, tree: ItemView = this.store.view()): string[] | null {
    if (!tree.byId.get(id)) return null;
    const out: string[] = [];
    // The parent rule keeps the tree acyclic; the `includes` only guards a broken table.
    for (let at: string | null = id; at && !out.includes(at); at = tree.byId.get(at)?.parent_id ?? null)
      out.push(at);
    return out;
  }

  now(): string {
    return this.clock().toISOString();
  }

  /** Appends unticked criteria from `position` on; call inside the change's transaction. */
  addCriteria(itemId: string, texts: string[], position: number): void {
    for (const [i, text] of texts.entries())
      this.store.insertCriterion({
        id: newId("cr"),
        item_id: itemId,
        position: position + i,
        text,
        ticked: 0,
        evidence: null,
        ticked_at: null,
      });
  }

  /** The row, or NOT_FOUND. */
  row(id: string): ItemRow {
    const r = this.store.get(id);
    if (!r) throw notFound(id);
    return r;
  }

  /** The row of a live item, or NOT_FOUND / CONFLICT for a deleted one. */
  liveRow(id: string): ItemRow {
    const r = this.row(id);
    if (r.deleted_at !== null)
      throw conflict(`work item ${id} is deleted`, "Restore it with restore_item first.");
    return r;
  }

  /** The item as callers see it, with its effective area and priority. */
  itemOf(row: ItemRow, tree: ItemView = this.store.view()): Item {
    let area = row.area;
    let priority = row.priority;
    for (let p = row.parent_id; p && (!area || !priority); ) {
      const up = tree.byId.get(p);
      if (!up) break;
      area ??= up.area;
      priority ??= up.priority;
      p = up.parent_id;
    }
    return {
      id: row.id,
      type: row.type,
      title: row.title,
      description: row.description,
      parent_id: row.parent_id,
      // A root item always has its own area (checked on create and move), so this is a fallback only.
      area: area ?? "work",
      area_inherited: row.area === null,
      priority: priority ?? ROOT_PRIORITY,
      priority_inherited: row.priority === null,
      state: row.state,
      start_date: row.start_date,
      due_date: row.due_date,
      estimate: row.estimate,
      ongoing: row.ongoing === 1,
      deleted: row.deleted_at !== null,
      created_at: row.created_at,
      updated_at: row.updated_at,
      deleted_at: row.deleted_at,
      revision: row.revision,
    };
  }

  criteria(itemId: string): Criterion[] {
    return this.store.criteria(itemId).map(criterionOf);
  }

  /** The live items below `id`, parents first, in tree order. */
  liveBelow(id: string, tree: ItemView = this.store.all()): ItemRow[] {
    const out: ItemRow[] = [];
    const walk = (at: string) => {
      for (const c of tree.children.get(at) ?? []) {
        if (c.deleted_at !== null) continue;
        out.push(c);
        walk(c.id);
      }
    };
    walk(id);
    return out;
  }

  private checkParent(type: ItemType, parent: ItemRow | null): void {
    const problem = parentRuleProblem(type, parent ? parent.type : null);
    if (problem) throw conflict(`${problem}`, "See the parent rule in the chainmail README (Work items).");
  }

  create(input: CreateItemInput): { item: Item; criteria: Criterion[]; duplicate: boolean } {
    let hash: string | undefined;
    if (input.idempotency_key !== undefined) {
      const { idempotency_key: _key, ...rest } = input;
      // Defaults filled in, so a caller that spells out a default sends the same input.
      const filled = { ...rest, state: rest.state ?? "backlog", criteria: rest.criteria ?? [] };
      hash = crypto.createHash("sha256").update(canonical(filled)).digest("hex");
      const seen = this.store.idempotencyKey(input.idempotency_key);
      if (seen) {
        if (seen.input_hash !== hash)
          throw conflict(
            `idempotency_key ${JSON.stringify(input.idempotency_key)} was used for a different input`,
            "Use a new key for a different item, or repeat the first call's arguments exactly.",
          );
        const first = this.row(seen.item_id);
        return { item: this.itemOf(first), criteria: this.criteria(first.id), duplicate: true };
      }
    }
    checkTitle(input.title);
    checkDescription(input.description);
    checkDate("start_date", input.start_date);
    checkDate("due_date", input.due_date);
    checkDateOrder(input.start_date ?? null, input.due_date ?? null);
    checkEstimate(input.estimate);
    const criteria = input.criteria ?? [];
    for (const [i, c] of criteria.entries())
      if (c.trim() === "") throw invalid(`criteria[${i}] must not be blank`);
    const state = input.state ?? "backlog";
    if (state === "done" && criteria.length > 0)
      throw invalid("state done needs every criterion ticked; tick them with tick_criterion first");
    const parent = input.parent_id !== undefined ? this.liveRow(input.parent_id) : null;
    this.checkParent(input.type, parent);
    if (!parent && input.area === undefined) throw invalid("area is required for an item with no parent_id");
    return this.store.transaction(() => {
      const revision = this.store.bump();
      const now = this.now();
      const row: ItemRow = {
        id: newId("it"),
        seq: this.store.nextSeq(),
        type: input.type,
        title: input.title,
        description: input.description ?? null,
        parent_id: parent?.id ?? null,
        area: input.area ?? null,
        priority: input.priority ?? null,
        state,
        start_date: input.start_date ?? null,
        due_date: input.due_date ?? null,
        estimate: input.estimate ?? null,
        ongoing: 0,
        created_at: now,
        updated_at: now,
        revision,
        deleted_at: null,
        deleted_by: null,
      };
      this.store.insert(row);
      this.addCriteria(row.id, criteria, 0);
      if (input.idempotency_key !== undefined && hash)
        this.store.putIdempotencyKey(input.idempotency_key, hash, row.id);
      this.changed([row.id], revision, "created");
      return { item: this.itemOf(row), criteria: this.criteria(row.id), duplicate: false };
    });
  }

  update(input: UpdateItemInput): { item: Item; revision: number } {
    const clear = new Set(input.clear ?? []);
    for (const f of clear) if (input[f] !== undefined) throw invalid(`${f} cannot be both given and cleared`);
    const old = this.liveRow(input.id);
    const next: ItemRow = { ...old };
    const admin = old.ongoing === 1;
    const moves = input.parent_id !== undefined || clear.has("parent_id");
    const retypes = input.type !== undefined && input.type !== old.type;
    const rearea = clear.has("area") || (input.area !== undefined && input.area !== old.area);
    if (admin && (moves || retypes || rearea))
      throw conflict(`${old.id} is a standing Admin item: its type, area and place stay as they are`);
    checkTitle(input.title);
    checkDescription(input.description);
    checkDate("start_date", input.start_date);
    checkDate("due_date", input.due_date);
    checkEstimate(input.estimate);
    if (input.title !== undefined) next.title = input.title;
    if (input.type !== undefined) next.type = input.type;
    if (input.state !== undefined) next.state = input.state;
    const set = <K extends "description" | "area" | "priority" | "start_date" | "due_date" | "estimate">(
      k: K,
    ) => {
      if (input[k] !== undefined) next[k] = input[k] as ItemRow[K];
      else if (clear.has(k)) next[k] = null;
    };
    for (const k of ["description", "area", "priority", "start_date", "due_date", "estimate"] as const)
      set(k);
    checkDateOrder(next.start_date, next.due_date);
    const tree = this.store.view();
    if (input.parent_id !== undefined) {
      const parent = this.liveRow(input.parent_id);
      for (let p: string | null = parent.id; p; p = tree.byId.get(p)?.parent_id ?? null)
        if (p === old.id) throw conflict(`moving ${old.id} under ${parent.id} would put it under itself`);
      next.parent_id = parent.id;
    } else if (clear.has("parent_id")) next.parent_id = null;
    const parent = next.parent_id ? (tree.byId.get(next.parent_id) ?? null) : null;
    if (next.type !== old.type || next.parent_id !== old.parent_id) this.checkParent(next.type, parent);
    if (next.type !== old.type)
      for (const child of tree.children.get(old.id) ?? []) {
        if (child.deleted_at !== null) continue;
        const problem = parentRuleProblem(child.type, next.type);
        if (problem)
          throw conflict(
            `${old.id} cannot become ${/^[aeiou]/.test(next.type) ? "an" : "a"} ${next.type}: its child ${child.id}: ${problem}`,
          );
      }
    if (next.parent_id === null && next.area === null) {
      if (clear.has("area"))
        throw invalid("area is required for an item with no parent, so it cannot be cleared");
      // A move to the root keeps the area the item had.
      next.area = this.itemOf(old, tree).area;
    }
    if (next.state === "done" && old.state !== "done") {
      const open = this.store.criteria(old.id).filter((c) => c.ticked === 0).length;
      if (open > 0)
        throw conflict(
          `state done needs every criterion ticked; ${open} are not`,
          "Tick them with tick_criterion first.",
        );
    }
    const changed = (Object.keys(next) as Array<keyof ItemRow>).some((k) => next[k] !== old[k]);
    if (!changed) return { item: this.itemOf(old, tree), revision: this.store.revision() };
    return this.store.transaction(() => {
      // Where a move starts from, read before the move is written.
      const from = next.parent_id !== old.parent_id ? this.pathOf(old.id, tree) : null;
      next.revision = this.store.bump();
      next.updated_at = this.now();
      this.store.save(next);
      if (from) this.changed([next.id], next.revision, "moved", from);
      else this.changed([next.id], next.revision, "updated");
      return { item: this.itemOf(next), revision: next.revision };
    });
  }

  delete(id: string, cascade: boolean): { ids: string[]; revision: number } {
    const row = this.row(id);
    if (row.ongoing === 1) throw conflict(`${id} is a standing Admin item and cannot be deleted`);
    if (row.deleted_at !== null) return { ids: [], revision: this.store.revision() };
    const below = this.liveBelow(id);
    if (below.length > 0 && !cascade)
      throw conflict(
        `${id} has ${below.length} live item(s) below it`,
        "Pass cascade to delete them too, or move them first.",
      );
    return this.store.transaction(() => {
      const revision = this.store.bump();
      const now = this.now();
      const rows = [row, ...below];
      for (const r of rows)
        this.store.save({ ...r, deleted_at: now, deleted_by: revision, revision, updated_at: now });
      this.changed(
        rows.map((r) => r.id),
        revision,
        "deleted",
      );
      return { ids: rows.map((r) => r.id), revision };
    });
  }

  restore(id: string, cascade: boolean): { ids: string[]; revision: number } {
    const row = this.row(id);
    if (row.deleted_at === null) return { ids: [], revision: this.store.revision() };
    const tree = this.store.all();
    const parent = row.parent_id ? tree.byId.get(row.parent_id) : undefined;
    if (parent && parent.deleted_at !== null)
      throw conflict(`the parent ${parent.id} of ${id} is deleted`, `Restore ${parent.id} first.`);
    this.checkParent(row.type, parent ?? null);
    const op = row.deleted_by;
    const rows: ItemRow[] = [row];
    if (cascade) {
      // Parents first: an item of the same delete comes back only below one that is live again.
      const walk = (at: string) => {
        for (const c of tree.children.get(at) ?? []) {
          if (c.deleted_at === null) walk(c.id);
          else if (c.deleted_by === op) {
            rows.push(c);
            walk(c.id);
          }
        }
      };
      walk(id);
    }
    return this.store.transaction(() => {
      const revision = this.store.bump();
      const now = this.now();
      for (const r of rows)
        this.store.save({ ...r, deleted_at: null, deleted_by: null, revision, updated_at: now });
      this.changed(
        rows.map((r) => r.id),
        revision,
        "restored",
      );
      return { ids: rows.map((r) => r.id), revision };
    });
  }

  get(id: string): ItemDetail {
    const row = this.row(id);
    const tree = this.store.all();
    const ancestors = [];
    for (let p = row.parent_id; p; ) {
      const up = tree.byId.get(p);
      if (!up) break;
      ancestors.unshift(summaryOf(this.itemOf(up, tree)));
      p = up.parent_id;
    }
    const children = (tree.children.get(id) ?? []).filter((c) => c.deleted_at === null);
    const live = (ids: string[]) =>
      ids
        .map((i) => tree.byId.get(i))
        .filter((r): r is ItemRow => r !== undefined && r.deleted_at === null)
        .map((r) => summaryOf(this.itemOf(r, tree)));
    const links = this.store.links(id);
    return {
      item: this.itemOf(row, tree),
      criteria: this.criteria(id),
      ancestors,
      children: children.slice(0, GET_ITEM_CHILDREN).map((c) => summaryOf(this.itemOf(c, tree))),
      children_total: children.length,
      blocked_by: live(this.store.blockers(id, "blocked_by")),
      blocks: live(this.store.blockers(id, "blocks")),
      threads: links
        .slice(0, GET_ITEM_THREADS)
        .map((l) => ({ ...l, latest: this.latest(l.account, l.thread_key) })),
      threads_total: links.length,
    };
  }

  list(input: ListItemsInput): { items: Item[]; revision: number; next_page_token: string | null } {
    const tree = this.store.all();
    const { limit, page_token, ...filter } = input;
    const token = crypto.createHash("sha256").update(canonical(filter)).digest("base64url").slice(0, 16);
    let offset = 0;
    if (page_token !== undefined) {
      const m = /^p1\.([A-Za-z0-9_-]{16})\.(\d{1,9})$/.exec(page_token);
      if (!m || m[1] !== token)
        throw invalid("page_token is not from this list; pass the next_page_token of the same list");
      offset = Number(m[2]);
    }
    if (filter.under !== undefined) this.row(filter.under);
    const keepDeleted = filter.include_deleted === true || filter.changed_since !== undefined;
    // Effective areas, each computed once from its parent's, so an area filter stays linear.
    const areas = new Map<string, ItemArea>();
    const areaOf = (r: ItemRow): ItemArea => {
      const known = areas.get(r.id);
      if (known) return known;
      const up = r.parent_id ? tree.byId.get(r.parent_id) : undefined;
      const a = r.area ?? (up ? areaOf(up) : "work");
      areas.set(r.id, a);
      return a;
    };
    // The subtree walk, parents first in creation order; `under` starts it below that item.
    function* subtree(from: string, skipDeleted: boolean): Generator<ItemRow> {
      for (const c of tree.children.get(from) ?? []) {
        if (skipDeleted && c.deleted_at !== null) continue;
        yield c;
        yield* subtree(c.id, skipDeleted);
      }
    }
    let under: Set<string> | undefined;
    const keep = (r: ItemRow): boolean => {
      if (r.deleted_at !== null && !keepDeleted) return false;
      if (filter.type !== undefined && r.type !== filter.type) return false;
      if (filter.state !== undefined && r.state !== filter.state) return false;
      if (filter.ongoing !== undefined && (r.ongoing === 1) !== filter.ongoing) return false;
      if (filter.inbox === true && !(r.type === "task" && r.parent_id === null && r.deleted_at === null))
        return false;
      if (under && !under.has(r.id)) return false;
      if (filter.area !== undefined && areaOf(r) !== filter.area) return false;
      return true;
    };
    let ordered: Iterable<ItemRow>;
    if (filter.changed_since !== undefined) {
      const since = filter.changed_since;
      if (filter.under !== undefined) under = new Set([...subtree(filter.under, false)].map((r) => r.id));
      ordered = [...tree.byId.values()]
        .filter((r) => r.revision > since)
        .sort((a, b) => a.revision - b.revision || a.seq - b.seq);
    } else ordered = subtree(filter.under ?? "", !keepDeleted);
    // The walk stops one match past the page, which is all `more` needs.
    const page: Item[] = [];
    let seen = 0;
    for (const r of ordered) {
      if (!keep(r)) continue;
      if (seen >= offset && seen < offset + limit) page.push(this.itemOf(r, tree));
      if (++seen > offset + limit) break;
    }
    const more = seen > offset + limit;
    return {
      items: page,
      revision: tree.revision,
      next_page_token: more ? `p1.${token}.${offset + limit}` : null,
    };
  }

  /** The live items a thread is linked to (for the item_mail event). */
  linkedItems(account: string, threadKey: string): string[] {
    return this.store
      .linkedItemIds(account, threadKey)
      .filter((id) => this.store.get(id)?.deleted_at === null);
  }

  /** The threads linked to an item or any live item below it (an `item:` search term). */
  threadsUnder(id: string): Array<{ account: string; thread_key: string }> {
    this.row(id);
    return this.store.threadsOf([id, ...this.liveBelow(id).map((r) => r.id)]);
  }
}

/** JSON with sorted keys and no undefined values, so equal inputs hash equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
