import Database from "better-sqlite3";

/** Resolves once another connection holds the SQLite file's write lock (a writer thread's transaction). */
export async function lockTaken(file: string): Promise<void> {
  const probe = new Database(file);
  probe.pragma("busy_timeout = 0");
  try {
    for (;;) {
      try {
        probe.exec("BEGIN IMMEDIATE");
        probe.exec("ROLLBACK");
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    probe.close();
  }
}
