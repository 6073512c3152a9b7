/**
 * The gated tools follow the confirmed policy, not config.toml: a file that allows expunge and
 * folder deletion lists neither tool until the owner confirms it with the CLI client.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpEnv, startMcpEnv } from "./helpers.js";

let m: McpEnv;

beforeAll(async () => {
  m = await startMcpEnv({}, { maxAgeMs: 0 });
});
afterAll(async () => {
  await m?.close();
});

const names = async () => (await m.client.listTools()).tools.map((t) => t.name);

describe("gated tools after a policy widening", () => {
  it("lists expunge and delete_folder only once the owner confirmed the widening", async () => {
    expect(await names()).not.toContain("expunge");
    m.env.writeConfig({ work: { allow_expunge: true, allow_delete_folder: true } });
    const before = await names();
    expect(before).not.toContain("expunge");
    expect(before).not.toContain("delete_folder");
    const pending = async () =>
      (
        (await m.client.callTool({ name: "list_accounts", arguments: {} })).structuredContent as {
          accounts: Array<{ name: string; confirmation_pending: boolean }>;
        }
      ).accounts.map((a) => [a.name, a.confirmation_pending]);
    expect(await pending()).toEqual([
      ["work", true],
      ["home", false],
    ]);
    // The MCP server's own daemon client cannot confirm it.
    await expect(m.daemonClient.call("policy.confirm", {})).rejects.toMatchObject({
      reason: "POLICY_DENIED",
    });
    expect(await names()).not.toContain("expunge");

    await m.env.confirmPolicy();
    const after = await names();
    expect(after).toContain("expunge");
    expect(after).toContain("delete_folder");
    expect(await pending()).toEqual([
      ["work", false],
      ["home", false],
    ]);
  });

  it("drops them at once when the file narrows again", async () => {
    m.env.writeConfig({});
    const list = await names();
    expect(list).not.toContain("expunge");
    expect(list).not.toContain("delete_folder");
  });
});
