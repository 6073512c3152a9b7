import { assertFuzzClean, expectToolsListGolden, fuzzTools } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { TestApp as App } from "./helpers.js";
import { dexiReasons } from "../src/mcp/server.js";
import { connect, type Session, testApp } from "./helpers.js";

let app: App;
let s: Session;
let ids: string[];

beforeAll(async () => {
  app = await testApp();
  s = await connect(app, "ann");
  ids = [];
  for (const text of ["first #review", "second @bob", "third #x"])
    ids.push((await s.ok("create_note", { title: text, text }))["id"] as string);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

it("tools/list matches test/tools_list.golden", async () => {
  await expectToolsListGolden(s.client, new URL("./tools_list.golden", import.meta.url));
});

it("lists exactly the twelve tools with their scopes", async () => {
  const { tools } = await s.client.listTools();
  const scopes = Object.fromEntries(tools.map((t) => [t.name, t._meta?.["io.mcpforge/scope"]]));
  expect(scopes).toEqual({
    create_note: "notes:write",
    delete_note: "notes:write",
    find_similar: "notes:read",
    get_due_reviews: "notes:read",
    get_note: "notes:read",
    grade_review: "notes:write",
    list_folders: "notes:read",
    list_notes: "notes:read",
    list_tags: "notes:read",
    search_notes: "notes:read",
    semantic_search: "notes:read",
    update_note: "notes:write",
  });
});

it("survives the kit's fuzzer on every tool with well-formed answers", async () => {
  const report = await fuzzTools(s.client, {
    randomCases: 25,
    reasons: Object.keys(dexiReasons),
    samples: { note_id: ids },
    // delete_note would remove the sample notes early; it gets its own cases below with fresh ids.
    skipTools: ["delete_note"],
  });
  assertFuzzClean(report);
  expect(report.outcomes["ok"]).toBeGreaterThan(50);
  expect(report.outcomes["INVALID_ARGUMENT"]).toBeGreaterThan(100);
  const del = await fuzzTools(s.client, {
    randomCases: 10,
    reasons: Object.keys(dexiReasons),
    skipTools: [
      "create_note",
      "update_note",
      "search_notes",
      "semantic_search",
      "list_notes",
      "get_note",
      "find_similar",
      "list_tags",
      "list_folders",
      "get_due_reviews",
      "grade_review",
    ],
  });
  assertFuzzClean(del);
  expect(del.outcomes["NOT_FOUND"]).toBeGreaterThan(0);
}, 120_000);
