/** Operations on accounts and folders (and ping). */
import { z } from "zod";
import type { CheckResult } from "../../imap/test-account.js";
import type { AccountSummary } from "../../service/accounts.js";
import type { ConfigError } from "../../service/context.js";
import type { ListFoldersResult } from "../../service/folders.js";
import { operation } from "./define.js";
import { AccountField, AccountsField, FolderField } from "./fields.js";

const accounts = AccountsField.default([]);

export const accountOperations = {
  ping: operation<{ ok: boolean; protocol: number; pid: number }>()({
    params: z.object({}),
    audit: null,
    mutates: false,
  }),
  "accounts.list": operation<{ accounts: AccountSummary[]; config_error?: ConfigError }>()({
    params: z.object({}),
    audit: "accounts.list",
    mutates: false,
  }),
  "account.test": operation<{ account: string; imap: CheckResult; smtp: CheckResult }>()({
    params: z.object({ account: AccountField }),
    audit: "account.test",
    mutates: false,
  }),
  "folders.list": operation<ListFoldersResult>()({
    params: z.object({ accounts }),
    audit: "folders.list",
    mutates: false,
  }),
  "folders.create": operation<{ account: string; name: string }>()({
    params: z.object({ account: AccountField, name: FolderField }),
    audit: "folders.create",
    mutates: true,
  }),
  "folders.rename": operation<{ account: string; name: string }>()({
    params: z.object({ account: AccountField, from: FolderField, to: FolderField }),
    audit: "folders.rename",
    mutates: true,
  }),
  "folders.delete": operation<{ account: string; name: string; deleted: boolean }>()({
    params: z.object({ account: AccountField, name: FolderField, force: z.boolean().default(false) }),
    audit: "folders.delete",
    mutates: true,
  }),
};
