/**
 * expunge and delete_folder follow the policy: the server asks the daemon at start and again before a
 * tools/list once its last check is 60 s old (an injected clock stands in for time), runs no timer,
 * and sends list_changed when the list changes. While the daemon is down the two are not listed.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startDaemon } from "@mcpforge/chainmail";
import { type McpEnv, startMcpEnv } from "./helpers.js";

let m: McpEnv;
let clock = 1_000_000;
let changed = 0;

beforeAll(async () => {
  m = await startMcpEnv({}, { now: () => clock }, () => {
    changed++;
  });
});
afterAll(async () => {
  await m?.close();
});

/** The draft tools' destructiveHint, which follows the same policy check as the gated tools. */
async function draftHints(): Promise<boolean[]> {
  const { tools } = await m.client.listTools();
  return ["update_draft", "send_draft", "delete_draft"].map(
    (n) => tools.find((t) => t.name === n)?.annotations?.destructiveHint === true,
  );
}

async function names(): Promise<string[]> {
  return (await m.client.listTools()).tools.map((t) => t.name);
}

async function policyChecks(): Promise<number> {
  const { rows } = await m.env.client.readAudit({ action: "accounts.list" });
  return rows.filter((r) => r.client === "mcp").length;
}

describe("gated tools", () => {
  it("lists 36 tools while no account allows expunge or folder deletion", async () => {
    const list = await names();
    expect(list).toHaveLength(36);
    expect(list).not.toContain("expunge");
    expect(list).not.toContain("delete_folder");
    expect(await policyChecks()).toBe(1); // the check at start
    expect(changed).toBe(0);
    expect(await draftHints()).toEqual([false, false, false]);
  });

  it("does not ask the daemon again before the last check is 60 s old", async () => {
    m.env.writeConfig({ work: { allow_expunge: true } });
    await m.env.confirmPolicy();
    clock += 59_999;
    expect(await names()).toHaveLength(36);
    expect(await policyChecks()).toBe(1);
    expect(changed).toBe(0);
  });

  it("lists expunge once a re-check sees the policy allow it, and sends list_changed", async () => {
    clock += 1;
    const list = await names();
    expect(list).toHaveLength(37);
    expect(list).toContain("expunge");
    expect(list).not.toContain("delete_folder");
    await vi.waitFor(() => expect(changed).toBe(1));
    expect(await policyChecks()).toBe(2);
    expect(await draftHints()).toEqual([true, true, true]);
    // The listed tool is callable; a hidden one is not.
    await expect(
      m.client.callTool({ name: "delete_folder", arguments: { account: "work", name: "X" } }),
    ).rejects.toThrow(/not found/);
  });

  it("follows delete_folder on another account, and both going off", async () => {
    m.env.writeConfig({ home: { allow_delete_folder: true } });
    await m.env.confirmPolicy();
    clock += 60_000;
    let list = await names();
    expect(list).toContain("delete_folder");
    expect(list).not.toContain("expunge");
    await vi.waitFor(() => expect(changed).toBe(2));
    m.env.writeConfig({});
    clock += 60_000;
    list = await names();
    expect(list).toHaveLength(36);
    await vi.waitFor(() => expect(changed).toBe(3));
    expect(await draftHints()).toEqual([false, false, false]);
  });

  it("sends nothing when a re-check finds the same policy", async () => {
    clock += 60_000;
    expect(await names()).toHaveLength(36);
    expect(await policyChecks()).toBe(5);
    expect(changed).toBe(3);
  });

  it("hides the gated tools while the daemon is down, fails calls with DAEMON_UNAVAILABLE, and recovers", async () => {
    m.env.writeConfig({ work: { allow_expunge: true, allow_delete_folder: true } });
    await m.env.confirmPolicy();
    clock += 60_000;
    expect(await names()).toHaveLength(38);
    await vi.waitFor(() => expect(changed).toBe(4));

    await m.env.daemon.stop();
    clock += 60_000;
    const list = await names();
    expect(list).toHaveLength(36);
    await vi.waitFor(() => expect(changed).toBe(5));
    const e = await m.tools.fails("list_accounts");
    expect(e.reason).toBe("DAEMON_UNAVAILABLE");
    expect(e.hint).toContain("chainmail daemon");

    m.env.daemon = await startDaemon({ home: m.env.home, log: () => undefined });
    const back = await m.tools.ok<{ accounts: unknown[] }>("list_accounts");
    expect(back.accounts).toHaveLength(2);
    clock += 60_000;
    expect(await names()).toHaveLength(38);
    await vi.waitFor(() => expect(changed).toBe(6));
  });
});
