/**
 * A test run killed with SIGKILL never stops its Dovecots: the next start reaps them (master and
 * children killed, temp dir removed), and leaves alone the Dovecots of processes still alive.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type Dovecot, reapOrphanedDovecots, startDovecot } from "../src/testing/dovecot.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const TESTING = pathToFileURL(path.join(pkg, "dist", "testing", "index.js")).href;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A process that starts a Dovecot, says where, and waits to be killed. */
function orphanMaker(): Promise<{ child: ReturnType<typeof spawn>; dir: string }> {
  const script = `import { startDovecot } from ${JSON.stringify(TESTING)};
const dv = await startDovecot({ users: [{ name: "u", password: "p" }] });
console.log(dv.dir);
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      if (out.includes("\n")) resolve({ child, dir: out.trim() });
    });
    child.once("exit", (code) => reject(new Error(`the orphan maker exited with ${code}`)));
  });
}

let mine: Dovecot | undefined;
afterAll(async () => {
  await mine?.stop();
});

describe("orphaned test Dovecots", () => {
  it("are reaped at the next start when the process that started them was killed", async () => {
    const { child, dir } = await orphanMaker();
    const { master } = JSON.parse(fs.readFileSync(path.join(dir, "owner.json"), "utf8")) as {
      master: number;
    };
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    // The killed process's exit handler never ran: its Dovecot lives on.
    expect(alive(master)).toBe(true);

    // A Dovecot whose owner (this process) lives is left alone.
    mine = await startDovecot({ users: [{ name: "v", password: "q" }] });
    for (let i = 0; i < 40 && alive(master); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(master)).toBe(false);
    expect(fs.existsSync(dir)).toBe(false);
    expect(reapOrphanedDovecots()).toBe(0);
    expect(fs.existsSync(mine.dir)).toBe(true);
    const imap = await mine.connect("v");
    await imap.logout();
  });
});
