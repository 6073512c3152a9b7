import { describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { connectInMemory } from "../src/testing/clients.js";
import { manualClock, session } from "../src/testing/session.js";

describe("the session helper", () => {
  it("ok returns structured content, fails returns the error, and each refuses the other outcome", async () => {
    const { client, close } = await connectInMemory(createExampleServer(), {
      scopes: ["example:read", "example:write"],
    });
    const s = session(client);
    expect(await s.ok("add_note", { text: "hi" })).toMatchObject({ note: { id: 1 } });
    expect(await s.fails("get_note", { id: 9 })).toMatchObject({ reason: "NOT_FOUND" });
    await expect(s.ok("get_note", { id: 9 })).rejects.toThrow(/get_note failed: .*NOT_FOUND/);
    await expect(s.fails("get_note", { id: 1 })).rejects.toThrow(/should fail/);
    expect((await s.raw("get_note", { id: 9 })).isError).toBe(true);
    await close();
  });
});

describe("the manual clock", () => {
  it("moves only when told", () => {
    const c = manualClock("2026-01-01T00:00:00Z");
    expect(c.date().toISOString()).toBe("2026-01-01T00:00:00.000Z");
    c.advance(1500);
    expect(c.now()).toBe(Date.parse("2026-01-01T00:00:01.500Z"));
    c.set(0);
    expect(c.now()).toBe(0);
    expect(() => manualClock("not a date")).toThrow(/not a time/);
  });
});
