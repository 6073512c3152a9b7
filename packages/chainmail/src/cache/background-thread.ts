// The cache's worker threads (the header writer, the checkpoint copier, the index rebuild) do work
// nobody waits for from one moment to the next; the daemon's own thread answers searches. On two
// cores a first sync keeps both busy (the writer, Dovecot, the daemon's thread parsing the next
// FETCH, the checkpoint copy), and a search then waited for a core behind the workers: p95 25 ms
// through MCP during the header sync of a million (issue 34: 20). Linux schedules each thread on
// its own and takes a nice value per thread (setpriority(2) with a thread id), so each worker lowers
// its own priority when it starts: it still gets every core nobody else wants, and yields at once
// to the daemon's thread, the MCP server and their client when a search comes.

/** The workers' nice value (the daemon's threads keep theirs, 0 by default). */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread's scheduling priority to `nice` (Linux: /proc/thread-self names the
 * thread's id, which setpriority takes). Elsewhere, or when the system refuses, nothing changes:
 * the thread runs as before. Self-contained (its modules are parameters), because the eval'd
 * workers run its source (`LOWER_PRIORITY_JS`).
 */
export function lowerThreadPriority(
  fs: { readlinkSync(path: string): string },
  os: { setPriority(pid: number, priority: number): void },
  nice: number,
): boolean {
  if (process.env.CHAINMAIL_BACKGROUND_NICE === "0") return false;
  try {
    const tid = Number(fs.readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    os.setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

/** The same, as a statement for the workers given as source (`new Worker(code, { eval: true })`). */
export const LOWER_PRIORITY_JS = `(${lowerThreadPriority.toString()})(require("node:fs"), require("node:os"), ${BACKGROUND_NICE});`;
