/** Criteria, blockers and thread links of work items; each change bumps the item and the revision. */
import { conflict, checkCriterionText, invalid } from "./checks.js";
import { type Criterion, MAX_CRITERIA, type ThreadLink } from "./model.js";
import { criterionOf, type ItemService } from "./service.js";

export interface CriteriaEdit {
  remove?: string[] | undefined;
  edit?: Array<{ id: string; text: string }> | undefined;
  order?: string[] | undefined;
  add?: string[] | undefined;
}

/** Removes, edits, reorders and adds, in that order, in one transaction. */
export function editCriteria(
  s: ItemService,
  itemId: string,
  e: CriteriaEdit,
): { criteria: Criterion[]; revision: number } {
  const item = s.liveRow(itemId);
  const current = s.store.criteria(itemId);
  const byId = new Map(current.map((c) => [c.id, c]));
  const unknown = (id: string) =>
    invalid(`${JSON.stringify(id)} is not a criterion of ${itemId}; get_item lists its criteria`);
  const removed = new Set<string>();
  for (const id of e.remove ?? []) {
    if (!byId.has(id)) throw unknown(id);
    removed.add(id);
  }
  let rest = current.filter((c) => !removed.has(c.id)).map((c) => ({ ...c }));
  const edited = new Set<string>();
  for (const [i, ed] of (e.edit ?? []).entries()) {
    checkCriterionText(`edit[${i}].text`, ed.text);
    if (removed.has(ed.id)) throw invalid(`edit[${i}]: criterion ${ed.id} is removed in the same call`);
    const c = rest.find((x) => x.id === ed.id);
    if (!c) throw unknown(ed.id);
    if (edited.has(ed.id)) throw invalid(`edit names criterion ${ed.id} twice`);
    edited.add(ed.id);
    c.text = ed.text;
  }
  if (e.order !== undefined) {
    const want = new Set(e.order);
    const same =
      want.size === e.order.length && e.order.length === rest.length && rest.every((c) => want.has(c.id));
    if (!same)
      throw invalid(
        `order must name every remaining criterion once (${rest.length} after the removals): ${rest.map((c) => c.id).join(", ") || "none"}`,
      );
    const at = new Map(e.order.map((id, i) => [id, i]));
    rest = rest.sort((a, b) => at.get(a.id)! - at.get(b.id)!);
  }
  const adds = e.add ?? [];
  for (const [i, t] of adds.entries()) checkCriterionText(`add[${i}]`, t);
  if (rest.length + adds.length > MAX_CRITERIA)
    throw invalid(
      `an item holds at most ${MAX_CRITERIA} criteria; this edit would leave ${rest.length + adds.length}`,
    );
  if (item.state === "done" && adds.length > 0)
    throw conflict(`${itemId} is done, and a new criterion is not ticked`, "Change its state first.");
  const nothing = removed.size === 0 && edited.size === 0 && e.order === undefined && adds.length === 0;
  if (nothing) return { criteria: current.map(criterionOf), revision: s.store.revision() };
  return s.store.transaction(() => {
    const revision = s.store.bump();
    for (const id of removed) s.store.deleteCriterion(id);
    for (const [position, c] of rest.entries()) s.store.saveCriterion({ ...c, position });
    s.addCriteria(itemId, adds, rest.length);
    s.store.touch(itemId, revision, s.now());
    s.changed([itemId], revision, "criteria");
    return { criteria: s.criteria(itemId), revision };
  });
}

export function tickCriterion(
  s: ItemService,
  itemId: string,
  criterionId: string,
  ticked: boolean,
  evidence: string | undefined,
): { criterion: Criterion; revision: number } {
  const item = s.liveRow(itemId);
  const c = s.store.criteria(itemId).find((x) => x.id === criterionId);
  if (!c)
    throw invalid(
      `${JSON.stringify(criterionId)} is not a criterion of ${itemId}; get_item lists its criteria`,
    );
  if (ticked && (evidence === undefined || evidence.trim() === ""))
    throw invalid("evidence is required when ticking: how the criterion was met");
  if (!ticked && evidence !== undefined) throw invalid("evidence must be empty when unticking");
  if (!ticked && item.state === "done" && c.ticked === 1)
    throw conflict(`${itemId} is done, so its criteria stay ticked`, "Change its state first.");
  const same = (c.ticked === 1) === ticked && (c.evidence ?? undefined) === evidence;
  if (same) return { criterion: criterionOf(c), revision: s.store.revision() };
  return s.store.transaction(() => {
    const revision = s.store.bump();
    const now = s.now();
    const next = { ...c, ticked: ticked ? 1 : 0, evidence: evidence ?? null, ticked_at: ticked ? now : null };
    s.store.saveCriterion(next);
    s.store.touch(itemId, revision, now);
    s.changed([itemId], revision, "criterion");
    return { criterion: criterionOf(next), revision };
  });
}

/** The chain from `from` to `to` following "is blocked by" edges, or null when there is none. */
function blockPath(s: ItemService, from: string, to: string): string[] | null {
  const prev = new Map<string, string>([[from, ""]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (at === to) {
      const path = [at];
      for (let p = prev.get(at); p; p = prev.get(p)) path.unshift(p);
      return path;
    }
    for (const next of s.store.blockers(at, "blocked_by"))
      if (!prev.has(next)) {
        prev.set(next, at);
        queue.push(next);
      }
  }
  return null;
}

export function setBlocker(
  s: ItemService,
  itemId: string,
  blockedById: string,
  linked: boolean,
): { changed: boolean; revision: number } {
  if (itemId === blockedById) throw invalid("an item cannot block itself");
  if (linked) {
    s.liveRow(itemId);
    s.liveRow(blockedById);
    // Blockers of deleted items are kept (a restore brings them back), so they count here too.
    const path = blockPath(s, blockedById, itemId);
    if (path)
      throw conflict(
        `${itemId} blocked by ${blockedById} would close the cycle ${[itemId, ...path].join(" → ")} (each is blocked by the next)`,
        "Remove one of those blockers first, or leave this one out.",
      );
  } else {
    s.row(itemId);
    s.row(blockedById);
  }
  return s.store.transaction(() => {
    const changed = s.store.setBlocker(itemId, blockedById, linked);
    if (!changed) return { changed, revision: s.store.revision() };
    const revision = s.store.bump();
    // Both ends changed: one's blocked_by and the other's blocks.
    s.store.touch(itemId, revision, s.now());
    s.store.touch(blockedById, revision, s.now());
    s.changed([itemId, blockedById], revision, "blocker");
    return { changed, revision };
  });
}

/** The message a link is made from: its account, its thread's key and its Message-ID. */
export interface LinkTarget {
  account: string;
  threadKey: string;
  messageId: string;
}

export function linkThread(
  s: ItemService,
  itemId: string,
  target: LinkTarget,
  anchor: boolean,
  note: string | undefined,
): { link: ThreadLink; created: boolean; revision: number } {
  s.liveRow(itemId);
  return s.store.transaction(() => {
    const old = s.store.link(itemId, target.account, target.threadKey);
    const link: ThreadLink = old
      ? {
          ...old,
          anchor_message_id: anchor ? target.messageId : old.anchor_message_id,
          note: note ?? old.note,
        }
      : {
          account: target.account,
          thread_key: target.threadKey,
          // The first message linked anchors the thread until another is made the anchor.
          anchor_message_id: target.messageId,
          note: note ?? null,
          linked_at: s.now(),
        };
    const changed = !old || old.anchor_message_id !== link.anchor_message_id || old.note !== link.note;
    if (!changed) return { link, created: false, revision: s.store.revision() };
    const revision = s.store.bump();
    s.store.putLink(itemId, link);
    s.store.touch(itemId, revision, s.now());
    s.changed([itemId], revision, "linked");
    return { link, created: !old, revision };
  });
}

export function unlinkThread(
  s: ItemService,
  itemId: string,
  account: string,
  threadKey: string,
): { revision: number } {
  s.row(itemId);
  return s.store.transaction(() => {
    if (!s.store.deleteLink(itemId, account, threadKey)) return { revision: s.store.revision() };
    const revision = s.store.bump();
    s.store.touch(itemId, revision, s.now());
    s.changed([itemId], revision, "unlinked");
    return { revision };
  });
}
