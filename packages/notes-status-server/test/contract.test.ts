import {
  assertFuzzClean,
  connectInMemory,
  expectToolsListGolden,
  fuzzTools,
} from "@mcpforge/toolkit/testing";
import { describe, expect, it } from "vitest";
import { notesReasons } from "../src/mcp/server.js";
import { TOOL_NAMES, testApp } from "./helpers.js";

describe("tools/list and robustness", () => {
  it("matches the golden tools/list", async () => {
    const app = await testApp();
    const { client, close } = await connectInMemory(app.kit, { scopes: [] });
    await expectToolsListGolden(client, new URL("./tools_list.golden", import.meta.url));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES);
    const destructive = tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
    expect(destructive).toEqual(["delete_note", "set_queue_slots", "update_note"]);
    expect(tools.every((t) => t.annotations?.openWorldHint === false)).toBe(true);
    await close();
    await app.close();
  });

  it("survives the kit's fuzzer on every tool with only declared reasons", async () => {
    const app = await testApp();
    await app.queue.setPlan({ timeZone: "Europe/Berlin", slots: { monday: ["09:00"], thursday: ["18:30"] } });
    const ready = (await app.notes.create({ content: "ready one", tags: ["t"], status: "ready" })).id;
    const draft = (await app.notes.create({ content: "draft one" })).id;
    const scheduled = (await app.notes.create({ content: "scheduled one", status: "ready" })).id;
    await app.notes.schedule([{ id: scheduled }]);
    const { client, close } = await connectInMemory(app.kit, { scopes: [] });
    const report = await fuzzTools(client, {
      randomCases: 25,
      seed: 7,
      reasons: Object.keys(notesReasons),
      samples: { id: [ready, draft, scheduled], tag: ["t"], timeZone: ["America/New_York"] },
    });
    assertFuzzClean(report);
    expect(report.calls).toBeGreaterThan(500);
    expect(report.outcomes["ok"]).toBeGreaterThan(20);
    expect(report.outcomes["INVALID_ARGUMENT"]).toBeGreaterThan(100);
    await close();
    await app.close();
  });
});
