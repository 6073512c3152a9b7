/**
 * A watch that cannot start closes its IMAP connection before it is retried. The failure is real:
 * another process holds cache.db's write lock (as a sqlite3 shell left in a transaction would)
 * while the daemon's cache starts, past the time its writes wait for it (100 ms here), so the
 * watch's first sync of INBOX cannot store anything.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isWatched } from "../src/cache/index.js";
import { type Config, parseConfig } from "../src/config.js";
import { CacheRunner } from "../src/daemon/cache-runner.js";
import { setSecret } from "../src/secrets.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";
import { configToml } from "../src/testing/mailenv.js";
import { SESSIONS_MS, sessionWaiter } from "./support/sessions.js";

let dv: Dovecot;
let dir: string;
let config: Config;

beforeAll(async () => {
  dv = await startDovecot({ users: [{ name: "alice", password: "alice-secret-pw" }] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-watch-leak-"));
  const all = parseConfig(configToml(dv, { cache: "background = true\nsync_interval_seconds = 3600" }));
  // Only alice's account: each watch start waits for the write lock (writeWaitMs) before it fails.
  config = { ...all, accounts: all.accounts.filter((a) => a.name === "work") };
  setSecret(path.join(dir, "secrets"), "work", "alice-secret-pw");
});
afterAll(async () => {
  await dv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const until = sessionWaiter(() => dv, "alice");

describe("a cache watch whose start fails", () => {
  it("closes its connection before each retry, and starts once the failure is gone", async () => {
    const failures: string[] = [];
    const runner = new CacheRunner(
      path.join(dir, "cache.db"),
      () => config,
      path.join(dir, "secrets"),
      (line) => {
        if (line.startsWith("cache watch of work failed")) failures.push(line);
      },
      { watchRetryMs: 50, writeWaitMs: 100 },
    );
    const other = new Database(path.join(dir, "cache.db"));
    let locked = true;
    try {
      other.exec("BEGIN IMMEDIATE");
      runner.start();
      await until("three failed watch starts", () => failures.length >= 3, 45_000);
      expect(failures[0]).toMatch(/failed/);
      // At most the attempt under way holds a connection; a leak leaves one per failed attempt.
      await until("at most one session", () => dv.sessionCount("alice") <= 1, SESSIONS_MS);
      expect(isWatched("work", "INBOX")).toBe(false);
      other.exec("COMMIT");
      locked = false;

      await until("the watch", () => isWatched("work", "INBOX"));
      await until("one session, the watch's", () => dv.sessionCount("alice") === 1, SESSIONS_MS);
      await dv.appendMessage(
        "alice",
        "INBOX",
        buildMessage({
          from: "Eve <eve@example.com>",
          to: ["alice@example.com"],
          subject: "After the lock",
          date: new Date(),
          messageId: "<leak1@example.com>",
          text: "hi\n",
        }),
      );
      const inbox = () => runner.status(["work"]).accounts[0]?.folders.find((f) => f.name === "INBOX");
      await until("the watch's sync of the new message", () => inbox()?.messages === 1);
      expect(inbox()).toMatchObject({ watching: true, watch_error: null });
    } finally {
      if (locked) other.exec("COMMIT");
      other.close();
      await runner.stop();
    }
    await until("no session after stop", () => dv.sessionCount("alice") === 0, SESSIONS_MS);
  }, 90_000);
});
