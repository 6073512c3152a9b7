/**
 * The built server killed with SIGKILL in the middle of a stream of writes: every note whose
 * create_note was answered is there afterwards, the database passes integrity_check (SQLite), and the
 * counts the triggers keep still equal the rows (no write was half applied). On both stores.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { freshStore, inspectStore, tempDir } from "./helpers.js";

const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));
const WRITES = 3000;

it("a server killed with SIGKILL mid-stream keeps every acknowledged note and consistent counts", async () => {
  const dir = tempDir("notes-kill");
  try {
    const db = await freshStore(dir.path);
    const child = spawn(process.execPath, [CLI, "--db", db, "--no-scheduler"], {
      env: { ...process.env, XDG_DATA_HOME: join(dir.path, "xdg") },
      stdio: ["pipe", "pipe", "ignore"],
    });
    const send = (msg: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...msg })}\n`);
    child.stdin.on("error", () => undefined); // writes after the kill
    const acked = new Set<string>();
    let buf = "";
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    child.stdout.on("data", (chunk: Buffer) => {
      buf += chunk.toString("utf8");
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const msg = JSON.parse(buf.slice(0, nl)) as {
          id?: number;
          result?: { structuredContent?: { note?: { id: string } } };
        };
        buf = buf.slice(nl + 1);
        const id = msg.result?.structuredContent?.note?.id;
        if (id) acked.add(id);
      }
      if (acked.size >= 500 && child.signalCode === null) child.kill("SIGKILL");
    });
    send({
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "kill", version: "0" } },
    });
    send({ method: "notifications/initialized" });
    for (let i = 1; i <= WRITES; i++) {
      send({
        id: i,
        method: "tools/call",
        params: {
          name: "create_note",
          arguments: {
            content: `note ${i} ${"words ".repeat(30)}`,
            tags: [`t${i % 7}`, "all"],
            status: "ready",
          },
        },
      });
    }
    await exited;
    expect(child.signalCode).toBe("SIGKILL");
    expect(acked.size).toBeGreaterThanOrEqual(500);
    expect(acked.size).toBeLessThan(WRITES);

    const check = await inspectStore(db);
    try {
      expect(await check.integrity()).toBe("ok");
      const ids = new Set((await check.all<{ id: string }>("SELECT id FROM notes")).map((r) => r.id));
      for (const id of acked) expect(ids.has(id)).toBe(true);
      // Each note's two tags went in with it, and the kept counts match the rows.
      const count = async (sql: string) => Number((await check.all<{ n: number }>(sql))[0]?.n);
      expect(await count("SELECT count(*) AS n FROM note_tags")).toBe(2 * ids.size);
      expect(await count("SELECT n FROM note_counts WHERE tag = '' AND status = ''")).toBe(ids.size);
      expect(await count("SELECT n FROM note_counts WHERE tag = 'all' AND status = 'ready'")).toBe(ids.size);
    } finally {
      await check.close();
    }
  } finally {
    dir.cleanup();
  }
});
