import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

/** Where the built bench bins live: next to the built run.js. */
export interface Bins {
  dir: string;
}

export type Side = "kit" | "sdk";

export const binOf = (bins: Bins, side: Side) =>
  join(bins.dir, side === "kit" ? "kit-server.js" : "sdk-server.js");

export interface Spawned {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts a node script and waits for the `listening on URL` line it writes to stderr. */
export function spawnListening(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<Spawned> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => fail(new Error(`${script} did not start within 15 s:\n${err}`)), 15_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(e);
    };
    child.once("exit", (code) => fail(new Error(`${script} exited (${code}) before listening:\n${err}`)));
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      err += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      // Keep draining stderr so a chatty server never blocks on a full pipe.
      child.stderr!.removeAllListeners("data");
      child.stderr!.resume();
      resolve({ url: m[1]!, pid: child.pid!, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill("SIGKILL"), 3_000);
    child.once("exit", () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * An HTTP bench server of one side: the kit's needs its bearer token (in its environment, never in
 * argv), the baseline checks none.
 */
export function spawnHttpServer(bins: Bins, side: Side, token: string): Promise<Spawned> {
  return spawnListening(
    binOf(bins, side),
    ["--http", "127.0.0.1:0"],
    side === "kit" ? { MCP_HTTP_TOKEN: token } : {},
  );
}
