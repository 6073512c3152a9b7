/**
 * `chainmail item SUB ...`: every work item operation. Enumerated values (type, area, state, ...)
 * go to the daemon as typed, which refuses a bad one naming the flag's parameter.
 */
import type { ParamsOf } from "../daemon/protocol.js";
import type { ClearableField, ItemArea, ItemPriority, ItemState, ItemType } from "../items/model.js";
import { command, type DaemonCommand, need, request, usage, whole } from "./command-kit.js";

export const ITEM_USAGE = `  item create --type T --title TEXT [--parent ID] [--area A] [--priority P] [--state S] [--start DATE] [--due DATE] [--estimate N] [--description MD] [--criterion TEXT]... [--key K]
  item update ID [the create flags] [--clear FIELD]...   change an item (a new --parent moves it)
  item get ID  |  item delete ID [--cascade]  |  item restore ID [--cascade]
  item list [--type T] [--state S] [--area A] [--under ID] [--inbox] [--ongoing|--not-ongoing] [--deleted] [--changed-since REV] [--limit N] [--page TOKEN]
  item criteria ID [--remove CID]... [--edit CID=TEXT]... [--order CID,CID,...] [--add TEXT]...
  item tick ID CID --evidence TEXT  |  item untick ID CID
  item block ID BLOCKER_ID  |  item unblock ID BLOCKER_ID
  item link ID REF [--anchor] [--note TEXT]  |  item unlink ID ACCOUNT THREAD_KEY`;

const s = { type: "string" } as const;
const many = { type: "string", multiple: true } as const;
const b = { type: "boolean" } as const;

const options = {
  type: s,
  title: s,
  parent: s,
  area: s,
  priority: s,
  state: s,
  start: s,
  due: s,
  estimate: s,
  description: s,
  criterion: many,
  key: s,
  clear: many,
  cascade: b,
  under: s,
  inbox: b,
  ongoing: b,
  "not-ongoing": b,
  deleted: b,
  "changed-since": s,
  limit: s,
  page: s,
  remove: many,
  edit: many,
  order: s,
  add: many,
  evidence: s,
  anchor: b,
  note: s,
} as const;

function estimate(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n)) usage("--estimate must be a number");
  return n;
}

const defined = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

export const itemCommand: DaemonCommand = command({
  options,
  request: (o, args) => {
    const [sub, ...rest] = args;
    const fields = () =>
      defined({
        type: o.type as ItemType | undefined,
        title: o.title,
        parent_id: o.parent,
        area: o.area as ItemArea | undefined,
        priority: o.priority as ItemPriority | undefined,
        state: o.state as ItemState | undefined,
        start_date: o.start,
        due_date: o.due,
        estimate: estimate(o.estimate),
        description: o.description,
      });
    switch (sub) {
      case "create": {
        if (!o.type || !o.title) usage("item create needs --type and --title");
        const p: ParamsOf<"item.create"> = {
          ...fields(),
          type: o.type as ItemType,
          title: o.title,
          ...(o.criterion ? { criteria: o.criterion } : {}),
          ...(o.key ? { idempotency_key: o.key } : {}),
        };
        return request("item.create", p);
      }
      case "update":
        need(rest, 1, "ID", "item update");
        return request("item.update", {
          ...fields(),
          id: rest[0]!,
          clear: (o.clear ?? []) as ClearableField[],
        });
      case "get":
        need(rest, 1, "ID", "item get");
        return request("item.get", { id: rest[0]! });
      case "list": {
        if (o.ongoing && o["not-ongoing"]) usage("--ongoing and --not-ongoing exclude each other");
        const since = whole(o["changed-since"], "changed-since");
        const limit = whole(o.limit, "limit");
        return request(
          "item.list",
          defined({
            type: o.type as ItemType | undefined,
            state: o.state as ItemState | undefined,
            area: o.area as ItemArea | undefined,
            under: o.under,
            inbox: o.inbox,
            ongoing: o.ongoing ? true : o["not-ongoing"] ? false : undefined,
            include_deleted: o.deleted,
            changed_since: since,
            limit,
            page_token: o.page,
          }),
        );
      }
      case "delete":
      case "restore":
        need(rest, 1, "ID", `item ${sub}`);
        return request(sub === "delete" ? "item.delete" : "item.restore", {
          id: rest[0]!,
          cascade: o.cascade ?? false,
        });
      case "criteria":
        need(rest, 1, "ID", "item criteria");
        return request("item.criteria", {
          item_id: rest[0]!,
          remove: o.remove ?? [],
          edit: (o.edit ?? []).map((e) => {
            const at = e.indexOf("=");
            if (at < 1) usage("--edit takes CRITERION_ID=NEW TEXT");
            return { id: e.slice(0, at), text: e.slice(at + 1) };
          }),
          ...(o.order !== undefined ? { order: o.order.split(",").filter(Boolean) } : {}),
          add: o.add ?? [],
        });
      case "tick":
      case "untick":
        need(rest, 2, "ID CRITERION_ID", `item ${sub}`);
        return request("item.tick", {
          item_id: rest[0]!,
          criterion_id: rest[1]!,
          ticked: sub === "tick",
          ...(o.evidence !== undefined ? { evidence: o.evidence } : {}),
        });
      case "block":
      case "unblock":
        need(rest, 2, "ID BLOCKER_ID", `item ${sub}`);
        return request("item.block", { item_id: rest[0]!, blocked_by_id: rest[1]!, linked: sub === "block" });
      case "link":
        need(rest, 2, "ID REF", "item link");
        return request("item.link", {
          item_id: rest[0]!,
          ref: rest[1]!,
          anchor: o.anchor ?? false,
          ...(o.note !== undefined ? { note: o.note } : {}),
        });
      case "unlink":
        need(rest, 3, "ID ACCOUNT THREAD_KEY", "item unlink");
        return request("item.unlink", { item_id: rest[0]!, account: rest[1]!, thread_key: rest[2]! });
      default:
        usage(`usage:\n${ITEM_USAGE}`);
    }
  },
});
