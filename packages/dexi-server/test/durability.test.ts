import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../dist/bin/dexi.js", import.meta.url));
const FILES = 3000;
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

it("a writer killed with SIGKILL mid-import loses no acknowledged note; the database opens cleanly", async () => {
  const db = join(dir, "dexi.db");
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
      if (acked.size >= 600 && !child.killed) child.kill("SIGKILL");
    });
    child.on("exit", () => resolve());
  });
  await killed;
  expect(child.signalCode).toBe("SIGKILL");
  expect(acked.size).toBeGreaterThanOrEqual(600);
  expect(acked.size).toBeLessThan(FILES);

  const check = new Database(db);
  expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
  const ids = new Set(
    (check.prepare("SELECT uuid FROM notes").all() as { uuid: string }[]).map((r) => r.uuid),
  );
  for (const id of acked) expect(ids.has(id)).toBe(true);
  // Whole batches only: every stored note has its tags, vector and FTS entry.
  const partial = check
    .prepare(
      `SELECT count(*) AS c FROM notes n WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.note_id = n.id)
       OR NOT EXISTS (SELECT 1 FROM note_tags t WHERE t.note_id = n.id)`,
    )
    .get() as { c: number };
  expect(partial.c).toBe(0);
  expect(
    (
      check.prepare("SELECT count(*) AS c FROM notes_fts WHERE notes_fts MATCH 'lorem'").get() as {
        c: number;
      }
    ).c,
  ).toBe(ids.size);
  check.close();

  // Running the import again finishes the job without duplicates.
  const rerun = spawn(process.execPath, [CLI, "--db", db, "import", join(dir, "vault"), "--workers", "1"], {
    env: { ...process.env, DEXI_EMBEDDINGS: "hash" },
  });
  let out = "";
  rerun.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => rerun.on("exit", r));
  expect(code).toBe(0);
  expect(out).toContain(`${FILES - ids.size} created, 0 updated, ${ids.size} already imported`);
  const after = new Database(db);
  expect((after.prepare("SELECT count(*) AS c FROM notes").get() as { c: number }).c).toBe(FILES);
  after.close();
}, 120_000);
