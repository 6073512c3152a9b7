/** The owner's policy commands: what config.toml asks for beside what is confirmed, and confirming it. */
import { z } from "zod";
import type { PolicyStatus } from "../../policy/service.js";
import type { ConfigError } from "../../service/context.js";
import { operation } from "./define.js";
import { AccountField } from "./fields.js";

export const policyOperations = {
  "policy.status": operation<{ accounts: PolicyStatus[]; config_error?: ConfigError }>()({
    params: z.object({}),
    audit: null,
    mutates: false,
  }),
  "policy.confirm": operation<{ confirmed: Array<{ account: string; changes: string[] }> }>()({
    params: z.object({
      account: AccountField.optional(),
      digest: z
        .string()
        .regex(/^[0-9a-f]{12}$/, "digest must be the 12 hex digits `chainmail policy status` shows")
        .optional(),
    }),
    audit: "policy.confirm",
    mutates: false,
  }),
};
