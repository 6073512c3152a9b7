/**
 * Two notes-status processes on one store (a SQLite file, or one PostgreSQL database) behind a plain
 * round-robin proxy: a 2026-07-28 client's calls land on both instances in turn and read as one server
 * (what a note written through one instance is, the other returns at once).
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectHttp, type RoundRobinProxy, roundRobinProxy, startHttpBin } from "@mcpforge/toolkit/testing";
import { afterAll, expect, it } from "vitest";
import { freshStore } from "./helpers.js";

const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "notes-scale-"));
const children: ChildProcess[] = [];
let proxy: RoundRobinProxy | undefined;
afterAll(async () => {
  await proxy?.close();
  for (const c of children) c.kill();
  rmSync(dir, { recursive: true, force: true });
});

it("serves one client's sequence of calls from two instances on one database", async () => {
  const db = await freshStore(dir);
  const spawnSpec = { command: process.execPath, args: [CLI, "--db", db, "--no-scheduler"] };
  const a = await startHttpBin(spawnSpec, "shared-token");
  const b = await startHttpBin(spawnSpec, "shared-token");
  children.push(a.child, b.child);
  proxy = await roundRobinProxy([a.url, b.url]);
  const { client, close } = await connectHttp(proxy.url, "shared-token", { era: "modern" });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const created = await client.callTool({
      name: "create_note",
      arguments: { content: `note ${i}`, status: "draft" },
    });
    expect(created.isError).toBeFalsy();
    const id = (created.structuredContent as { note: { id: string } }).note.id;
    ids.push(id);
    // The next request goes to the other instance: the note is there at once.
    const read = await client.callTool({ name: "get_note", arguments: { id } });
    expect((read.structuredContent as { note: { content: string } }).note.content).toBe(`note ${i}`);
  }
  const listed = await client.callTool({ name: "list_notes", arguments: { limit: 50 } });
  expect((listed.structuredContent as { total: number }).total).toBe(6);
  await close();
  // Both instances answered tools/call requests, alternately.
  expect(new Set(proxy.served)).toEqual(new Set([0, 1]));
  expect(proxy.served.filter((i) => i === 0).length).toBeGreaterThan(5);
  expect(proxy.served.filter((i) => i === 1).length).toBeGreaterThan(5);
}, 60_000);
