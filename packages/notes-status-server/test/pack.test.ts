import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { packAndInstall, runInspector } from "@mcpforge/toolkit/testing";
import { describe, expect, it } from "vitest";

const here = fileURLToPath(new URL("..", import.meta.url));
const toolkit = join(here, "..", "toolkit");

describe("the packed tarball", () => {
  it("installs into an empty folder and answers tools/list through the MCP Inspector CLI", async () => {
    const installed = await packAndInstall([toolkit, here], { reuseNativeBuilds: ["better-sqlite3"] });
    try {
      const bin = installed.path("@mcpforge/notes-status-server", "dist/cli.js");
      const { json } = await runInspector(
        { command: process.execPath, args: [bin, "--db", ":memory:"], env: { XDG_DATA_HOME: installed.dir } },
        ["--method", "tools/list"],
      );
      const names = (json as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort();
      expect(names).toEqual([
        "create_note",
        "delete_note",
        "get_next_available_slots",
        "get_note",
        "get_queue",
        "get_queue_slots",
        "list_notes",
        "list_tags",
        "schedule_notes",
        "set_queue_slots",
        "unschedule_note",
        "update_note",
      ]);
    } finally {
      rmSync(installed.dir, { recursive: true, force: true });
    }
  }, 240_000);
});
