/** The handlers of the work item operations (declared in ./operations/items.ts), each audited. */
import { editCriteria, linkThread, setBlocker, tickCriterion, unlinkThread } from "../items/relations.js";
import { q } from "../service/context.js";
import { auditedItem, itemsOf, linkTargetOf } from "../service/items.js";
import { decodeRef } from "../refs.js";
import type { Handler } from "./methods.js";

const refAccount = (ref: string): string | undefined => {
  try {
    return decodeRef(ref).account;
  } catch {
    return undefined;
  }
};

type ItemMethod =
  | "item.create"
  | "item.update"
  | "item.get"
  | "item.list"
  | "item.delete"
  | "item.restore"
  | "item.criteria"
  | "item.tick"
  | "item.block"
  | "item.link"
  | "item.unlink";

export const ITEM_HANDLERS: { [M in ItemMethod]: Handler<M> } = {
  "item.create": (ctx, call, p) =>
    auditedItem(
      ctx,
      call,
      `${p.type}${p.parent_id ? ` under ${p.parent_id}` : ""}${p.idempotency_key ? " (keyed)" : ""}`,
      () => itemsOf(ctx).create(p),
      { duplicate: (r) => r.duplicate },
    ),
  "item.update": (ctx, call, p) =>
    auditedItem(
      ctx,
      call,
      `${p.id}: ${
        Object.keys(p)
          .filter((k) => k !== "id" && k !== "clear")
          .join(", ") || "no field"
      }${p.clear.length ? `; clear ${p.clear.join(", ")}` : ""}`,
      () => itemsOf(ctx).update(p),
    ),
  "item.get": (ctx, call, p) => auditedItem(ctx, call, p.id, () => itemsOf(ctx).get(p.id)),
  "item.list": (ctx, call, p) =>
    auditedItem(ctx, call, p.changed_since !== undefined ? `changed since ${p.changed_since}` : "tree", () =>
      itemsOf(ctx).list(p),
    ),
  "item.delete": (ctx, call, p) =>
    auditedItem(ctx, call, `${p.id}${p.cascade ? " with cascade" : ""}`, () =>
      itemsOf(ctx).delete(p.id, p.cascade),
    ),
  "item.restore": (ctx, call, p) =>
    auditedItem(ctx, call, `${p.id}${p.cascade ? " with cascade" : ""}`, () =>
      itemsOf(ctx).restore(p.id, p.cascade),
    ),
  "item.criteria": (ctx, call, p) =>
    auditedItem(
      ctx,
      call,
      `${p.item_id}: -${p.remove.length} ~${p.edit.length}${p.order ? " reorder" : ""} +${p.add.length}`,
      () => editCriteria(itemsOf(ctx), p.item_id, p),
    ),
  "item.tick": (ctx, call, p) =>
    auditedItem(ctx, call, `${p.item_id} ${p.criterion_id} ${p.ticked ? "ticked" : "unticked"}`, () =>
      tickCriterion(itemsOf(ctx), p.item_id, p.criterion_id, p.ticked, p.evidence),
    ),
  "item.block": (ctx, call, p) =>
    auditedItem(
      ctx,
      call,
      `${p.item_id} ${p.linked ? "blocked by" : "unblocked from"} ${p.blocked_by_id}`,
      () => setBlocker(itemsOf(ctx), p.item_id, p.blocked_by_id, p.linked),
    ),
  "item.link": async (ctx, call, p) => {
    let account: string | undefined;
    try {
      const target = await linkTargetOf(ctx, p.ref);
      account = target.account;
      return auditedItem(
        ctx,
        call,
        p.item_id,
        () => linkThread(itemsOf(ctx), p.item_id, target, p.anchor, p.note),
        {
          account,
        },
      );
    } catch (err) {
      // A failure before the link (a bad ref, no Message-ID, the server) is audited here once.
      if (account === undefined)
        return auditedItem(
          ctx,
          call,
          p.item_id,
          () => {
            throw err;
          },
          { account: refAccount(p.ref) },
        );
      throw err;
    }
  },
  "item.unlink": (ctx, call, p) =>
    auditedItem(
      ctx,
      call,
      `${p.item_id} from ${q(p.account)}`,
      () => unlinkThread(itemsOf(ctx), p.item_id, p.account, p.thread_key),
      {
        account: p.account,
      },
    ),
};
