/**
 * A sync that cannot have cache.db's write lock within the wait (another program holds it past
 * `writeWaitMs`, 300 ms here, 30 s in the daemon) is reported as not done (CONFLICT), with nothing
 * of it written: no message rows, no FTS rows, the folder's sync state as it was, so the next pass
 * syncs the same mail whole. A watch whose sync met the lock so tries again by itself, with no news
 * from the server to prompt it. The daemon's stop ends a write waiting for the lock.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { isWatched } from "../src/cache/index.js";
import { type Config, parseConfig } from "../src/config.js";
import { CacheRunner } from "../src/daemon/cache-runner.js";
import { setSecret } from "../src/secrets.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";
import { configToml } from "../src/testing/mailenv.js";

let dv: Dovecot;
let dir: string;
const runners: CacheRunner[] = [];

const msg = (n: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `ledger ${n}`,
    date: new Date("2026-03-01T10:00:00Z"),
    messageId: `<ledger-${n}@example.com>`,
    text: `the ledger of ${n}\n`,
  });

function runnerFor(
  name: string,
  cache: string,
  writeWaitMs = 300,
): { runner: CacheRunner; file: string; config: Config } {
  const all = parseConfig(configToml(dv, { cache }));
  const config = { ...all, accounts: all.accounts.filter((a) => a.name === "work") };
  const file = path.join(dir, `${name}.db`);
  const runner = new CacheRunner(
    file,
    () => config,
    path.join(dir, "secrets"),
    () => undefined,
    {
      writeWaitMs,
      watchRetryMs: 60_000,
    },
  );
  runners.push(runner);
  return { runner, file, config };
}

/** What cache.db holds of the work account, read by a connection of its own. */
function held(file: string) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const n = (sql: string) => db.prepare(sql).pluck().get() as number;
    return {
      messages: n("SELECT count(*) FROM messages WHERE account = 'work'"),
      fts: db
        .prepare("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'ledger' ORDER BY rowid")
        .pluck()
        .all(),
      ids: db.prepare("SELECT id FROM messages WHERE account = 'work' ORDER BY id").pluck().all(),
      inbox: db
        .prepare(
          "SELECT uidnext, highestmodseq, last_sync, complete FROM folders WHERE account = 'work' AND path = 'INBOX'",
        )
        .get(),
    };
  } finally {
    db.close();
  }
}

function holdWriteLock(file: string): () => void {
  const other = new Database(file);
  other.exec("BEGIN IMMEDIATE");
  return () => {
    other.exec("ROLLBACK");
    other.close();
  };
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  dv = await startDovecot({ users: [{ name: "alice", password: "alice-secret-pw" }] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-busy-pass-"));
  setSecret(path.join(dir, "secrets"), "work", "alice-secret-pw");
  await dv.appendMessage("alice", "INBOX", msg("one"));
  await dv.appendMessage("alice", "INBOX", msg("two"));
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
});
afterAll(async () => {
  await dv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a pass whose writes meet cache.db's write lock taken past the wait", () => {
  it("reports CONFLICT with nothing written, and the next pass syncs the mail whole", async () => {
    const { runner, file, config } = runnerFor("pass", "background = false");
    const account = config.accounts[0]!;
    expect(await runner.sync(account)).toMatchObject({ ok: true, added: 2 });
    const before = held(file);
    expect(before.messages).toBe(2);

    await dv.appendMessage("alice", "INBOX", msg("three"));
    const release = holdWriteLock(file);
    let report: Awaited<ReturnType<CacheRunner["sync"]>>;
    try {
      report = await runner.sync(account);
    } finally {
      release();
    }
    expect(report).toMatchObject({ ok: false, added: 0, error: { reason: "CONFLICT" } });
    expect(report.error?.message).toMatch(/write lock/);
    // Nothing of the pass: no row, no FTS row, the folder's state as before
    expect(held(file)).toEqual(before);

    expect(await runner.sync(account)).toMatchObject({ ok: true, added: 1 });
    const after = held(file);
    expect(after.messages).toBe(3);
    expect(after.fts).toEqual(after.ids);
    expect(after.inbox).toMatchObject({ complete: 1 });
  });

  it("a watch's sync: tried again by the watch once the lock is free, with no news from the server", async () => {
    const { runner, file } = runnerFor("watch", "background = true\nsync_interval_seconds = 3600");
    runner.start();
    const inbox = () => runner.status(["work"]).accounts[0]?.folders.find((f) => f.name === "INBOX");
    await until("the watch", () => isWatched("work", "INBOX") && inbox()?.complete === true);
    expect(inbox()).toMatchObject({ watching: true, watch_error: null });
    const n = held(file).messages;
    expect(n).toBeGreaterThanOrEqual(2);

    const release = holdWriteLock(file);
    try {
      await dv.appendMessage("alice", "INBOX", msg("four"));
      await until("the watch's failed sync", () => inbox()?.watch_error != null);
      expect(inbox()?.watch_error).toMatch(/busy/);
      expect(held(file).messages).toBe(n);
    } finally {
      release();
    }
    await until("the new mail, synced by the watch's retry", () => held(file).messages === n + 1);
    const after = held(file);
    expect(after.fts).toEqual(after.ids);
    await until("the watch healthy again", () => inbox()?.watch_error === null);
  });

  it("the daemon's stop ends a pass waiting for the lock (reported not done) instead of waiting for it", async () => {
    // (a wait longer than this test's time: only the stop can end it)
    const { runner, file, config } = runnerFor("stop", "background = false", 120_000);
    const account = config.accounts[0]!;
    expect(await runner.sync(account)).toMatchObject({ ok: true });
    const release = holdWriteLock(file);
    try {
      const pass = runner.sync(account);
      // (the pass reaches its first write, which waits)
      await new Promise((r) => setTimeout(r, 500));
      runners.splice(runners.indexOf(runner), 1);
      await runner.stop();
      expect(await pass).toMatchObject({ ok: false, error: { reason: "CONFLICT" } });
    } finally {
      release();
    }
  }, 30_000);
});
