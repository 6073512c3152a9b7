/**
 * The throwaway PostgreSQL: it starts on 127.0.0.1, hands out separate databases, and leaves nothing
 * behind, neither after stop() nor when the process that started it is killed outright.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { POSTGRES_BIN_DIR, startPostgres } from "../src/testing/postgres.js";

const run = promisify(execFile);
const psql = (url: string, sql: string) =>
  run(join(POSTGRES_BIN_DIR, "psql"), [url, "-XAtq", "-c", sql]).then((r) => r.stdout.trim());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

it("starts PostgreSQL 15 on loopback, creates separate databases, and removes everything on stop", async () => {
  const pg = await startPostgres();
  try {
    expect(pg.host).toBe("127.0.0.1");
    expect(pg.port).toBeGreaterThan(1024);
    expect(await psql(pg.url, "SHOW server_version_num")).toMatch(/^15\d{4}$/);
    expect(await psql(pg.url, "SHOW listen_addresses")).toBe("127.0.0.1");
    const a = await pg.createDatabase();
    const b = await pg.createDatabase();
    expect(a).not.toBe(b);
    await psql(a, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
    expect(await psql(a, "SELECT count(*) FROM t")).toBe("1");
    await expect(psql(b, "SELECT count(*) FROM t")).rejects.toThrow(/does not exist/);
  } finally {
    await pg.stop();
  }
  expect(existsSync(pg.dir)).toBe(false);
  await expect(psql(pg.url, "SELECT 1")).rejects.toThrow();
  await pg.stop(); // twice is fine
});

it("a test process killed with SIGKILL leaves no server and no temp dir behind", async () => {
  // A child process starts a server, reports it, and is then killed before it can clean up. It runs
  // the built kit (plain Node cannot load the TypeScript source).
  const harness = new URL("../dist/testing/index.js", import.meta.url).href;
  const code = `import { startPostgres } from ${JSON.stringify(harness)};
    const pg = await startPostgres();
    const pid = Number((await import("node:fs")).readFileSync(pg.dir + "/data/postmaster.pid", "utf8").split("\\n")[0]);
    process.stdout.write(JSON.stringify({ dir: pg.dir, pid }) + "\\n");
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      if (buf.includes("\n")) resolve(buf.split("\n")[0]!);
    });
    child.once("exit", (c) => reject(new Error(`harness child exited with ${c}`)));
  });
  const { dir, pid } = JSON.parse(line) as { dir: string; pid: number };
  expect(alive(pid)).toBe(true);
  child.kill("SIGKILL");
  expect(await until(() => !alive(pid), 10_000)).toBe(true);
  expect(await until(() => !existsSync(dir), 10_000)).toBe(true);
}, 60_000);
