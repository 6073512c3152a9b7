// What a connection's close() must do first. The cache's workers (the WAL checkpoints, ./checkpoint.ts;
// the header writer, ./writer.ts; the index rebuild, ./repack.ts) each hold a connection of their own
// to cache.db, and each must be closed before the daemon's: the last connection to close removes the
// WAL and the shared-memory file, and nothing may write cache.db once close() returned. Each worker
// registers here how to stop it and wait (bounded) for its connection; close() runs them once, the
// latest registered first, then closes the connection even when one of them threw.
import type Database from "better-sqlite3";

const hooks = new WeakMap<Database.Database, (() => void)[]>();

export function beforeClose(db: Database.Database, hook: () => void): void {
  let list = hooks.get(db);
  if (!list) {
    const registered: (() => void)[] = [];
    list = registered;
    hooks.set(db, registered);
    const close = db.close.bind(db);
    db.close = () => {
      let failure: unknown;
      for (const run of registered.splice(0).reverse()) {
        try {
          run();
        } catch (e) {
          failure ??= e;
        }
      }
      const closed = close();
      if (failure !== undefined) throw failure;
      return closed;
    };
  }
  list.push(hook);
}
