/**
 * The work item tools' output pieces. Item text (titles, descriptions, criterion text, evidence,
 * link notes) is untrusted whoever wrote it, and so are thread keys and Message-IDs, which come
 * from messages. Each piece is checked against the daemon's type: `SameKeys` fails to compile when
 * a field is added to one and not the other, and each `show*` is typed from both.
 */
import {
  type Criterion,
  ITEM_AREAS,
  ITEM_PRIORITIES,
  ITEM_STATES,
  ITEM_TYPES,
  type Item,
  type ItemDetail,
  type ItemSummary,
  type LinkedThread,
  type ThreadLink,
} from "@mcpforge/chainmail";
import { untrusted, untrustedField } from "@mcpforge/toolkit";
import { z } from "zod";

/** Compiles only when A and B name the same keys. */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : never;
const check = <T extends true>(_: T) => undefined;

const orNull = (t: string | null) => (t === null ? null : untrusted(t));

export const ItemOut = z.object({
  id: z.string().describe("The item's ID"),
  type: z.enum(ITEM_TYPES),
  title: untrustedField("The title"),
  description: untrustedField("The markdown description").nullable(),
  parent_id: z.string().nullable().describe("The parent's ID; null for a root item or an inbox task"),
  area: z.enum(ITEM_AREAS).describe("The effective area: its own, or inherited"),
  area_inherited: z.boolean(),
  priority: z.enum(ITEM_PRIORITIES).describe("The effective priority: its own, inherited, or p2 at the root"),
  priority_inherited: z.boolean(),
  state: z.enum(ITEM_STATES),
  start_date: z.string().nullable().describe("YYYY-MM-DD"),
  due_date: z.string().nullable().describe("YYYY-MM-DD"),
  estimate: z.number().nullable(),
  ongoing: z.boolean().describe("A standing Admin item"),
  deleted: z.boolean(),
  created_at: z.string().describe("RFC 3339"),
  updated_at: z.string().describe("RFC 3339"),
  deleted_at: z.string().nullable().describe("RFC 3339"),
  revision: z.number().int().describe("The revision of the item's last change"),
});
check<SameKeys<z.output<typeof ItemOut>, Item>>(true);

export const showItem = (i: Item): z.output<typeof ItemOut> => ({
  ...i,
  title: untrusted(i.title),
  description: orNull(i.description),
});

export const SummaryOut = z.object({
  id: z.string(),
  type: z.enum(ITEM_TYPES),
  title: untrustedField("The title"),
  state: z.enum(ITEM_STATES),
  deleted: z.boolean(),
});
check<SameKeys<z.output<typeof SummaryOut>, ItemSummary>>(true);
const showSummary = (s: ItemSummary): z.output<typeof SummaryOut> => ({ ...s, title: untrusted(s.title) });

export const CriterionOut = z.object({
  id: z.string().describe("The criterion's ID"),
  text: untrustedField("The criterion"),
  ticked: z.boolean(),
  evidence: untrustedField("How the criterion was met").nullable(),
  ticked_at: z.string().nullable().describe("RFC 3339"),
});
check<SameKeys<z.output<typeof CriterionOut>, Criterion>>(true);
export const showCriterion = (c: Criterion): z.output<typeof CriterionOut> => ({
  ...c,
  text: untrusted(c.text),
  evidence: orNull(c.evidence),
});

export const LinkOut = z.object({
  account: z.string(),
  thread_key: untrustedField("The thread's key; pass its text to unlink_thread"),
  anchor_message_id: untrustedField("The anchor message's Message-ID"),
  note: untrustedField("Why the thread is linked").nullable(),
  linked_at: z.string().describe("RFC 3339"),
});
check<SameKeys<z.output<typeof LinkOut>, ThreadLink>>(true);
export const showLink = (l: ThreadLink): z.output<typeof LinkOut> => ({
  ...l,
  thread_key: untrusted(l.thread_key),
  anchor_message_id: untrusted(l.anchor_message_id),
  note: orNull(l.note),
});

export const ThreadOut = LinkOut.extend({
  latest: z
    .object({
      ref: z.string(),
      subject: untrustedField("The subject"),
      from: untrustedField("The sender"),
      date: z.string().nullable().describe("RFC 3339"),
    })
    .nullable()
    .describe("The thread's newest message in the local cache; null when none is cached"),
});
check<SameKeys<z.output<typeof ThreadOut>, LinkedThread>>(true);

export const DetailOut = {
  item: ItemOut,
  criteria: z.array(CriterionOut),
  ancestors: z.array(SummaryOut).describe("From the root down to the parent"),
  children: z.array(SummaryOut).describe("Up to 50 live children, in tree order"),
  children_total: z.number().int(),
  blocked_by: z.array(SummaryOut).describe("Live items this item waits on"),
  blocks: z.array(SummaryOut).describe("Live items waiting on this item"),
  threads: z.array(ThreadOut).describe("Up to 50 linked threads"),
  threads_total: z.number().int(),
};
check<SameKeys<typeof DetailOut, ItemDetail>>(true);

export const showDetail = (d: ItemDetail) => ({
  item: showItem(d.item),
  criteria: d.criteria.map(showCriterion),
  ancestors: d.ancestors.map(showSummary),
  children: d.children.map(showSummary),
  children_total: d.children_total,
  blocked_by: d.blocked_by.map(showSummary),
  blocks: d.blocks.map(showSummary),
  threads: d.threads.map((t) => ({
    ...showLink(t),
    latest: t.latest && { ...t.latest, subject: untrusted(t.latest.subject), from: untrusted(t.latest.from) },
  })),
  threads_total: d.threads_total,
});
