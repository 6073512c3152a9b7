import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { BACKGROUND_NICE, LOWER_PRIORITY_JS, lowerThreadPriority } from "../src/cache/background-thread.js";
import { ftsUpkeep } from "../src/cache/fts.js";
import { openCache } from "../src/cache/index.js";

// (Linux: a thread's nice value is field 19 of /proc/self/task/<tid>/stat)
const niceOf = (tid: number | string) =>
  Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1]?.split(" ")[16]);
const threadNices = () => new Map(fs.readdirSync("/proc/self/task").map((t) => [t, niceOf(t)]));
const thisThread = () => fs.readlinkSync("/proc/thread-self").split("/").pop() as string;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("the cache's worker threads", () => {
  it("run below the thread that answers searches, and leave its priority as it was", async () => {
    const mine = niceOf(thisThread());
    // (a process started niced already cannot go back up to 10: the worker keeps the process's)
    const expected = Math.max(BACKGROUND_NICE, mine);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-nice-"));
    dirs.push(dir);
    const db = openCache(path.join(dir, "cache.db"));
    const add = db.prepare("INSERT INTO messages_fts (rowid, subject, body) VALUES (?, ?, ?)");
    for (let i = 1; i <= 40; i++) add.run(i, `subject ${i}`, `body ${i} budget`);
    const before = threadNices();
    // The writer's thread, started for the merging these segments call for
    await ftsUpkeep(db, { offThread: true });
    const started = [...threadNices()].filter(([tid]) => !before.has(tid));
    expect(started.some(([, nice]) => nice === expected)).toBe(true);
    expect(niceOf(thisThread())).toBe(mine);
    db.close();
  });

  it("given as source (the checkpoint worker's), lower their own thread's priority too", async () => {
    const mine = niceOf(thisThread());
    const worker = new Worker(
      `${LOWER_PRIORITY_JS}
       const { parentPort } = require("node:worker_threads");
       parentPort.postMessage(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop());
       parentPort.once("message", () => process.exit(0));`,
      { eval: true },
    );
    const tid = await new Promise<string>((resolve) => worker.once("message", resolve));
    expect(niceOf(tid)).toBe(Math.max(BACKGROUND_NICE, mine));
    worker.postMessage("done");
    await new Promise((resolve) => worker.once("exit", resolve));
    expect(niceOf(thisThread())).toBe(mine);
  });

  it("are left at the daemon's priority with CHAINMAIL_BACKGROUND_NICE=0", () => {
    const calls: number[] = [];
    const os = { setPriority: (_pid: number, nice: number) => void calls.push(nice) };
    process.env.CHAINMAIL_BACKGROUND_NICE = "0";
    try {
      expect(lowerThreadPriority(fs, os, BACKGROUND_NICE)).toBe(false);
    } finally {
      delete process.env.CHAINMAIL_BACKGROUND_NICE;
    }
    expect(calls).toEqual([]);
    expect(lowerThreadPriority(fs, os, BACKGROUND_NICE)).toBe(true);
    expect(calls).toEqual([BACKGROUND_NICE]);
  });
});
