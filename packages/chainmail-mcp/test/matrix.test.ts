/**
 * The built chainmail-mcp bin against a real daemon and Dovecot, in every client and transport. The
 * gate is the policy: expunge is listed only while some account allows it, and a policy change
 * reaches each client in its era's way.
 */
import { fileURLToPath } from "node:url";
import { packageVersion } from "@mcpforge/toolkit";
import { checkCombination, MATRIX } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailEnv, startMailEnv } from "@mcpforge/chainmail/testing";

const BIN = fileURLToPath(new URL("../bin/chainmail-mcp.js", import.meta.url));
const version = packageVersion(import.meta.url);
let env: MailEnv;

beforeAll(async () => {
  env = await startMailEnv({});
});
afterAll(async () => {
  await env?.stop();
});

describe("the chainmail-mcp bin in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, {
        spawn: {
          command: process.execPath,
          args: [BIN, "--home", env.dir],
          env: { CHAINMAIL_MCP_GATE_MAX_AGE_MS: "0" },
        },
        serverInfo: { name: "chainmail", version },
        listed: ["list_accounts", "search", "get_message", "move"],
        ok: {
          tool: "list_accounts",
          args: {},
          check: (s) => expect((s["accounts"] as unknown[]).length).toBeGreaterThan(0),
        },
        error: { tool: "test_account", args: { account: "nobody" }, reason: "NOT_FOUND" },
        gate: {
          tool: "expunge",
          open: async () => {
            env.writeConfig({ work: { allow_expunge: true } });
            await env.confirmPolicy();
          },
          close: () => env.writeConfig({}),
        },
      });
    },
    90_000,
  );
});

// A restricted run in every client and transport: the bin's own flag parsing in both eras. The
// policy allows expunge here, so its gate is open, and a read-only server must still leave it out.
describe("the chainmail-mcp bin with --read-only in every client and transport", () => {
  beforeAll(async () => {
    env.writeConfig({ work: { allow_expunge: true } });
    await env.confirmPolicy();
  });
  afterAll(() => env.writeConfig({}));

  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, {
        spawn: {
          command: process.execPath,
          args: [BIN, "--home", env.dir, "--read-only"],
          env: { CHAINMAIL_MCP_GATE_MAX_AGE_MS: "0" },
        },
        serverInfo: { name: "chainmail", version },
        listed: ["list_accounts", "search", "get_message", "get_thread"],
        unlisted: ["expunge", "move", "send_email", "delete_folder"],
        ok: {
          tool: "search",
          args: { query: "in:inbox" },
          check: (s) => expect(Array.isArray(s["rows"])).toBe(true),
        },
        error: { tool: "test_account", args: { account: "nobody" }, reason: "NOT_FOUND" },
      });
    },
    90_000,
  );
});
