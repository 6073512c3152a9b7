import { afterEach, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import type { ExampleState } from "../src/example/mcp/server.js";
import { type Connected, connectInMemory, type Era } from "../src/testing/clients.js";

const caller = { scopes: ["example:read", "example:write"] };
let open: Connected | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** An example server whose gate state and clock the test controls, counting state loads. */
async function setup(era: Era, maxAgeMs = 60_000) {
  const gate = { state: { allowPurge: false } as ExampleState, loads: 0, now: 0 };
  const kit = createExampleServer({
    loadState: async () => {
      gate.loads++;
      return { ...gate.state };
    },
    maxAgeMs,
    now: () => gate.now,
  });
  const notices: number[] = [];
  open = await connectInMemory(kit, caller, { era, onToolsChanged: () => notices.push(gate.now) });
  const names = async () => (await open!.client.listTools()).tools.map((t) => t.name);
  const annotationsOf = async (name: string) =>
    (await open!.client.listTools()).tools.find((t) => t.name === name)?.annotations;
  return { kit, gate, notices, names, annotationsOf, client: open.client };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe.each(["legacy", "modern"] as const)("gating and live annotations (%s era)", (era) => {
  it("checks the state once at connect and lists the gated tool only while it holds", async () => {
    const { gate, names } = await setup(era);
    expect(gate.loads).toBe(1);
    expect(await names()).not.toContain("purge");
    expect(await names()).toContain("archive_all");
  });

  it("re-checks before tools/list only once the last check is older than the max age, with no timer", async () => {
    const { gate, names } = await setup(era, 60_000);
    gate.state.allowPurge = true;
    gate.now = 59_999;
    expect(await names()).not.toContain("purge");
    expect(gate.loads).toBe(1);
    gate.now = 60_000;
    expect(await names()).toContain("purge");
    expect(gate.loads).toBe(2);
    await new Promise((r) => setTimeout(r, 50));
    expect(gate.loads).toBe(2);
  });

  it("sends list_changed exactly when the list or an annotation changed", async () => {
    const { kit, gate, notices, annotationsOf } = await setup(era);
    expect(await kit.refresh()).toBe(false);
    await settle();
    expect(notices).toHaveLength(0);
    gate.state.allowPurge = true;
    expect(await kit.refresh()).toBe(true);
    await settle();
    expect(notices).toHaveLength(1);
    expect((await annotationsOf("archive_all"))?.destructiveHint).toBe(true);
    expect(await kit.refresh()).toBe(false);
    await settle();
    expect(notices).toHaveLength(1);
    gate.state.allowPurge = false;
    expect(await kit.refresh()).toBe(true);
    await settle();
    expect(notices).toHaveLength(2);
    expect((await annotationsOf("archive_all"))?.destructiveHint).toBe(false);
  });

  it("answers a call to an unlisted tool exactly as a call to an unknown tool", async () => {
    const { client } = await setup(era);
    const unlisted = await client
      .callTool({ name: "purge", arguments: {} })
      .then(String, (e: Error) => e.message);
    const unknown = await client
      .callTool({ name: "no_such_tool", arguments: {} })
      .then(String, (e: Error) => e.message);
    expect(unlisted).toBe(unknown.replace("no_such_tool", "purge"));
    expect(unknown).toContain("Tool no_such_tool not found");
  });

  it("a gated tool becomes callable once listed", async () => {
    const { kit, gate, client } = await setup(era);
    gate.state.allowPurge = true;
    await kit.refresh();
    const result = await client.callTool({ name: "purge", arguments: {} });
    expect(result.structuredContent).toEqual({ purged: 0 });
  });

  it("keeps the previous state when a check fails", async () => {
    const logs: string[] = [];
    let fail = false;
    const kit = createExampleServer({
      loadState: async () => {
        if (fail) throw new Error("daemon down");
        return { allowPurge: true };
      },
      log: (l) => logs.push(l),
    });
    open = await connectInMemory(kit, caller);
    fail = true;
    await kit.refresh();
    expect((await open.client.listTools()).tools.map((t) => t.name)).toContain("purge");
    expect(logs.join("\n")).toContain("daemon down");
  });

  it("a check that never answers times out, keeps the previous state and never stalls tools/list", async () => {
    const logs: string[] = [];
    const kit = createExampleServer({
      loadState: () => new Promise<ExampleState>(() => undefined),
      gateTimeoutMs: 50,
      maxAgeMs: 0,
      log: (l) => logs.push(l),
    });
    open = await connectInMemory(kit, caller);
    const { tools } = await open.client.listTools();
    expect(tools.map((t) => t.name)).not.toContain("purge");
    expect(tools.map((t) => t.name)).toContain("list_notes");
    expect(logs.join("\n")).toContain("no answer within 50 ms");
  });
});
