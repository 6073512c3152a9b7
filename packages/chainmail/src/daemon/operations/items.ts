/** The work item operations: the daemon's side of the 11 item tools. None touches mail. */
import { z } from "zod";
import {
  CLEARABLE_FIELDS,
  type Criterion,
  ITEM_AREAS,
  ITEM_LIST_LIMIT,
  ITEM_PRIORITIES,
  ITEM_STATES,
  ITEM_TYPES,
  type Item,
  type ItemDetail,
  MAX_CRITERIA,
  MAX_CRITERION_TEXT,
  MAX_EVIDENCE,
  MAX_ITEM_DESCRIPTION_BYTES,
  MAX_ITEM_ID,
  MAX_ITEM_TITLE,
  MAX_LINK_NOTE,
  type ThreadLink,
} from "../../items/model.js";
import { MAX_THREAD_KEY } from "../../items/thread-key.js";
import { operation } from "./define.js";
import { AccountField, IdempotencyKeyField, RefField } from "./fields.js";

export const ItemIdField = z.string().min(1).max(MAX_ITEM_ID);
export const ItemTypeField = z.enum(ITEM_TYPES);
export const ItemAreaField = z.enum(ITEM_AREAS);
export const ItemPriorityField = z.enum(ITEM_PRIORITIES);
export const ItemStateField = z.enum(ITEM_STATES);
export const ItemTitleField = z.string().min(1).max(MAX_ITEM_TITLE);
/** Characters here; the 64 KiB of UTF-8 is checked by the items module. */
export const ItemDescriptionField = z.string().max(MAX_ITEM_DESCRIPTION_BYTES);
export const ItemDateField = z.string().max(10);
export const EstimateField = z.number().min(0);
export const CriterionTextField = z.string().min(1).max(MAX_CRITERION_TEXT);
export const CriteriaField = z.array(CriterionTextField).max(MAX_CRITERIA);
export const CriterionIdField = z.string().min(1).max(MAX_ITEM_ID);
export const CriterionIdsField = z.array(CriterionIdField).max(MAX_CRITERIA);
export const EvidenceField = z.string().min(1).max(MAX_EVIDENCE);
export const LinkNoteField = z.string().max(MAX_LINK_NOTE);
export const ThreadKeyField = z.string().min(1).max(MAX_THREAD_KEY);
export const ClearField = z.array(z.enum(CLEARABLE_FIELDS)).max(CLEARABLE_FIELDS.length);
export const ItemListLimitField = z.number().int().min(ITEM_LIST_LIMIT.min).max(ITEM_LIST_LIMIT.max);
export const CriterionEditField = z.object({ id: CriterionIdField, text: CriterionTextField });

const fields = {
  description: ItemDescriptionField.optional(),
  area: ItemAreaField.optional(),
  priority: ItemPriorityField.optional(),
  state: ItemStateField.optional(),
  start_date: ItemDateField.optional(),
  due_date: ItemDateField.optional(),
  estimate: EstimateField.optional(),
  parent_id: ItemIdField.optional(),
};

export const itemOperations = {
  "item.create": operation<{ item: Item; criteria: Criterion[]; duplicate: boolean }>()({
    params: z.object({
      type: ItemTypeField,
      title: ItemTitleField,
      ...fields,
      criteria: CriteriaField.optional(),
      idempotency_key: IdempotencyKeyField.optional(),
    }),
    audit: "item.create",
    mutates: false,
  }),
  "item.update": operation<{ item: Item; revision: number }>()({
    params: z.object({
      id: ItemIdField,
      type: ItemTypeField.optional(),
      title: ItemTitleField.optional(),
      ...fields,
      clear: ClearField.default([]),
    }),
    audit: "item.update",
    mutates: false,
  }),
  "item.get": operation<ItemDetail>()({
    params: z.object({ id: ItemIdField }),
    audit: "item.get",
    mutates: false,
  }),
  "item.list": operation<{ items: Item[]; revision: number; next_page_token: string | null }>()({
    params: z.object({
      type: ItemTypeField.optional(),
      state: ItemStateField.optional(),
      area: ItemAreaField.optional(),
      under: ItemIdField.optional(),
      inbox: z.boolean().optional(),
      ongoing: z.boolean().optional(),
      include_deleted: z.boolean().default(false),
      changed_since: z.number().int().min(0).optional(),
      limit: ItemListLimitField.default(ITEM_LIST_LIMIT.default),
      page_token: z.string().min(1).max(100).optional(),
    }),
    audit: "item.list",
    mutates: false,
  }),
  "item.delete": operation<{ ids: string[]; revision: number }>()({
    params: z.object({ id: ItemIdField, cascade: z.boolean().default(false) }),
    audit: "item.delete",
    mutates: false,
  }),
  "item.restore": operation<{ ids: string[]; revision: number }>()({
    params: z.object({ id: ItemIdField, cascade: z.boolean().default(false) }),
    audit: "item.restore",
    mutates: false,
  }),
  "item.criteria": operation<{ criteria: Criterion[]; revision: number }>()({
    params: z.object({
      item_id: ItemIdField,
      remove: CriterionIdsField.default([]),
      edit: z.array(CriterionEditField).max(MAX_CRITERIA).default([]),
      order: CriterionIdsField.optional(),
      add: CriteriaField.default([]),
    }),
    audit: "item.criteria",
    mutates: false,
  }),
  "item.tick": operation<{ criterion: Criterion; revision: number }>()({
    params: z.object({
      item_id: ItemIdField,
      criterion_id: CriterionIdField,
      ticked: z.boolean(),
      evidence: EvidenceField.optional(),
    }),
    audit: "item.tick",
    mutates: false,
  }),
  "item.block": operation<{ changed: boolean; revision: number }>()({
    params: z.object({ item_id: ItemIdField, blocked_by_id: ItemIdField, linked: z.boolean() }),
    audit: "item.block",
    mutates: false,
  }),
  "item.link": operation<{ link: ThreadLink; created: boolean; revision: number }>()({
    params: z.object({
      item_id: ItemIdField,
      ref: RefField,
      anchor: z.boolean().default(false),
      note: LinkNoteField.optional(),
    }),
    audit: "item.link",
    mutates: false,
  }),
  "item.unlink": operation<{ revision: number }>()({
    params: z.object({ item_id: ItemIdField, account: AccountField, thread_key: ThreadKeyField }),
    audit: "item.unlink",
    mutates: false,
  }),
};
