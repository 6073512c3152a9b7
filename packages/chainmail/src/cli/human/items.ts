/**
 * The text of work items: a list as columns, one item as a block with its criteria, relations and
 * threads.
 */
import type { Criterion, Item, ItemDetail, ItemSummary, ThreadLink } from "../../items/model.js";
import { cell, columns, fields, when } from "./format.js";

const itemFlags = (i: Item) =>
  [i.deleted ? "deleted" : "", i.ongoing ? "ongoing" : ""].filter(Boolean).join(",");

function itemList(r: { items: Item[]; revision: number; next_page_token: string | null }): string {
  return [
    r.items.length
      ? columns(
          ["ID", "TYPE", "STATE", "PRIO", "AREA", "DUE", "FLAGS", "TITLE"],
          r.items.map((i) => [i.id, i.type, i.state, i.priority, i.area, i.due_date, itemFlags(i), i.title]),
        )
      : "no items match",
    `revision ${r.revision}${r.next_page_token ? `; next page: --page ${r.next_page_token}` : ""}`,
  ].join("\n");
}

function itemBlock(i: Item): string {
  const inherited = (v: string, yes: boolean) => (yes ? `${v} (inherited)` : v);
  return fields([
    ["id", i.id],
    ["title", i.title],
    ["type", i.type],
    ["state", i.state],
    ["priority", inherited(i.priority, i.priority_inherited)],
    ["area", inherited(i.area, i.area_inherited)],
    ["parent", i.parent_id ?? "none"],
    ["start", i.start_date ?? undefined],
    ["due", i.due_date ?? undefined],
    ["estimate", i.estimate ?? undefined],
    ["ongoing", i.ongoing ? "yes" : undefined],
    ["deleted", i.deleted ? when(i.deleted_at) : undefined],
    ["created", when(i.created_at)],
    ["updated", `${when(i.updated_at)} (revision ${i.revision})`],
  ]);
}

const criterionLine = (c: Criterion) =>
  `[${c.ticked ? "x" : " "}] ${c.id}  ${cell(c.text)}${c.ticked && c.evidence ? ` (evidence: ${cell(c.evidence)})` : ""}`;

const summaryLine = (s: ItemSummary) =>
  `${s.id}  ${s.type}  ${s.state}${s.deleted ? "  deleted" : ""}  ${cell(s.title)}`;

function section(title: string, lines: string[], total?: number): string[] {
  if (lines.length === 0) return [];
  const more = total !== undefined && total > lines.length ? ` (${lines.length} of ${total} shown)` : "";
  return ["", `${title}${more}:`, ...lines.map((l) => `  ${l}`)];
}

function itemDetail(d: ItemDetail): string {
  return [
    itemBlock(d.item),
    ...(d.item.description ? ["", d.item.description] : []),
    ...section("criteria", d.criteria.map(criterionLine)),
    ...section("ancestors", d.ancestors.map(summaryLine)),
    ...section("children", d.children.map(summaryLine), d.children_total),
    ...section("blocked by", d.blocked_by.map(summaryLine)),
    ...section("blocks", d.blocks.map(summaryLine)),
    ...section(
      "threads",
      d.threads.map(
        (t) =>
          `${t.account}  ${t.thread_key}${t.note ? `  note: ${cell(t.note)}` : ""}${t.latest ? `\n    latest: ${when(t.latest.date)}  ${cell(t.latest.from)}  ${cell(t.latest.subject)}  ${t.latest.ref}` : ""}`,
      ),
      d.threads_total,
    ),
  ].join("\n");
}

/** The text of each `item` sub-command's result, told apart by its fields. */
export function humanItems(r: Record<string, unknown>): string {
  if (Array.isArray(r["items"])) return itemList(r as unknown as Parameters<typeof itemList>[0]);
  if (Array.isArray(r["ancestors"])) return itemDetail(r as unknown as ItemDetail);
  const revision = `revision ${r["revision"]}`;
  if (r["item"] && Array.isArray(r["criteria"]))
    return [
      ...(r["duplicate"] ? ["already created with this key; nothing new was made", ""] : []),
      itemBlock(r["item"] as Item),
      ...section("criteria", (r["criteria"] as Criterion[]).map(criterionLine)),
    ].join("\n");
  if (r["item"]) return itemBlock(r["item"] as Item);
  if (Array.isArray(r["ids"])) return `${(r["ids"] as string[]).join(", ")}\n${revision}`;
  if (Array.isArray(r["criteria"]))
    return [...(r["criteria"] as Criterion[]).map(criterionLine), revision].join("\n");
  if (r["criterion"]) return [criterionLine(r["criterion"] as Criterion), revision].join("\n");
  if (typeof r["changed"] === "boolean")
    return `${r["changed"] ? "changed" : "already so; nothing changed"}\n${revision}`;
  if (r["link"]) {
    const l = r["link"] as ThreadLink;
    return [
      fields([
        ["linked", r["created"] ? "yes" : "already linked (note updated)"],
        ["account", l.account],
        ["thread", l.thread_key],
        ["anchor", l.anchor_message_id],
        ["note", l.note ?? undefined],
        ["at", when(l.linked_at)],
      ]),
      revision,
    ].join("\n");
  }
  return revision;
}
