/**
 * Work items: their types, the parent rule, the field bounds and the shapes the daemon returns.
 * No SQL and no MCP here; src/store/items.ts stores them, ./service.ts runs the operations.
 */

export const ITEM_TYPES = [
  "objective",
  "key-result",
  "initiative",
  "epic",
  "feature",
  "story",
  "bug",
  "support-ticket",
  "task",
] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export const ITEM_AREAS = ["work", "personal"] as const;
export type ItemArea = (typeof ITEM_AREAS)[number];

export const ITEM_PRIORITIES = ["p0", "p1", "p2", "p3"] as const;
export type ItemPriority = (typeof ITEM_PRIORITIES)[number];
export const ROOT_PRIORITY: ItemPriority = "p2";

export const ITEM_STATES = ["backlog", "in-progress", "in-review", "done"] as const;
export type ItemState = (typeof ITEM_STATES)[number];

/** Fields update_item's `clear` may name. */
export const CLEARABLE_FIELDS = [
  "description",
  "area",
  "priority",
  "start_date",
  "due_date",
  "estimate",
  "parent_id",
] as const;
export type ClearableField = (typeof CLEARABLE_FIELDS)[number];

export const MAX_ITEM_TITLE = 200;
/** A description's bound in UTF-8 bytes (64 KiB). */
export const MAX_ITEM_DESCRIPTION_BYTES = 64 * 1024;
export const MAX_CRITERION_TEXT = 500;
/** Criteria per item; the issue names no bound, so one that keeps get_item small. */
export const MAX_CRITERIA = 200;
export const MAX_EVIDENCE = 1000;
export const MAX_LINK_NOTE = 500;
export const MAX_ITEM_ID = 64;
export const ITEM_LIST_LIMIT = { min: 1, max: 500, default: 100 } as const;
/** get_item shows at most this many live children and linked threads. */
export const GET_ITEM_CHILDREN = 50;
export const GET_ITEM_THREADS = 50;
export const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The parent rule: the types each type may sit under, and whether it may be a root item. Goals
 * (objective > key-result) sit above the delivery chain (initiative > epic > feature > story), and
 * the work itself (bug, support-ticket, task) sits under any delivery level. A task with no parent
 * is in the inbox, waiting to be sorted.
 */
export const PARENT_RULE: Record<ItemType, { root: boolean; under: readonly ItemType[] }> = {
  objective: { root: true, under: [] },
  "key-result": { root: false, under: ["objective"] },
  initiative: { root: true, under: ["objective", "key-result"] },
  epic: { root: true, under: ["key-result", "initiative"] },
  feature: { root: true, under: ["initiative", "epic"] },
  story: { root: true, under: ["epic", "feature"] },
  bug: { root: true, under: ["epic", "feature", "story"] },
  "support-ticket": { root: true, under: ["epic", "feature", "story"] },
  task: {
    root: true,
    under: ["key-result", "initiative", "epic", "feature", "story", "bug", "support-ticket"],
  },
};

/** Why `child` may not sit under `parent` (null: the root), or null when it may. */
export function parentRuleProblem(child: ItemType, parent: ItemType | null): string | null {
  const rule = PARENT_RULE[child];
  if (parent === null)
    return rule.root ? null : `${article(child)} ${child} needs a parent (${rule.under.join(" or ")})`;
  if (rule.under.includes(parent)) return null;
  const allowed = rule.under.length ? `only under ${rule.under.join(", ")}` : "only at the root";
  return `${article(child)} ${child} cannot sit under ${article(parent)} ${parent}: it goes ${allowed}`;
}

const article = (word: string) => (/^[aeiou]/.test(word) ? "an" : "a");

/** The standing Admin items: one per area, from the first start, never deleted. */
export const ADMIN_ITEMS: ReadonlyArray<{ id: string; area: ItemArea; type: ItemType; title: string }> =
  ITEM_AREAS.map((area) => ({
    id: `it_admin_${area}`,
    area,
    type: "epic",
    title: `Admin (${area})`,
  }));

export interface Item {
  id: string;
  type: ItemType;
  title: string;
  description: string | null;
  parent_id: string | null;
  /** The effective area: its own, else inherited from the nearest ancestor that has one. */
  area: ItemArea;
  area_inherited: boolean;
  /** The effective priority: its own, else inherited, p2 at the root. */
  priority: ItemPriority;
  priority_inherited: boolean;
  state: ItemState;
  start_date: string | null;
  due_date: string | null;
  estimate: number | null;
  /** A standing Admin item. */
  ongoing: boolean;
  deleted: boolean;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The revision of the item's last change. */
  revision: number;
}

export interface ItemSummary {
  id: string;
  type: ItemType;
  title: string;
  state: ItemState;
  deleted: boolean;
}

export interface Criterion {
  id: string;
  text: string;
  ticked: boolean;
  evidence: string | null;
  ticked_at: string | null;
}

export interface ThreadLink {
  account: string;
  thread_key: string;
  anchor_message_id: string;
  note: string | null;
  linked_at: string;
}

export interface LatestMessage {
  ref: string;
  subject: string;
  from: string;
  date: string | null;
}

export interface LinkedThread extends ThreadLink {
  /** The thread's newest message in the local cache; null without a cache or when none is cached. */
  latest: LatestMessage | null;
}

export interface ItemDetail {
  item: Item;
  criteria: Criterion[];
  ancestors: ItemSummary[];
  children: ItemSummary[];
  children_total: number;
  blocked_by: ItemSummary[];
  blocks: ItemSummary[];
  threads: LinkedThread[];
  threads_total: number;
}

export const summaryOf = (i: Item): ItemSummary => ({
  id: i.id,
  type: i.type,
  title: i.title,
  state: i.state,
  deleted: i.deleted,
});

/** What an `item` event says happened to the item. */
export const ITEM_CHANGES = [
  "created",
  "updated",
  "moved",
  "deleted",
  "restored",
  "criteria",
  "criterion",
  "blocker",
  "linked",
  "unlinked",
] as const;
export type ItemChange = (typeof ITEM_CHANGES)[number];
