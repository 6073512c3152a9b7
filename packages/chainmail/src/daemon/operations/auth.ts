/**
 * A sign-in asked from the chat: the daemon runs the browser flow's loopback listener (it outlives
 * the MCP call), `auth.begin` gives the URL for the person to open, `auth.wait` waits for the
 * provider's redirect. Only the `mcp` client may call them: the CLI signs in in its own process
 * (`chainmail auth login`), which works without a daemon.
 */
import { z } from "zod";
import type { FlowState } from "../../auth/flows.js";
import type { WireError } from "../../errors.js";
import { operation } from "./define.js";
import { AccountField } from "./fields.js";

export const AUTH_WAIT_SECONDS = { min: 0, max: 300 } as const;

export const authOperations = {
  "auth.begin": operation<{ account: string; flow_id: string; url: string }>()({
    params: z.object({ account: AccountField }),
    audit: "auth.begin",
    mutates: false,
  }),
  "auth.wait": operation<{ account: string; flow_id: string; state: FlowState; error?: WireError }>()({
    params: z.object({
      flow_id: z.string().min(1).max(64),
      timeout_seconds: z.number().int().min(AUTH_WAIT_SECONDS.min).max(AUTH_WAIT_SECONDS.max).default(120),
    }),
    audit: null,
    mutates: false,
  }),
};
