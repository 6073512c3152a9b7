import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkCombination, MATRIX, type MatrixTarget } from "../src/testing/matrix.js";
import { packageVersion } from "../src/version.js";

const cli = fileURLToPath(new URL("../dist/example/bin/mcpforge-example.js", import.meta.url));
const version = packageVersion(import.meta.url);

function target(gateFile: string): MatrixTarget {
  writeFileSync(gateFile, JSON.stringify({ allowPurge: false }));
  return {
    spawn: { command: process.execPath, args: [cli, "--gate-file", gateFile, "--gate-max-age-ms", "0"] },
    serverInfo: { name: "mcpforge-example", version },
    listed: ["add_note", "list_notes", "get_note"],
    ok: {
      tool: "add_note",
      args: { text: "from the matrix" },
      check: (s) => expect((s["note"] as { id: number }).id).toBe(1),
    },
    error: { tool: "get_note", args: { id: 99 }, reason: "NOT_FOUND" },
    gate: {
      tool: "purge",
      open: () => writeFileSync(gateFile, JSON.stringify({ allowPurge: true })),
      close: () => writeFileSync(gateFile, JSON.stringify({ allowPurge: false })),
    },
  };
}

describe("the example bin in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, (dir) => target(join(dir, "gate.json")));
    },
    60_000,
  );
});
