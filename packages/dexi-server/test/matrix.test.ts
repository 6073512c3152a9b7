import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { packageVersion } from "@mcpforge/toolkit";
import { checkCombination, MATRIX } from "@mcpforge/toolkit/testing";
import { describe, expect, it } from "vitest";
import { freshDatabase, STORE } from "./stores.js";

const BIN = fileURLToPath(new URL("../dist/bin/dexi-mcp.js", import.meta.url));
const version = packageVersion(import.meta.url);

// Dexi has no gated tool, so its combinations list, call and fail but flip no gate.
describe("the dexi bin in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      const postgres = STORE === "postgres" ? await freshDatabase() : undefined;
      await checkCombination(combination, (dir) => ({
        spawn: {
          command: process.execPath,
          args: [BIN, "--db", postgres?.url ?? join(dir, `data.db`), "--user", "ann"],
          env: { DEXI_EMBEDDINGS: "hash" },
        },
        serverInfo: { name: "dexi", version },
        listed: ["search_notes", "create_note", "get_note", "grade_review"],
        ok: {
          tool: "create_note",
          args: { title: "Matrix", text: "from the matrix #e2e" },
          check: (s) => expect(s["tags"]).toEqual(["#e2e"]),
        },
        error: {
          tool: "get_note",
          args: { note_id: "2982e9b4-19fe-40fd-9a69-e23d45e53b13" },
          reason: "NOT_FOUND",
        },
      }));
      await postgres?.drop();
    },
    90_000,
  );
});

// A restricted run in every client and transport: the bin's own --tools parsing in both eras.
describe("the dexi bin with --tools read in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      const postgres = STORE === "postgres" ? await freshDatabase() : undefined;
      await checkCombination(combination, (dir) => ({
        spawn: {
          command: process.execPath,
          args: [BIN, "--db", postgres?.url ?? join(dir, `data.db`), "--user", "ann", "--tools", "read"],
          env: { DEXI_EMBEDDINGS: "hash" },
        },
        serverInfo: { name: "dexi", version },
        listed: ["search_notes", "get_note"],
        unlisted: ["create_note", "grade_review", "delete_note"],
        ok: {
          tool: "search_notes",
          args: { query: "matrix" },
          check: (s) => expect(s["items"]).toEqual([]),
        },
        error: {
          tool: "get_note",
          args: { note_id: "2982e9b4-19fe-40fd-9a69-e23d45e53b13" },
          reason: "NOT_FOUND",
        },
      }));
      await postgres?.drop();
    },
    90_000,
  );
});
