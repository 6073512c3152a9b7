import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serverVersionOfCopy } from "@mcpforge/toolkit/testing";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "notes-status-version-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the notes-status bin's serverInfo.version", () => {
  it("is its package.json's version, in both eras", async () => {
    const reported = await serverVersionOfCopy({
      packageDir: fileURLToPath(new URL("..", import.meta.url)),
      bin: "bin/notes-status-mcp.js",
      args: ["--db", join(dir, "data.db"), "--no-scheduler"],
      env: { NOTES_STATUS_OUTBOX: join(dir, "outbox.jsonl"), XDG_DATA_HOME: join(dir, "xdg") },
    });
    expect(reported).toEqual({ legacy: "9.9.9-test", modern: "9.9.9-test" });
  }, 60_000);
});
