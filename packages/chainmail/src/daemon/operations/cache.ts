/** The cache's operations and the audit log's. */
import { z } from "zod";
import type { CacheStatus } from "../../cache/index.js";
import { AUDIT_LIMIT, MAX_AUDIT_FILTER } from "../../limits.js";
import type { AuditRow } from "../../store/state.js";
import type { AccountSyncReport } from "../cache-runner.js";
import { operation } from "./define.js";
import { AccountField, AccountsField } from "./fields.js";

/** What `cache rebuild` dropped of an account, and the pass that synced it again. */
export interface RebuildReport {
  account: string;
  dropped: { folders: number; messages: number; bodies: number };
  sync: AccountSyncReport;
}

const accounts = AccountsField.default([]);

export const cacheOperations = {
  "cache.status": operation<CacheStatus>()({
    params: z.object({ accounts }),
    audit: null,
    mutates: false,
  }),
  /** One audit row per account, written by the handler with each account's outcome. */
  "cache.sync": operation<{ accounts: AccountSyncReport[] }>()({
    params: z.object({ accounts }),
    audit: "cache.sync",
    mutates: false,
  }),
  /** Operator commands (`chainmail cache rebuild|evict`): only the `cli` client may call them. */
  "cache.rebuild": operation<{ accounts: RebuildReport[] }>()({
    params: z.object({ accounts }),
    audit: "cache.rebuild",
    mutates: false,
  }),
  "cache.evict": operation<{ account: string | null; bodies: number; bytes: number }>()({
    params: z.object({
      account: AccountField.optional(),
      before: z
        .string()
        .max(MAX_AUDIT_FILTER)
        .optional()
        .refine((s) => s === undefined || !Number.isNaN(Date.parse(s)), {
          error: "before must be a date (YYYY-MM-DD) or an RFC 3339 time",
        }),
      bytes: z.number().int().min(1).optional(),
    }),
    audit: "cache.evict",
    mutates: false,
  }),
  "audit.read": operation<{ rows: AuditRow[] }>()({
    params: z.object({
      action: z.string().max(MAX_AUDIT_FILTER).optional(),
      since: z
        .string()
        .max(MAX_AUDIT_FILTER)
        .optional()
        .refine((s) => s === undefined || !Number.isNaN(Date.parse(s)), {
          error: "since must be an RFC 3339 time",
        }),
      limit: z.number().int().min(AUDIT_LIMIT.min).max(AUDIT_LIMIT.max).default(AUDIT_LIMIT.default),
    }),
    audit: null,
    mutates: false,
  }),
};
