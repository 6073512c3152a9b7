import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { newClient } from "@mcpforge/toolkit/testing";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshLocation, inspectStore, STORE } from "./stores.js";

const CLI = fileURLToPath(new URL("../dist/bin/dexi.js", import.meta.url));
const MCP = fileURLToPath(new URL("../dist/bin/dexi-mcp.js", import.meta.url));
// Half the vault on PostgreSQL, where each note is a few round trips: the kill still lands mid-import
// (a fifth of the way in), and the run stays within CI's time.
const FILES = STORE === "sqlite" ? 3000 : 1500;
const KILL_AFTER = FILES / 5;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dexi-kill-"));
  const vault = join(dir, "vault");
  for (let f = 0; f < 10; f++) mkdirSync(join(vault, `folder${f}`), { recursive: true });
  for (let i = 0; i < FILES; i++) {
    writeFileSync(
      join(vault, `folder${i % 10}`, `note${i}.md`),
      `---\ntitle: Note ${i}\n---\nBody of note ${i} #tag${i % 7} ${"lorem ipsum ".repeat(20)}\n`,
    );
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a writer killed with SIGKILL mid-import loses no acknowledged note; the store opens cleanly", async () => {
  const db = await freshLocation(dir);
  const child = spawn(
    process.execPath,
    [CLI, "--db", db, "import", join(dir, "vault"), "--verbose", "--workers", "1"],
    {
      env: { ...process.env, DEXI_EMBEDDINGS: "hash" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const acked = new Set<string>();
  let buf = "";
  const killed = new Promise<void>((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buf += chunk.toString();
      const lines = buf.split("\n");
      buf = lines.pop()!;
      for (const line of lines) {
        const m = /^created (\S+) /.exec(line);
        if (m) acked.add(m[1]!);
      }
      if (acked.size >= KILL_AFTER && !child.killed) child.kill("SIGKILL");
    });
    child.on("exit", () => resolve());
  });
  await killed;
  expect(child.signalCode).toBe("SIGKILL");
  expect(acked.size).toBeGreaterThanOrEqual(KILL_AFTER);
  expect(acked.size).toBeLessThan(FILES);

  const check = await inspectStore(db);
  expect(await check.integrity()).toBe("ok");
  const ids = new Set((await check.all<{ uuid: string }>("SELECT uuid FROM notes")).map((r) => r.uuid));
  for (const id of acked) expect(ids.has(id)).toBe(true);
  // Whole batches only: every stored note has its tags, vector and full-text entry.
  const [partial] = await check.all<{ c: number }>(
    `SELECT count(*) AS c FROM notes n WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.note_id = n.id)
     OR NOT EXISTS (SELECT 1 FROM note_tags t WHERE t.note_id = n.id)`,
  );
  expect(partial!.c).toBe(0);
  const [indexed] = await check.all<{ c: number }>(
    STORE === "sqlite"
      ? "SELECT count(*) AS c FROM notes_fts WHERE notes_fts MATCH 'lorem'"
      : "SELECT count(*) AS c FROM notes WHERE fts @@ plainto_tsquery('dexi', 'lorem')",
  );
  expect(indexed!.c).toBe(ids.size);
  await check.close();

  // Running the import again finishes the job without duplicates.
  const rerun = spawn(process.execPath, [CLI, "--db", db, "import", join(dir, "vault"), "--workers", "1"], {
    env: { ...process.env, DEXI_EMBEDDINGS: "hash" },
  });
  let out = "";
  rerun.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => rerun.on("exit", r));
  expect(code).toBe(0);
  expect(out).toContain(`${FILES - ids.size} created, 0 updated, ${ids.size} already imported`);
  const after = await inspectStore(db);
  expect((await after.all<{ c: number }>("SELECT count(*) AS c FROM notes"))[0]!.c).toBe(FILES);
  await after.close();
}, 120_000);

it("a dexi-mcp killed with SIGKILL amid create_note calls loses no note it acknowledged", async () => {
  const db = await freshLocation(dir);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP, "--db", db, "--user", "ann"],
    env: { ...(process.env as Record<string, string>), DEXI_EMBEDDINGS: "hash" },
    stderr: "pipe",
  });
  const client = newClient();
  await client.connect(transport);
  const pid = transport.pid!;
  const acknowledged: string[] = [];
  const write = async (i: number) => {
    const title = `burst ${i}`;
    try {
      const r = await client.callTool({ name: "create_note", arguments: { title, text: "burst #b" } });
      if (!r.isError) acknowledged.push(title);
    } catch {
      // cut off by the kill: not acknowledged
    }
  };
  await Promise.all(Array.from({ length: 10 }, (_, i) => write(i)));
  // Killed 5 ms after the other 50 calls are sent, while the server works through them (a few
  // done, if any, the rest queued). Killing on the 10th answer of 60 sent at once raced the
  // server: when the client read the answers in one batch, all 60 were done by the time the kill
  // landed.
  const rest = Array.from({ length: 50 }, (_, k) => write(10 + k));
  await new Promise((r) => setTimeout(r, 5));
  process.kill(pid, "SIGKILL");
  await Promise.all(rest);
  await client.close().catch(() => undefined);
  // The server is gone (signal 0 only checks that a process exists).
  expect(() => process.kill(pid, 0)).toThrow();
  expect(acknowledged.length).toBeGreaterThanOrEqual(10);
  expect(acknowledged.length).toBeLessThan(60);
  const check = await inspectStore(db);
  expect(await check.integrity()).toBe("ok");
  const titles = new Set((await check.all<{ title: string }>("SELECT title FROM notes")).map((r) => r.title));
  await check.close();
  expect(acknowledged.filter((t) => !titles.has(t))).toEqual([]);
}, 60_000);
