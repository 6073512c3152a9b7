import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import { DaemonClient } from "../client/index.js";

/**
 * Waits until a daemon started as a child process answers a ping on its socket. The socket's file
 * alone is not enough: it appears at bind, a moment before the daemon listens (a loaded CI machine
 * has connected in between and been refused), and a dead daemon's file stays behind. Up to 30 s by
 * default: a loaded two-core machine has taken more than 10 s to start node and open the stores.
 */
export async function waitForDaemon(
  socketPath: string,
  opts: { child?: ChildProcess; timeoutMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last = "its socket never appeared";
  while (Date.now() < deadline) {
    const child = opts.child;
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new Error(`the daemon exited (${child.exitCode ?? child.signalCode}) before it answered`);
    if (fs.existsSync(socketPath)) {
      const client = new DaemonClient({ socketPath, client: "cli" });
      try {
        await client.ping();
        return;
      } catch (err) {
        last = (err as Error).message;
      } finally {
        client.close();
      }
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the daemon did not answer at ${socketPath}: ${last}`);
}
